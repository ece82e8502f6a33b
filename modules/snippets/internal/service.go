package internal

import (
	"context"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// Service is the snippets module: snippet.Service over the store.
type Service struct {
	db     *store.DB
	access projects.Access
	// users render the authors, in the HTTP adapter.
	users identity.Users
	// collab removes the notes of a deleted snippet; nil in a bundle
	// without the collab module (then no snippet has notes).
	collab target.Service
	now    func() time.Time
}

var _ snippet.Service = (*Service)(nil)

// Deps are what the service is built from (fx fills them).
type Deps struct {
	fennec.In
	DB     *store.DB
	Access projects.Access
	Users  identity.Users
	Collab target.Service `optional:"true"`
}

// NewService builds the module's service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, access: d.Access, users: d.Users, collab: d.Collab,
		now: func() time.Time { return time.Now().UTC() }}
}

// canRead is GitLab 9.x's read_project_snippet / read_personal_snippet
// for a caller who may already read the project (and its snippets
// feature): administrators and, in a project, its members (any level, as
// GitLab's team.member?) see every snippet; the author sees their own;
// public ones are for everyone, internal ones for signed-in users who are
// not external. A public snippet of a private project is therefore only as
// visible as the project, which the caller has passed already.
func canRead(p *auth.Principal, memberLevel int, s *Snippet) bool {
	switch {
	case p.IsAdmin():
		return true
	case !s.personal() && memberLevel >= projects.Guest:
		return true
	case !p.IsAnonymous() && p.UserID() == s.AuthorID:
		return true
	case s.Visibility == snippet.Public:
		return true
	case s.Visibility == snippet.Internal:
		return !p.IsAnonymous() && !p.User.External
	}
	return false
}

// visibleIDs lists, newest first, the snippets of a scope (a project, or
// the personal snippets when project is 0) that canRead lets the caller
// see, from the indexes alone (an administrator listing personal snippets
// gets the public, internal and own ones: no list shows all of them).
func visibleIDs(tx *store.Tx, p *auth.Principal, project int64, memberLevel int) ([]snippet.ID, error) {
	if project != 0 && (p.IsAdmin() || memberLevel >= projects.Guest) {
		ids, err := snippets.IDsBy(tx, "project", store.IDString(project))
		if err != nil {
			return nil, err
		}
		return newestFirst(ids), nil
	}
	ids, err := idsBy(tx, "visibility", scopeKey(project, snippet.Public))
	if err != nil {
		return nil, err
	}
	if !p.IsAnonymous() {
		uid := p.UserID()
		internal, err := idsBy(tx, "visibility", scopeKey(project, snippet.Internal))
		if err != nil {
			return nil, err
		}
		if p.User.External {
			// An external user sees only the internal snippets they wrote.
			internal = ownOnly(tx, internal, uid)
		}
		own, err := idsBy(tx, "private_author", privateKey(project, uid))
		if err != nil {
			return nil, err
		}
		ids = append(append(ids, internal...), own...)
	}
	return newestFirst(ids), nil
}

// ownOnly keeps the snippets of ids that author wrote.
func ownOnly(tx *store.Tx, ids []snippet.ID, author int64) []snippet.ID {
	out := ids[:0]
	for _, id := range ids {
		if s, err := snippets.Get(tx, id); err == nil && s.AuthorID == author {
			out = append(out, id)
		}
	}
	return out
}

// page reads the window of ids from the offset-th, limit of them.
func page(tx *store.Tx, ids []snippet.ID, offset, limit int) ([]*Snippet, error) {
	ids = ids[min(max(offset, 0), len(ids)):]
	ids = ids[:min(max(limit, 0), len(ids))]
	out := make([]*Snippet, 0, len(ids))
	for _, id := range ids {
		sn, err := snippets.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, sn)
	}
	return out, nil
}

// create stores a checked snippet by the caller.
func (s *Service) create(ctx context.Context, project int64, f snippet.Fields) (*Snippet, error) {
	now := s.now()
	sn := &Snippet{ProjectID: project, AuthorID: auth.FromContext(ctx).UserID(), Title: *f.Title, FileName: *f.FileName,
		Description: f.Description, Visibility: *f.Visibility, CreatedAt: now, UpdatedAt: now}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		sn.ID = 0
		return insertSnippet(tx, sn, *f.Content)
	})
	if err != nil {
		return nil, err
	}
	return sn, nil
}

// apply changes the given fields of sn (content in tx).
func apply(tx *store.Tx, sn *Snippet, f snippet.Fields, now time.Time) error {
	if f.Title != nil {
		sn.Title = *f.Title
	}
	if f.FileName != nil {
		sn.FileName = *f.FileName
	}
	if f.Description != nil {
		d := *f.Description
		sn.Description = &d
	}
	if f.Visibility != nil {
		sn.Visibility = *f.Visibility
	}
	if f.Content != nil {
		if err := putContent(tx, sn, *f.Content); err != nil {
			return err
		}
	}
	sn.UpdatedAt = now
	return snippets.Update(tx, sn)
}

// remove deletes a snippet with its notes, in tx.
func (s *Service) remove(tx *store.Tx, id snippet.ID) error {
	if err := deleteSnippet(tx, id); err != nil {
		return err
	}
	if s.collab == nil {
		return nil
	}
	return s.collab.Remove(tx.Context(), target.Target{Type: snippet.NoteableType, ID: int64(id)})
}

// record is the contract's view of a stored snippet; projectWebURL is its
// project's web_url ("" for a personal snippet).
func record(sn *Snippet, projectWebURL string) snippet.Snippet {
	r := snippet.Snippet{ID: sn.ID, ProjectID: sn.ProjectID, AuthorID: sn.AuthorID,
		Title: sn.Title, FileName: sn.FileName, Description: sn.Description, Visibility: sn.Visibility,
		Size: sn.Size, CreatedAt: sn.CreatedAt, UpdatedAt: sn.UpdatedAt}
	if !sn.personal() {
		r.WebURL = projectWebURL + "/snippets/" + store.IDString(sn.ID)
	}
	return r
}

// records is record for each of page.
func records(page []*Snippet, projectWebURL string) []snippet.Snippet {
	out := make([]snippet.Snippet, 0, len(page))
	for _, sn := range page {
		out = append(out, record(sn, projectWebURL))
	}
	return out
}
