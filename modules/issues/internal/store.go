package internal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The states of an issue in GitLab 9.x: a reopened issue is "reopened"
// until it is closed again, and the opened filter matches both.
const (
	StateOpened   = "opened"
	StateClosed   = "closed"
	StateReopened = "reopened"
)

// Issue is one stored issue.
type Issue struct {
	ID           int64     `json:"id"`
	ProjectID    int64     `json:"project_id"`
	IID          int64     `json:"iid"`
	Title        string    `json:"title"`
	Description  string    `json:"description"`
	State        string    `json:"state"`
	AuthorID     int64     `json:"author_id"`
	AssigneeIDs  []int64   `json:"assignee_ids,omitempty"`
	LabelIDs     []int64   `json:"label_ids,omitempty"`
	MilestoneID  int64     `json:"milestone_id,omitempty"`
	Confidential bool      `json:"confidential,omitempty"`
	DueDate      string    `json:"due_date,omitempty"` // YYYY-MM-DD
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	// ClosedBy remembers the commits that closed the issue (sha), so a
	// redelivered push closes and notes nothing twice.
	ClosedBy []string `json:"closed_by,omitempty"`
	// MentionedIn remembers the commits that referenced the issue.
	MentionedIn []string `json:"mentioned_in,omitempty"`
}

func (i *Issue) RecordID() int64      { return i.ID }
func (i *Issue) SetRecordID(id int64) { i.ID = id }

// Open says whether the issue counts as open (opened or reopened).
func (i *Issue) Open() bool { return i.State != StateClosed }

// Label is a project label, or a group label (GroupID set, ProjectID 0):
// one table, so a label id names either and an issue's LabelIDs hold both.
type Label struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	GroupID     int64     `json:"group_id,omitempty"`
	Name        string    `json:"name"`
	Color       string    `json:"color"`
	Description string    `json:"description,omitempty"`
	Priority    *int      `json:"priority,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

func (l *Label) RecordID() int64      { return l.ID }
func (l *Label) SetRecordID(id int64) { l.ID = id }

// Milestone is a project milestone, or a group milestone (GroupID set,
// ProjectID 0): one table so milestone ids stay unique across both.
type Milestone struct {
	ID          int64     `json:"id"`
	ProjectID   int64     `json:"project_id"`
	GroupID     int64     `json:"group_id,omitempty"`
	IID         int64     `json:"iid"`
	Title       string    `json:"title"`
	Description string    `json:"description,omitempty"`
	State       string    `json:"state"` // active, closed
	DueDate     string    `json:"due_date,omitempty"`
	StartDate   string    `json:"start_date,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (m *Milestone) RecordID() int64      { return m.ID }
func (m *Milestone) SetRecordID(id int64) { m.ID = id }

var issues = store.NewTable[int64, Issue]("issues.issues",
	store.Index[Issue]{Name: "iid", Unique: true, Keys: func(i *Issue) []string { return []string{store.IDString(i.ProjectID) + "/" + store.IDString(i.IID)} }},
	store.Index[Issue]{Name: "project", Keys: func(i *Issue) []string { return []string{store.IDString(i.ProjectID)} }},
	store.Index[Issue]{Name: "author", Keys: func(i *Issue) []string { return []string{store.IDString(i.AuthorID)} }},
	store.Index[Issue]{Name: "assignee", Keys: func(i *Issue) []string {
		out := make([]string, len(i.AssigneeIDs))
		for n, a := range i.AssigneeIDs {
			out[n] = store.IDString(a)
		}
		return out
	}},
	store.Index[Issue]{Name: "label", Keys: func(i *Issue) []string {
		out := make([]string, len(i.LabelIDs))
		for n, l := range i.LabelIDs {
			out[n] = store.IDString(l)
		}
		return out
	}},
	store.Index[Issue]{Name: "milestone", Keys: func(i *Issue) []string {
		if i.MilestoneID == 0 {
			return nil
		}
		return []string{store.IDString(i.MilestoneID)}
	}},
	// A list's search looks in the title and the description
	// (filter.matches), through their trigrams.
	store.Index[Issue]{Name: "search", Search: true, Keys: func(i *Issue) []string { return []string{i.Title, i.Description} }},
)

// Label names are unique per project, and per group, as given (GitLab
// compares them exactly); a project label and a group label may share a
// name (labelOwnerKey keeps them apart).
var labels = store.NewTable[int64, Label]("issues.labels",
	store.Index[Label]{Name: "name", Unique: true, Keys: func(l *Label) []string { return []string{labelOwnerKey(l) + "/" + l.Name} }},
	store.Index[Label]{Name: "project", Keys: func(l *Label) []string {
		if l.GroupID != 0 {
			return nil
		}
		return []string{store.IDString(l.ProjectID)}
	}},
	// Added with group labels: every label stored before is a project
	// label, which has no key here, so the index needs no rebuild.
	store.Index[Label]{Name: "group", Keys: func(l *Label) []string {
		if l.GroupID == 0 {
			return nil
		}
		return []string{store.IDString(l.GroupID)}
	}},
)

// labelOwnerKey scopes a label's name: its project, or "g" and its group
// (as milestoneOwnerKey does for milestones).
func labelOwnerKey(l *Label) string {
	if l.GroupID != 0 {
		return groupLabelKey(l.GroupID)
	}
	return store.IDString(l.ProjectID)
}

func groupLabelKey(group int64) string { return "g" + store.IDString(group) }

var milestones = store.NewTable[int64, Milestone]("issues.milestones",
	store.Index[Milestone]{Name: "title", Unique: true, Keys: func(m *Milestone) []string { return []string{milestoneOwnerKey(m) + "/" + m.Title} }},
	store.Index[Milestone]{Name: "iid", Unique: true, Keys: func(m *Milestone) []string { return []string{milestoneOwnerKey(m) + "/" + store.IDString(m.IID)} }},
	store.Index[Milestone]{Name: "project", Keys: func(m *Milestone) []string {
		if m.GroupID != 0 {
			return nil
		}
		return []string{store.IDString(m.ProjectID)}
	}},
	store.Index[Milestone]{Name: "group", Keys: func(m *Milestone) []string {
		if m.GroupID == 0 {
			return nil
		}
		return []string{store.IDString(m.GroupID)}
	}},
)

// Buckets of our own, kept in the same transactions as the tables:
//
// byCreated and byUpdated order a project's issues by time: key project id
// ++ time (unix nanoseconds, big-endian, so byte order is time order) ++
// issue id, value one flags byte. A page of a project's list is a cursor
// walk over keys alone, and the state and confidential filters are read
// from the value without decoding an issue.
//
// counts holds per project the number of open, closed and confidential
// issues (key project id ++ one letter), so X-Total needs no walk.
//
// labelCounts holds per label the number of its open and closed issues
// and, apart, of its confidential ones (key label id ++ one letter), so a
// label's counts as a caller may see them are a few reads: all of them for
// Reporter+, the issues that are not confidential for anyone else (plus,
// for a signed-in caller, the confidential ones they wrote or are assigned
// to, the only case that reads the label's issues). A group label, whose
// issues are in many projects, also has these counts per project (key
// label id ++ project id ++ one letter, groupLabelCountKey): a project's
// list shows its own issues' counts, the group's list the sum over the
// projects the caller may read.
//
// sequences holds the last issue iid and milestone iid of each project
// (key project id ++ 'i' or 'm'); an iid is taken in the transaction that
// inserts the row, so there are neither gaps nor duplicates.
var (
	byCreated   = store.Keys("issues.by_created")
	byUpdated   = store.Keys("issues.by_updated")
	counts      = store.Keys("issues.counts")
	labelCounts = store.Keys("issues.label_counts")
	sequences   = store.Keys("issues.sequences")
	byUser      = store.Keys("issues.by_user")
)

// byUser orders the issues of GET /issues (ListMine): key one letter (the
// scope and the order, below) ++ user id (0 for the scope "all") ++ time
// (userTimeKey) ++ issue id; value the flags byte ++ project id. A page of
// a user's issues is a walk over that user's keys: the state filter, the
// project's visibility (one lookup per project) and X-Total come from the
// keys, and only the page's issues are decoded. The time is seconds (sign
// bit flipped, so a time before 1970 sorts first) ++ nanoseconds, which
// orders as time.Time.Before does for any time.
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

// userKeys are an issue's byUser keys.
func userKeys(i *Issue) [][]byte {
	out := [][]byte{
		userTimeKey(byAuthorCreated, i.AuthorID, i.CreatedAt, i.ID),
		userTimeKey(byAuthorUpdated, i.AuthorID, i.UpdatedAt, i.ID),
		userTimeKey(byAllCreated, 0, i.CreatedAt, i.ID),
		userTimeKey(byAllUpdated, 0, i.UpdatedAt, i.ID),
	}
	for _, a := range i.AssigneeIDs {
		out = append(out, userTimeKey(byAssigneeCreated, a, i.CreatedAt, i.ID),
			userTimeKey(byAssigneeUpdated, a, i.UpdatedAt, i.ID))
	}
	return out
}

func userValue(i *Issue) []byte {
	return append([]byte{flagsOf(i)}, store.Key(i.ProjectID)...)
}

// trackUser adds (delta 1) or removes (-1) an issue's byUser keys.
func trackUser(tx *store.Tx, i *Issue, delta int) error {
	v := userValue(i)
	for _, k := range userKeys(i) {
		var err error
		if delta > 0 {
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

// fillByUser builds byUser from the issues (migration 5): the keys are
// put in key order, as Reindex does, since bbolt's scattered inserts over
// many keys in one transaction cost far more.
func fillByUser(tx *store.Tx) error {
	if err := clearBucket(tx, byUser); err != nil {
		return err
	}
	type kv struct{ k, v []byte }
	var all []kv
	if err := issues.Scan(tx, false, 0, func(i *Issue) (bool, error) {
		v := userValue(i)
		for _, k := range userKeys(i) {
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

const (
	flagClosed       byte = 1
	flagConfidential byte = 2
)

const (
	countOpen         = 'o'
	countClosed       = 'c'
	countConfidential = 'x'
	// Of a label's: its confidential issues, open and closed (each also
	// counted under countOpen or countClosed).
	countConfidentialOpen   = 'p'
	countConfidentialClosed = 'q'
)

// labelCountKinds are the letters of a label's counts.
var labelCountKinds = []byte{countOpen, countClosed, countConfidentialOpen, countConfidentialClosed}

type buckets []string

func (b buckets) Buckets() []string { return b }

// Tables lists the module's tables and buckets for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{issues, labels, milestones,
		buckets{string(byCreated), string(byUpdated), string(counts), string(labelCounts), string(sequences), string(byUser)}}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "issues", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "issues", Version: 2, Name: "recount open, closed and confidential issues", Up: recount},
		{Module: "issues", Version: 3, Name: "count each label's open, closed and confidential issues", Up: recountLabels},
		{Module: "issues", Version: 4, Name: "search index of issues", Up: func(tx *store.Tx) error { return issues.Reindex(tx, "search") }},
		{Module: "issues", Version: 5, Name: "order each user's issues for GET /issues", Up: fillByUser},
	}
}

// recount rebuilds the per-project counts from the issues themselves. The
// counts were kept since the first version, but open_issues_count of every
// project (projects.OpenIssuesCounter) now shows them, so a store upgraded
// to it starts from counts that agree with its issues whatever happened
// before. One walk over the issues, once.
func recount(tx *store.Tx) error {
	if _, err := counts.DeletePrefix(tx, nil); err != nil {
		return err
	}
	return issues.Scan(tx, false, 0, func(i *Issue) (bool, error) {
		return true, countInProject(tx, i, 1)
	})
}

// recountLabels builds the per-label counts from the issues: a store made
// before them starts with counts that agree with its issues. One walk over
// the issues, once; it starts from an empty bucket, so running it again
// gives the same counts.
func recountLabels(tx *store.Tx) error {
	if err := clearBucket(tx, labelCounts); err != nil {
		return err
	}
	return issues.Scan(tx, false, 0, func(i *Issue) (bool, error) {
		return true, countInLabels(tx, i, 1)
	})
}

func clearBucket(tx *store.Tx, keys store.Keys) error {
	_, err := keys.DeletePrefix(tx, nil)
	return err
}

func flagsOf(i *Issue) byte {
	var f byte
	if !i.Open() {
		f |= flagClosed
	}
	if i.Confidential {
		f |= flagConfidential
	}
	return f
}

func countKey(project int64, kind byte) []byte { return append(store.Key(project), kind) }

func addCount(tx *store.Tx, project int64, kind byte, delta int64) error {
	return addTo(tx, counts, countKey(project, kind), delta)
}

// addTo adds delta to the counter at k of bucket, deleting it when it
// reaches 0.
func addTo(tx *store.Tx, bucket store.Keys, k []byte, delta int64) error {
	var n int64
	if v := bucket.Get(tx, k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += delta
	if n <= 0 {
		return bucket.Delete(tx, k)
	}
	return bucket.Put(tx, k, store.Key(n))
}

func getCount(tx *store.Tx, project int64, kind byte) int {
	return readCount(tx, counts, countKey(project, kind))
}

func readCount(tx *store.Tx, bucket store.Keys, k []byte) int {
	if v := bucket.Get(tx, k); len(v) == 8 {
		return int(binary.BigEndian.Uint64(v))
	}
	return 0
}

// getLabelCount is one of a label's counts (kind in labelCountKinds).
func getLabelCount(tx *store.Tx, label int64, kind byte) int {
	return readCount(tx, labelCounts, countKey(label, kind))
}

// dropLabelCounts forgets a deleted label's counts (a group label's per
// project too: every key that starts with the label's id).
func dropLabelCounts(tx *store.Tx, label int64) error {
	_, err := labelCounts.DeletePrefix(tx, store.Key(label))
	return err
}

// nextSeq takes the next number of a project's sequence (kind 'i' issues,
// 'm' milestones).
func nextSeq(tx *store.Tx, project int64, kind byte) (int64, error) {
	return store.NextInSequence[int64](tx, sequences, countKey(project, kind))
}

// track adds an issue's ordering keys and counts (after an insert).
func track(tx *store.Tx, i *Issue) error {
	f := flagsOf(i)
	if err := store.PutTimeKey(tx, byCreated, i.ProjectID, i.CreatedAt, i.ID, f); err != nil {
		return err
	}
	if err := store.PutTimeKey(tx, byUpdated, i.ProjectID, i.UpdatedAt, i.ID, f); err != nil {
		return err
	}
	if err := trackUser(tx, i, 1); err != nil {
		return err
	}
	return countIssue(tx, i, 1)
}

// untrack removes what track added (before a delete or an update).
func untrack(tx *store.Tx, i *Issue) error {
	if err := store.DeleteTimeKey(tx, byCreated, i.ProjectID, i.CreatedAt, i.ID); err != nil {
		return err
	}
	if err := store.DeleteTimeKey(tx, byUpdated, i.ProjectID, i.UpdatedAt, i.ID); err != nil {
		return err
	}
	if err := trackUser(tx, i, -1); err != nil {
		return err
	}
	return countIssue(tx, i, -1)
}

// countIssue adds delta to the counts of the issue's project and labels.
func countIssue(tx *store.Tx, i *Issue, delta int64) error {
	if err := countInProject(tx, i, delta); err != nil {
		return err
	}
	return countInLabels(tx, i, delta)
}

func countInProject(tx *store.Tx, i *Issue, delta int64) error {
	kind := byte(countOpen)
	if !i.Open() {
		kind = countClosed
	}
	if err := addCount(tx, i.ProjectID, kind, delta); err != nil {
		return err
	}
	if i.Confidential {
		return addCount(tx, i.ProjectID, countConfidential, delta)
	}
	return nil
}

func countInLabels(tx *store.Tx, i *Issue, delta int64) error {
	kind, conf := byte(countOpen), byte(countConfidentialOpen)
	if !i.Open() {
		kind, conf = countClosed, countConfidentialClosed
	}
	for _, l := range i.LabelIDs {
		if err := addTo(tx, labelCounts, countKey(l, kind), delta); err != nil {
			return err
		}
		if i.Confidential {
			if err := addTo(tx, labelCounts, countKey(l, conf), delta); err != nil {
				return err
			}
		}
		label, err := labels.Get(tx, l)
		if errors.Is(err, store.ErrNotFound) || (err == nil && label.GroupID == 0) {
			continue
		}
		if err != nil {
			return err
		}
		if err := addTo(tx, labelCounts, groupLabelCountKey(l, i.ProjectID, kind), delta); err != nil {
			return err
		}
		if i.Confidential {
			if err := addTo(tx, labelCounts, groupLabelCountKey(l, i.ProjectID, conf), delta); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupLabelCountKey is the key of a group label's count of one project's
// issues (kind in labelCountKinds).
func groupLabelCountKey(label, project int64, kind byte) []byte {
	return append(append(store.Key(label), store.Key(project)...), kind)
}

// groupLabelProjects are the projects with issues counted under a group
// label, ascending.
func groupLabelProjects(tx *store.Tx, label int64) []int64 {
	var out []int64
	prefix := store.Key(label)
	c := labelCounts.Cursor(tx)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != 17 {
			continue
		}
		if p := int64(store.KeyID(k[8:16])); len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// insertIssue stores a new issue with the next iid of its project.
func insertIssue(tx *store.Tx, i *Issue) error {
	iid, err := nextSeq(tx, i.ProjectID, 'i')
	if err != nil {
		return err
	}
	i.IID = iid
	if err := issues.Insert(tx, i); err != nil {
		return err
	}
	return track(tx, i)
}

// updateIssue stores a changed issue; before is the stored one.
func updateIssue(tx *store.Tx, before Issue, i *Issue) error {
	if err := untrack(tx, &before); err != nil {
		return err
	}
	if err := issues.Update(tx, i); err != nil {
		return err
	}
	return track(tx, i)
}

func deleteIssue(tx *store.Tx, i *Issue) error {
	if err := untrack(tx, i); err != nil {
		return err
	}
	return issues.Delete(tx, i.ID)
}
