package internal

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Entry is one stored feed entry. Ids grow with time (entries are written in
// the order their events were committed), so newest first is descending id
// order and no time index is needed.
type Entry struct {
	ID int64 `json:"id"`
	// ProjectID is 0 for an entry outside any project (a deleted project's
	// tombstone in its author's feed).
	ProjectID   int64           `json:"project_id,omitempty"`
	AuthorID    int64           `json:"author_id"`
	ActionName  string          `json:"action_name"`
	TargetID    int64           `json:"target_id,omitempty"`
	TargetType  string          `json:"target_type,omitempty"`
	TargetTitle string          `json:"target_title,omitempty"`
	TargetIID   int64           `json:"target_iid,omitempty"` // feed.Event's
	Title       string          `json:"title,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	Note        json.RawMessage `json:"note,omitempty"`
	// Key identifies the event that caused the entry when the event is
	// unique by nature ("projects.created:7"); a redelivered event finds its
	// key taken and adds nothing.
	Key       string    `json:"key,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

func (e *Entry) RecordID() int64      { return e.ID }
func (e *Entry) SetRecordID(id int64) { e.ID = id }

var entries = store.NewTable[int64, Entry]("activity.events",
	store.Index[Entry]{Name: "project", Keys: func(e *Entry) []string {
		if e.ProjectID == 0 {
			return nil
		}
		return []string{store.IDString(e.ProjectID)}
	}},
	store.Index[Entry]{Name: "key", Unique: true, Keys: func(e *Entry) []string { return []string{e.Key} }},
)

// Two buckets of our own, kept in the same transactions as the table:
//
// byAuthor maps author id ++ entry id (two big-endian ids) to the entry's
// project id, so a user's feed is filtered by project visibility from one
// cursor walk, without decoding a single entry that is not shown.
//
// goneProjects holds the ids of deleted projects (ids are never reused): an
// event about such a project that arrives late (a retried delivery) adds
// nothing.
var (
	byAuthor     = store.Keys("activity.by_author")
	goneProjects = store.Keys("activity.gone_projects")
)

type buckets []string

func (b buckets) Buckets() []string { return b }

// Tables lists the module's buckets for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{entries, buckets{string(byAuthor), string(goneProjects)}}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{{Module: "activity", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }}}
}

func authorKey(author, entry int64) []byte {
	return append(store.Key(author), store.Key(entry)...)
}

// insert stores e unless its project is gone or its key is taken; it
// reports whether it did.
func insert(tx *store.Tx, e *Entry) (bool, error) {
	if e.ProjectID != 0 && goneProjects.Get(tx, store.Key(e.ProjectID)) != nil {
		return false, nil
	}
	if e.Key != "" {
		if _, err := entries.GetBy(tx, "key", e.Key); err == nil {
			return false, nil
		}
	}
	if err := entries.Insert(tx, e); err != nil {
		return false, err
	}
	return true, byAuthor.Put(tx, authorKey(e.AuthorID, e.ID), store.Key(e.ProjectID))
}

func remove(tx *store.Tx, e *Entry) error {
	if err := byAuthor.Delete(tx, authorKey(e.AuthorID, e.ID)); err != nil {
		return err
	}
	return entries.Delete(tx, e.ID)
}

// removeProject deletes every entry of a project and remembers that it is
// gone. Running it twice changes nothing.
func removeProject(tx *store.Tx, project int64) error {
	ids, err := entries.IDsBy(tx, "project", store.IDString(project))
	if err != nil {
		return err
	}
	for _, id := range ids {
		e, err := entries.Get(tx, id)
		if err != nil {
			return err
		}
		if err := remove(tx, e); err != nil {
			return err
		}
	}
	return goneProjects.Put(tx, store.Key(project), []byte{})
}

// removeAuthor deletes every entry a user authored.
func removeAuthor(tx *store.Tx, author int64) error {
	for _, it := range authorItems(tx, author) {
		e, err := entries.Get(tx, it.entry)
		if err != nil {
			return err
		}
		if err := remove(tx, e); err != nil {
			return err
		}
	}
	return nil
}

// item is one entry of an author's feed as the byAuthor bucket knows it.
type item struct{ entry, project int64 }

// authorItems lists an author's entries, oldest first, from the byAuthor
// bucket alone.
func authorItems(tx *store.Tx, author int64) []item {
	prefix := store.Key(author)
	var out []item
	c := byAuthor.Cursor(tx)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		out = append(out, item{entry: int64(store.KeyID(k)), project: int64(store.KeyID(v))})
	}
	return out
}

// lastInProject returns the author's newest entry in project for which match
// holds, looking at no more than limit of the author's newest entries in
// that project (nil when none).
func lastInProject(tx *store.Tx, author, project int64, limit int, match func(*Entry) bool) (*Entry, error) {
	prefix := store.Key(author)
	c := byAuthor.Cursor(tx)
	k, v := c.Seek(store.Key(author + 1))
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix) && limit > 0; k, v = c.Prev() {
		if int64(store.KeyID(v)) != project {
			continue
		}
		limit--
		e, err := entries.Get(tx, int64(store.KeyID(k)))
		if err != nil {
			return nil, err
		}
		if match(e) {
			return e, nil
		}
	}
	return nil, nil
}
