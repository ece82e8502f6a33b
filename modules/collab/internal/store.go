package internal

import (
	"encoding/binary"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// Note is one stored note. Ids grow with time, so a noteable's notes in id
// order are its notes in creation order (GitLab lists them so).
type Note struct {
	ID           int64  `json:"id"`
	ProjectID    int64  `json:"project_id"`
	NoteableType string `json:"noteable_type"`
	NoteableID   int64  `json:"noteable_id"`
	// NoteableRef is how the noteable's URL names it (its iid; a
	// snippet's id): the feed kind resolves the noteable again with it,
	// through the noteable's Kind, to decide who may see the note.
	NoteableRef int64     `json:"noteable_ref"`
	NoteableIID int64     `json:"noteable_iid,omitempty"`
	AuthorID    int64     `json:"author_id"`
	Body        string    `json:"body"`
	System      bool      `json:"system,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// The note's thread (discussions.go): its discussion id (40 hex
	// digits), its type ("" a note by itself, "DiscussionNote" one of a
	// thread, "DiffNote" one of a line comment's thread, with Position),
	// and whether it is resolved.
	DiscussionID string           `json:"discussion_id,omitempty"`
	Type         string           `json:"type,omitempty"`
	Position     *target.Position `json:"position,omitempty"`
	Resolved     bool             `json:"resolved,omitempty"`
	ResolvedBy   int64            `json:"resolved_by,omitempty"`
	ResolvedAt   *time.Time       `json:"resolved_at,omitempty"`
}

func (n *Note) RecordID() int64      { return n.ID }
func (n *Note) SetRecordID(id int64) { n.ID = id }

func noteableKey(typ string, id int64) string { return typ + ":" + store.IDString(id) }

var notesTable = store.NewTable[int64, Note]("notes.notes",
	store.Index[Note]{Name: "noteable", Keys: func(n *Note) []string { return []string{noteableKey(n.NoteableType, n.NoteableID)} }},
	store.Index[Note]{Name: "project", Keys: func(n *Note) []string { return []string{store.IDString(n.ProjectID)} }},
	// A noteable's commenters, the participants that need no row of their
	// own: one index entry per user note instead of a subscription row
	// (with its three index entries) for each new commenter, on the path of
	// every comment.
	store.Index[Note]{Name: "commenter", Keys: func(n *Note) []string {
		if n.System {
			return nil
		}
		return []string{commenterKey(n.NoteableType, n.NoteableID, n.AuthorID)}
	}},
	// A noteable's threads: its notes by discussion id.
	store.Index[Note]{Name: "discussion", Keys: func(n *Note) []string {
		if n.DiscussionID == "" {
			return nil
		}
		return []string{discussionKey(n.NoteableType, n.NoteableID, n.DiscussionID)}
	}},
)

func commenterKey(typ string, id, author int64) string {
	return noteableKey(typ, id) + ":" + store.IDString(author)
}

// commented reports whether user wrote a note on the noteable.
func commented(tx *store.Tx, typ string, id, user int64) (bool, error) {
	ids, err := notesTable.IDsBy(tx, "commenter", commenterKey(typ, id, user))
	return len(ids) > 0, err
}

// Subscription is a user's relation to a noteable's conversation: an
// explicit subscription (Subscribed set: true subscribed, false
// unsubscribed) and whether they take part in it by a mention (commenters
// are found through the notes' commenter index).
type Subscription struct {
	ID           int64  `json:"id"`
	ProjectID    int64  `json:"project_id"`
	NoteableType string `json:"noteable_type"`
	NoteableID   int64  `json:"noteable_id"`
	UserID       int64  `json:"user_id"`
	Subscribed   *bool  `json:"subscribed,omitempty"`
	Participant  bool   `json:"participant,omitempty"`
}

func (s *Subscription) RecordID() int64      { return s.ID }
func (s *Subscription) SetRecordID(id int64) { s.ID = id }

func subscriptionKey(typ string, id, user int64) string {
	return noteableKey(typ, id) + ":" + store.IDString(user)
}

var subscriptions = store.NewTable[int64, Subscription]("notes.subscriptions",
	store.Index[Subscription]{Name: "key", Unique: true, Keys: func(s *Subscription) []string {
		return []string{subscriptionKey(s.NoteableType, s.NoteableID, s.UserID)}
	}},
	store.Index[Subscription]{Name: "noteable", Keys: func(s *Subscription) []string { return []string{noteableKey(s.NoteableType, s.NoteableID)} }},
	store.Index[Subscription]{Name: "project", Keys: func(s *Subscription) []string { return []string{store.IDString(s.ProjectID)} }},
)

// userCounts maps noteable type ++ 0 ++ id (8 bytes) to the number of its
// user (non-system) notes, kept with every insert and delete, so a page of
// issues reads its user_notes_count without counting notes.
var userCounts = store.Keys("notes.user_counts")

type buckets []string

func (b buckets) Buckets() []string { return b }

// Tables lists the module's tables and buckets for declaration: the notes
// module's and the todos module's, under their names.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{notesTable, subscriptions, buckets{string(userCounts)},
		awardsTable, buckets{string(awardVotes)}, todosTable}
}

// Migrations lists the module's schema migrations, oldest first. They keep
// the names of the modules they were written for ("notes", "todos"): the
// store records each module's schema version under its name.
func Migrations() []store.Migration {
	return []store.Migration{
		{Module: "notes", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
		{Module: "notes", Version: 2, Name: "discussion ids", Up: backfillDiscussionIDs},
		{Module: "todos", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }},
	}
}

func countKey(typ string, id int64) []byte {
	k := make([]byte, 0, len(typ)+9)
	k = append(k, typ...)
	k = append(k, 0)
	return append(k, store.Key(id)...)
}

func userCount(tx *store.Tx, typ string, id int64) int {
	v := userCounts.Get(tx, countKey(typ, id))
	if len(v) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(v))
}

func addUserCount(tx *store.Tx, typ string, id int64, delta int) error {
	n := userCount(tx, typ, id) + delta
	k := countKey(typ, id)
	if n <= 0 {
		return userCounts.Delete(tx, k)
	}
	return userCounts.Put(tx, k, store.Key(int64(n)))
}

// insertNote stores a note and counts it when a user wrote it. A note that
// joins no thread starts its own.
func insertNote(tx *store.Tx, n *Note) error {
	if n.DiscussionID == "" {
		n.DiscussionID = newDiscussionID()
	}
	if err := notesTable.Insert(tx, n); err != nil {
		return err
	}
	if n.System {
		return nil
	}
	return addUserCount(tx, n.NoteableType, n.NoteableID, 1)
}

// deleteNote deletes a note, its award emoji and its count.
func deleteNote(tx *store.Tx, n *Note) error {
	if err := notesTable.Delete(tx, n.ID); err != nil {
		return err
	}
	if err := deleteAwardsBy(tx, "awardable", noteableKey(noteAwardable, n.ID)); err != nil {
		return err
	}
	if n.System {
		return nil
	}
	return addUserCount(tx, n.NoteableType, n.NoteableID, -1)
}

// noteableNotes lists a noteable's notes in creation order.
func noteableNotes(tx *store.Tx, typ string, id int64) ([]*Note, error) {
	ids, err := notesTable.IDsBy(tx, "noteable", noteableKey(typ, id))
	if err != nil {
		return nil, err
	}
	return loadNotes(tx, ids)
}

func loadNotes(tx *store.Tx, ids []int64) ([]*Note, error) {
	out := make([]*Note, 0, len(ids))
	for _, id := range ids {
		n, err := notesTable.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// removeNoteable deletes a noteable's notes, subscriptions, count and
// award emoji (its own and its notes').
func removeNoteable(tx *store.Tx, typ string, id int64) error {
	if _, err := notesTable.DeleteBy(tx, "noteable", noteableKey(typ, id)); err != nil {
		return err
	}
	if err := deleteAwardsBy(tx, "noteable", noteableKey(typ, id)); err != nil {
		return err
	}
	if _, err := subscriptions.DeleteBy(tx, "noteable", noteableKey(typ, id)); err != nil {
		return err
	}
	return userCounts.Delete(tx, countKey(typ, id))
}

// removeProject deletes every note, subscription, count and award emoji of
// a project.
func removeProject(tx *store.Tx, project int64) error {
	if err := deleteAwardsBy(tx, "project", store.IDString(project)); err != nil {
		return err
	}
	ids, err := notesTable.IDsBy(tx, "project", store.IDString(project))
	if err != nil {
		return err
	}
	for _, id := range ids {
		n, err := notesTable.Get(tx, id)
		if err != nil {
			return err
		}
		if err := notesTable.Delete(tx, id); err != nil {
			return err
		}
		if err := userCounts.Delete(tx, countKey(n.NoteableType, n.NoteableID)); err != nil {
			return err
		}
	}
	_, err = subscriptions.DeleteBy(tx, "project", store.IDString(project))
	return err
}
