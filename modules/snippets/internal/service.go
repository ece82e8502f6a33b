package internal

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/notes"
	noteables "github.com/fennec-forge/fennec/modules/notes/noteable"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ErrSnippetNotFound: no such snippet, or one the caller may not see (the
// two are never told apart); answered 404 Snippet Not Found.
var ErrSnippetNotFound = noteables.NotFound("snippets: snippet not found")

// Service is the snippets module.
type Service struct {
	db     *store.DB
	access projects.Access
	users  identity.Users
	// notes removes the notes of a deleted snippet; nil in a bundle without
	// the notes module (then no snippet has notes).
	notes notes.Service
	now   func() time.Time
}

// Deps are what the service is built from (fx fills them).
type Deps struct {
	fx.In
	DB     *store.DB
	Access projects.Access
	Users  identity.Users
	Notes  notes.Service `optional:"true"`
}

// NewService builds the module's service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, access: d.Access, users: d.Users, notes: d.Notes,
		now: func() time.Time { return time.Now().UTC() }}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (projects.ErrForbidden and ErrNotFound are the projects module's).
func mapErrors(a *api.API) {
	a.MapError(ErrSnippetNotFound, func(error) *api.Error { return api.NotFound("Snippet") })
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
	case !p.IsAnonymous() && uint64(p.UserID()) == s.AuthorID:
		return true
	case s.Visibility == Public:
		return true
	case s.Visibility == Internal:
		return !p.IsAnonymous() && !p.User.External
	}
	return false
}

// visibleIDs lists, newest first, the snippets of a scope (a project, or
// the personal snippets when project is 0) that canRead lets the caller
// see, from the indexes alone (an administrator listing personal snippets
// gets the public, internal and own ones: no list shows all of them).
func visibleIDs(tx *store.Tx, p *auth.Principal, project uint64, memberLevel int) ([]uint64, error) {
	if project != 0 && (p.IsAdmin() || memberLevel >= projects.Guest) {
		ids, err := snippets.IDsBy(tx, "project", u64(project))
		if err != nil {
			return nil, err
		}
		return newestFirst(ids), nil
	}
	ids, err := idsBy(tx, "visibility", scopeKey(project, Public))
	if err != nil {
		return nil, err
	}
	if !p.IsAnonymous() {
		uid := uint64(p.UserID())
		internal, err := idsBy(tx, "visibility", scopeKey(project, Internal))
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
func ownOnly(tx *store.Tx, ids []uint64, author uint64) []uint64 {
	out := ids[:0]
	for _, id := range ids {
		if s, err := snippets.Get(tx, id); err == nil && s.AuthorID == author {
			out = append(out, id)
		}
	}
	return out
}

// author renders a snippet's author: the public view, or the ghost user
// when the author is gone (until the subscriber removes their snippets).
func (s *Service) author(ctx context.Context, base string, id uint64, cache map[uint64]identity.BasicUser) (identity.BasicUser, error) {
	if u, ok := cache[id]; ok {
		return u, nil
	}
	info, err := s.users.UserByID(ctx, int64(id))
	var v identity.BasicUser
	switch {
	case errors.Is(err, identity.ErrUserNotFound):
		v = identity.GhostUser(base, int64(id))
	case err != nil:
		return v, err
	default:
		v = identity.NewBasicUser(base, info)
	}
	if cache != nil {
		cache[id] = v
	}
	return v, nil
}

func itoa(id uint64) string { return strconv.FormatUint(id, 10) }
