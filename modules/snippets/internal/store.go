package internal

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// Snippet is one stored snippet: a project snippet when ProjectID is set, a
// personal one otherwise. Its content lives in the content bucket, not in
// the row, so lists and permission checks never decode it.
type Snippet struct {
	ID          snippet.ID         `json:"id"`
	ProjectID   int64              `json:"project_id,omitempty"`
	AuthorID    int64              `json:"author_id"`
	Title       string             `json:"title"`
	FileName    string             `json:"file_name"`
	Description *string            `json:"description"`
	Visibility  snippet.Visibility `json:"visibility"`
	Size        int                `json:"size"`
	CreatedAt   time.Time          `json:"created_at"`
	UpdatedAt   time.Time          `json:"updated_at"`
}

func (s *Snippet) RecordID() snippet.ID      { return s.ID }
func (s *Snippet) SetRecordID(id snippet.ID) { s.ID = id }

// personal says whether the snippet belongs to no project.
func (s *Snippet) personal() bool { return s.ProjectID == 0 }

// scopeKey names the snippets of a project, or the personal snippets
// (project 0), of one visibility: "12/public", "0/internal".
func scopeKey(project int64, visibility snippet.Visibility) string {
	return store.IDString(project) + "/" + string(visibility)
}

// privateKey names the private snippets of one author in a project (or
// among the personal ones): "12/7".
func privateKey(project, author int64) string {
	return store.IDString(project) + "/" + store.IDString(author)
}

var (
	// snippets are indexed so that what a caller may see is a union of
	// index ranges: every snippet of a project (its members and
	// administrators), the public (and internal) ones of a scope, and the
	// caller's own private ones. A page then decodes only its own rows.
	snippets = store.NewTable[snippet.ID, Snippet]("snippets.snippets",
		store.Index[Snippet]{Name: "project", Keys: func(s *Snippet) []string {
			if s.personal() {
				return nil
			}
			return []string{store.IDString(s.ProjectID)}
		}},
		store.Index[Snippet]{Name: "visibility", Keys: func(s *Snippet) []string {
			return []string{scopeKey(s.ProjectID, s.Visibility)}
		}},
		store.Index[Snippet]{Name: "private_author", Keys: func(s *Snippet) []string {
			if s.Visibility != snippet.Private {
				return nil
			}
			return []string{privateKey(s.ProjectID, s.AuthorID)}
		}},
		store.Index[Snippet]{Name: "author", Keys: func(s *Snippet) []string { return []string{store.IDString(s.AuthorID)} }},
		store.Index[Snippet]{Name: "personal_author", Keys: func(s *Snippet) []string {
			if !s.personal() {
				return nil
			}
			return []string{store.IDString(s.AuthorID)}
		}},
	)
	// contentBucket maps a snippet id (store.Key) to its content.
	contentBucket = store.Keys("snippets.content")
)

type buckets []string

func (b buckets) Buckets() []string { return b }

// Tables lists the module's buckets for declaration.
func Tables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{snippets, buckets{string(contentBucket)}}
}

// Migrations lists the module's schema migrations, oldest first.
func Migrations() []store.Migration {
	return []store.Migration{{Module: "snippets", Version: 1, Name: "tables", Up: func(*store.Tx) error { return nil }}}
}

// insertSnippet stores a new snippet and its content.
func insertSnippet(tx *store.Tx, s *Snippet, content string) error {
	s.Size = len(content)
	if err := snippets.Insert(tx, s); err != nil {
		return err
	}
	return contentBucket.Put(tx, store.Key(s.ID), []byte(content))
}

// putContent replaces a snippet's content.
func putContent(tx *store.Tx, s *Snippet, content string) error {
	s.Size = len(content)
	return contentBucket.Put(tx, store.Key(s.ID), []byte(content))
}

// content reads a snippet's content; the bytes are copied out of the
// transaction.
func content(tx *store.Tx, id snippet.ID) []byte {
	return append([]byte{}, contentBucket.Get(tx, store.Key(id))...)
}

// deleteSnippet removes a snippet and its content; a missing one is not an
// error (deletes are repeated by redelivered events).
func deleteSnippet(tx *store.Tx, id snippet.ID) error {
	if err := snippets.Delete(tx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return contentBucket.Delete(tx, store.Key(id))
}

// idsBy is the union of the ids under several keys of one index.
func idsBy(tx *store.Tx, index string, keys ...string) ([]snippet.ID, error) {
	var all []snippet.ID
	for _, k := range keys {
		ids, err := snippets.IDsBy(tx, index, k)
		if err != nil {
			return nil, err
		}
		all = append(all, ids...)
	}
	return all, nil
}

// newestFirst sorts ids descending (ids grow with creation time, so this is
// GitLab's created_at desc) and drops duplicates.
func newestFirst(ids []snippet.ID) []snippet.ID {
	if slices.IsSorted(ids) { // one index range: ascending already
		slices.Reverse(ids)
		return slices.Compact(ids)
	}
	slices.SortFunc(ids, func(a, b snippet.ID) int { return cmp.Compare(b, a) })
	return slices.Compact(ids)
}
