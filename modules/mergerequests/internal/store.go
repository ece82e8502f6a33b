package internal

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The states of a merge request in GitLab 9.x: a reopened one is
// "reopened" until closed or merged again (the opened filter matches both);
// "locked" while its merge is being made.
const (
	StateOpened   = "opened"
	StateReopened = "reopened"
	StateClosed   = "closed"
	StateMerged   = "merged"
	StateLocked   = "locked"
)

// The merge statuses.
const (
	StatusUnchecked = "unchecked"
	StatusCan       = "can_be_merged"
	StatusCannot    = "cannot_be_merged"
)

// MR is one stored merge request; ProjectID is its target project.
type MR struct {
	ID              int64   `json:"id"`
	ProjectID       int64   `json:"project_id"`
	IID             int64   `json:"iid"`
	SourceProjectID int64   `json:"source_project_id"`
	SourceBranch    string  `json:"source_branch"`
	TargetBranch    string  `json:"target_branch"`
	Title           string  `json:"title"`
	Description     string  `json:"description"`
	State           string  `json:"state"`
	AuthorID        int64   `json:"author_id"`
	AssigneeID      int64   `json:"assignee_id,omitempty"`
	LabelIDs        []int64 `json:"label_ids,omitempty"`
	MilestoneID     int64   `json:"milestone_id,omitempty"`
	// SHA is the source branch's head; TargetSHA the target's head when
	// MergeStatus was computed (or reset).
	SHA         string `json:"sha"`
	TargetSHA   string `json:"target_sha"`
	MergeStatus string `json:"merge_status"`
	// ForceRemoveSource is remove_source_branch of create/update;
	// ShouldRemoveSource should_remove_source_branch of the merge.
	ForceRemoveSource  bool `json:"force_remove_source,omitempty"`
	ShouldRemoveSource bool `json:"should_remove_source,omitempty"`
	// The intent of merge when pipeline succeeds: who asked, with which
	// message.
	MergeWhenPipeline bool   `json:"mwps,omitempty"`
	MergeUserID       int64  `json:"merge_user_id,omitempty"`
	MergeMessage      string `json:"merge_message,omitempty"`

	// While locked: the state to go back to and who is merging, so that a
	// merge cut short by a crash can be finished or undone at start.
	PriorState string `json:"prior_state,omitempty"`
	LockedByID int64  `json:"locked_by_id,omitempty"`
	// LockedNode is the node making the merge (fennec.Node): while it
	// lives the merge is its own, and no other node's recovery undoes it.
	LockedNode string `json:"locked_node,omitempty"`

	MergeCommitSHA string     `json:"merge_commit_sha,omitempty"`
	MergedByID     int64      `json:"merged_by_id,omitempty"`
	MergedAt       *time.Time `json:"merged_at,omitempty"`
	Deleted        bool       `json:"deleted,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

func (m *MR) RecordID() int64      { return m.ID }
func (m *MR) SetRecordID(id int64) { m.ID = id }

// Open says whether the merge request counts as open (opened, reopened,
// locked).
func (m *MR) Open() bool {
	return m.State == StateOpened || m.State == StateReopened || m.State == StateLocked
}

func branchKey(project int64, branch string) string { return store.IDString(project) + "/" + branch }

// Only live merge requests are indexed by branch and sha: pushes look for
// the open ones, creation for a duplicate.
var mrs = store.NewTable[int64, MR]("mergerequests.merge_requests",
	store.Index[MR]{Name: "iid", Unique: true, Keys: func(m *MR) []string { return []string{store.IDString(m.ProjectID) + "/" + store.IDString(m.IID)} }},
	store.Index[MR]{Name: "source", Keys: func(m *MR) []string {
		if !m.Open() || m.Deleted {
			return nil
		}
		return []string{branchKey(m.SourceProjectID, m.SourceBranch)}
	}},
	store.Index[MR]{Name: "target", Keys: func(m *MR) []string {
		if !m.Open() || m.Deleted {
			return nil
		}
		return []string{branchKey(m.ProjectID, m.TargetBranch)}
	}},
	store.Index[MR]{Name: "sha", Keys: func(m *MR) []string {
		if !m.MergeWhenPipeline || !m.Open() || m.Deleted {
			return nil
		}
		return []string{store.IDString(m.SourceProjectID) + "/" + m.SHA}
	}},
	// The few merge requests locked by a merge in progress: the start's
	// recovery (recover.go) reads them without walking every row.
	store.Index[MR]{Name: "locked", Keys: func(m *MR) []string {
		if m.State != StateLocked || m.Deleted {
			return nil
		}
		return []string{lockedKey}
	}},
	// The list filters (listfilter.go) read the merge requests a filter
	// keeps from these, never every row: a project's merge requests by
	// author and by assignee (project/user), every merge request of a
	// label or a milestone (its id), and, for "Any" and "None", a
	// project's merge requests that have labels, a milestone, an assignee
	// (project/l, /m, /a).
	store.Index[MR]{Name: "author", Keys: func(m *MR) []string {
		if m.Deleted {
			return nil
		}
		return []string{projectUserKey(m.ProjectID, m.AuthorID)}
	}},
	store.Index[MR]{Name: "assignee", Keys: func(m *MR) []string {
		if m.Deleted || m.AssigneeID == 0 {
			return nil
		}
		return []string{projectUserKey(m.ProjectID, m.AssigneeID)}
	}},
	store.Index[MR]{Name: "label", Keys: func(m *MR) []string {
		if m.Deleted {
			return nil
		}
		out := make([]string, len(m.LabelIDs))
		for n, l := range m.LabelIDs {
			out[n] = store.IDString(l)
		}
		return out
	}},
	store.Index[MR]{Name: "milestone", Keys: func(m *MR) []string {
		if m.Deleted || m.MilestoneID == 0 {
			return nil
		}
		return []string{store.IDString(m.MilestoneID)}
	}},
	store.Index[MR]{Name: "has", Keys: func(m *MR) []string {
		if m.Deleted {
			return nil
		}
		var out []string
		if len(m.LabelIDs) > 0 {
			out = append(out, hasKey(m.ProjectID, hasLabels))
		}
		if m.MilestoneID != 0 {
			out = append(out, hasKey(m.ProjectID, hasMilestone))
		}
		if m.AssigneeID != 0 {
			out = append(out, hasKey(m.ProjectID, hasAssignee))
		}
		return out
	}},
	// A list's search looks in the title and the description, through
	// their trigrams (store.Search).
	store.Index[MR]{Name: "search", Search: true, Keys: func(m *MR) []string {
		if m.Deleted {
			return nil
		}
		return []string{m.Title, m.Description}
	}},
)

// filterIndexes are the indexes migration 4 built for the list filters.
var filterIndexes = []string{"author", "assignee", "label", "milestone", "has", "search"}

func projectUserKey(project, user int64) string {
	return store.IDString(project) + "/" + store.IDString(user)
}

// What a merge request has, in the "has" index.
const (
	hasLabels    = "l"
	hasMilestone = "m"
	hasAssignee  = "a"
)

func hasKey(project int64, what string) string { return store.IDString(project) + "/" + what }

// lockedKey is the one key of the "locked" index.
const lockedKey = "locked"

// Buckets of our own, in the tables' transactions:
//
// byCreated and byUpdated order a project's merge requests by time (key
// project id ++ unix nanoseconds ++ id, big-endian; value one state byte),
// so a page is a walk over keys and the state filter reads no record.
//
// sequences holds each project's last iid.
//
// A commit's pipeline is not kept here: the view and merge when pipeline
// succeeds ask CI (cicd.Pipelines). Stores from before version 2 had a copy
// of each commit's last pipeline in "mergerequests.pipelines"; migration 2
// drops it.
var (
	byCreated = store.Keys("mergerequests.by_created")
	byUpdated = store.Keys("mergerequests.by_updated")
	sequences = store.Keys("mergerequests.sequences")
	byUser    = store.Keys("mergerequests.by_user")
)

// byUser orders the merge requests of the dashboard (ListMine): key one
// letter (the scope and the order, below) ++ user id (0 for the scope
// "all") ++ time (userTimeKey) ++ merge request id; value the state byte
// ++ the target project's id. A page of a user's merge requests is a walk
// over that user's keys: the state, the project's visibility (one lookup
// per project) and the count come from the keys, and only the page's
// merge requests (or, with a search, the index's candidates) are decoded.
// The time is seconds (sign bit flipped, so a time before 1970 sorts
// first) ++ nanoseconds, which orders as time.Time.Before does.
const (
	byAuthorCreated   = 'a'
	byAuthorUpdated   = 'b'
	byAssigneeCreated = 'c'
	byAssigneeUpdated = 'd'
	byAllCreated      = 'e'
	byAllUpdated      = 'f'
)

// userKeyLen is a byUser key's length; userPrefixLen its letter and user.
const (
	userPrefixLen = 1 + 8
	userKeyLen    = userPrefixLen + 8 + 4 + 8
)

func userPrefix(kind byte, user int64) []byte {
	k := make([]byte, userPrefixLen, userKeyLen)
	k[0] = kind
	binary.BigEndian.PutUint64(k[1:], uint64(user))
	return k
}

func userTimeKey(kind byte, user int64, t time.Time, id int64) []byte {
	k := userPrefix(kind, user)[:userKeyLen]
	binary.BigEndian.PutUint64(k[9:], uint64(t.Unix())^1<<63)
	binary.BigEndian.PutUint32(k[17:], uint32(t.Nanosecond()))
	binary.BigEndian.PutUint64(k[21:], uint64(id))
	return k
}

// userKeys are a merge request's byUser keys.
func userKeys(m *MR) [][]byte {
	out := [][]byte{
		userTimeKey(byAuthorCreated, m.AuthorID, m.CreatedAt, m.ID),
		userTimeKey(byAuthorUpdated, m.AuthorID, m.UpdatedAt, m.ID),
		userTimeKey(byAllCreated, 0, m.CreatedAt, m.ID),
		userTimeKey(byAllUpdated, 0, m.UpdatedAt, m.ID),
	}
	if m.AssigneeID != 0 {
		out = append(out, userTimeKey(byAssigneeCreated, m.AssigneeID, m.CreatedAt, m.ID),
			userTimeKey(byAssigneeUpdated, m.AssigneeID, m.UpdatedAt, m.ID))
	}
	return out
}

func userValue(m *MR) []byte { return append([]byte{flagOf(m)}, store.Key(m.ProjectID)...) }

// trackUser puts (or, with put false, deletes) a merge request's byUser
// keys.
func trackUser(tx *store.Tx, m *MR, put bool) error {
	v := userValue(m)
	for _, k := range userKeys(m) {
		var err error
		if put {
			err = byUser.Put(tx, k, v)
		} else {
			err = byUser.Delete(tx, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fillByUser builds byUser from the live merge requests (migration 4),
// putting the keys in key order as Reindex does: bbolt's scattered
// inserts over many keys in one transaction cost far more.
func fillByUser(tx *store.Tx) error {
	type kv struct{ k, v []byte }
	var all []kv
	if err := mrs.Scan(tx, false, 0, func(m *MR) (bool, error) {
		if m.Deleted {
			return true, nil
		}
		v := userValue(m)
		for _, k := range userKeys(m) {
			all = append(all, kv{k, v})
		}
		return true, nil
	}); err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	for _, e := range all {
		if err := byUser.Put(tx, e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// The state byte of the ordering keys.
const (
	flagOpen   byte = 'o'
	flagClosed byte = 'c'
	flagMerged byte = 'm'
)

type buckets []string

func (b buckets) Buckets() []string { return b }

// Tables lists the module's tables and buckets for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{mrs,
		buckets{string(byCreated), string(byUpdated), string(sequences), string(byUser)}}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "mergerequests", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "mergerequests", Version: 2, Name: "drop the copy of pipelines", Up: func(tx *store.Tx) error {
			return store.Keys("mergerequests.pipelines").Drop(tx)
		}},
		{Module: "mergerequests", Version: 3, Name: "index of locked merge requests", Up: func(tx *store.Tx) error {
			return mrs.Reindex(tx, "locked")
		}},
		{Module: "mergerequests", Version: 4, Name: "indexes of the list filters and the dashboard", Up: func(tx *store.Tx) error {
			for _, ix := range filterIndexes {
				if err := mrs.Reindex(tx, ix); err != nil {
					return err
				}
			}
			return fillByUser(tx)
		}},
	}
}

func flagOf(m *MR) byte {
	switch {
	case m.State == StateMerged:
		return flagMerged
	case m.Open():
		return flagOpen
	}
	return flagClosed
}

func track(tx *store.Tx, m *MR) error {
	if m.Deleted {
		return nil
	}
	f := flagOf(m)
	if err := store.PutTimeKey(tx, byCreated, m.ProjectID, m.CreatedAt, m.ID, f); err != nil {
		return err
	}
	if err := store.PutTimeKey(tx, byUpdated, m.ProjectID, m.UpdatedAt, m.ID, f); err != nil {
		return err
	}
	return trackUser(tx, m, true)
}

func untrack(tx *store.Tx, m *MR) error {
	if err := store.DeleteTimeKey(tx, byCreated, m.ProjectID, m.CreatedAt, m.ID); err != nil {
		return err
	}
	if err := store.DeleteTimeKey(tx, byUpdated, m.ProjectID, m.UpdatedAt, m.ID); err != nil {
		return err
	}
	return trackUser(tx, m, false)
}

func nextIID(tx *store.Tx, project int64) (int64, error) {
	return store.NextInSequence[int64](tx, sequences, store.Key(project))
}

func insertMR(tx *store.Tx, m *MR) error {
	iid, err := nextIID(tx, m.ProjectID)
	if err != nil {
		return err
	}
	m.IID = iid
	if err := mrs.Insert(tx, m); err != nil {
		return err
	}
	return track(tx, m)
}

// saveMR stores a changed merge request; before is the stored one.
func saveMR(tx *store.Tx, before MR, m *MR) error {
	if err := untrack(tx, &before); err != nil {
		return err
	}
	if err := mrs.Update(tx, m); err != nil {
		return err
	}
	return track(tx, m)
}
