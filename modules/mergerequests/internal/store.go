package internal

import (
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
)

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
	byCreated = []byte("mergerequests.by_created")
	byUpdated = []byte("mergerequests.by_updated")
	sequences = []byte("mergerequests.sequences")
)

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
		buckets{string(byCreated), string(byUpdated), string(sequences)}}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "mergerequests", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "mergerequests", Version: 2, Name: "drop the copy of pipelines", Up: func(tx *store.Tx) error {
			if tx.Bucket([]byte("mergerequests.pipelines")) == nil {
				return nil
			}
			return tx.DeleteBucket([]byte("mergerequests.pipelines"))
		}},
		{Module: "mergerequests", Version: 3, Name: "index of locked merge requests", Up: func(tx *store.Tx) error {
			return mrs.Reindex(tx, "locked")
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
	return store.PutTimeKey(tx, byUpdated, m.ProjectID, m.UpdatedAt, m.ID, f)
}

func untrack(tx *store.Tx, m *MR) error {
	if err := store.DeleteTimeKey(tx, byCreated, m.ProjectID, m.CreatedAt, m.ID); err != nil {
		return err
	}
	return store.DeleteTimeKey(tx, byUpdated, m.ProjectID, m.UpdatedAt, m.ID)
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
