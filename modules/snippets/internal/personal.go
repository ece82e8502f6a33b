package internal

// Personal snippets, GitLab 9.x's /snippets: a snippet of no project, for
// signed-in users only (9.x's whole API answered 401 to anonymous
// callers), content by the parameter content rather than code, and
// visibility internal unless given.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// personalPage is one page of the personal snippets an index key names.
func (s *Service) personalPage(ctx context.Context, index, key string, offset, limit int) ([]snippet.Snippet, int, error) {
	if err := signedIn(ctx); err != nil {
		return nil, 0, err
	}
	var list []*Snippet
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := snippets.IDsBy(tx, index, key)
		if err != nil {
			return err
		}
		ids = newestFirst(ids)
		total = len(ids)
		list, err = page(tx, ids, offset, limit)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return records(list, ""), total, nil
}

// OwnSnippets implements snippet.Service.
func (s *Service) OwnSnippets(ctx context.Context, offset, limit int) ([]snippet.Snippet, int, error) {
	return s.personalPage(ctx, "personal_author", store.IDString(auth.FromContext(ctx).UserID()), offset, limit)
}

// PublicSnippets implements snippet.Service.
func (s *Service) PublicSnippets(ctx context.Context, offset, limit int) ([]snippet.Snippet, int, error) {
	return s.personalPage(ctx, "visibility", scopeKey(0, snippet.Public), offset, limit)
}

// signedIn refuses an anonymous caller.
func signedIn(ctx context.Context) error {
	if auth.FromContext(ctx).IsAnonymous() {
		return auth.ErrUnauthorized
	}
	return nil
}

// personalSnippet loads a personal snippet the caller may see.
func personalSnippet(tx *store.Tx, p *auth.Principal, id snippet.ID) (*Snippet, error) {
	if id <= 0 {
		return nil, snippet.ErrNotFound
	}
	sn, err := snippets.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!sn.personal() || !canRead(p, 0, sn))) {
		return nil, snippet.ErrNotFound
	}
	return sn, err
}

// ownsOrAdmin is update_personal_snippet / destroy_personal_snippet.
func ownsOrAdmin(p *auth.Principal, sn *Snippet) bool {
	return p.IsAdmin() || (!p.IsAnonymous() && p.UserID() == sn.AuthorID)
}

// PersonalSnippet implements snippet.Service.
func (s *Service) PersonalSnippet(ctx context.Context, id snippet.ID) (snippet.Snippet, error) {
	sn, _, err := s.readPersonalSnippet(ctx, id, false)
	return sn, err
}

// PersonalSnippetContent implements snippet.Service.
func (s *Service) PersonalSnippetContent(ctx context.Context, id snippet.ID) (snippet.Snippet, []byte, error) {
	return s.readPersonalSnippet(ctx, id, true)
}

// readPersonalSnippet reads a snippet, and its content when withContent.
func (s *Service) readPersonalSnippet(ctx context.Context, id snippet.ID, withContent bool) (snippet.Snippet, []byte, error) {
	if err := signedIn(ctx); err != nil {
		return snippet.Snippet{}, nil, err
	}
	var sn *Snippet
	var body []byte
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = personalSnippet(tx, auth.FromContext(ctx), id); err != nil {
			return err
		}
		if withContent {
			body = content(tx, sn.ID)
		}
		return nil
	})
	if err != nil {
		return snippet.Snippet{}, nil, err
	}
	return record(sn, ""), body, nil
}

// CreatePersonalSnippet implements snippet.Service.
func (s *Service) CreatePersonalSnippet(ctx context.Context, f snippet.Fields) (snippet.Snippet, error) {
	if err := signedIn(ctx); err != nil {
		return snippet.Snippet{}, err
	}
	// External users may not create personal snippets in GitLab.
	if p := auth.FromContext(ctx); p.User.External {
		return snippet.Snippet{}, projects.ErrForbidden
	}
	err := missing(param{"title", f.Title != nil}, param{"file_name", f.FileName != nil}, param{"content", f.Content != nil})
	if err != nil {
		return snippet.Snippet{}, err
	}
	if f.Visibility == nil {
		internal := snippet.Internal
		f.Visibility = &internal
	}
	if err := check(f); err != nil {
		return snippet.Snippet{}, err
	}
	sn, err := s.create(ctx, 0, f)
	if err != nil {
		return snippet.Snippet{}, err
	}
	return record(sn, ""), nil
}

// UpdatePersonalSnippet implements snippet.Service.
func (s *Service) UpdatePersonalSnippet(ctx context.Context, id snippet.ID, f snippet.Fields) (snippet.Snippet, error) {
	if err := signedIn(ctx); err != nil {
		return snippet.Snippet{}, err
	}
	if err := nothingGiven(f, "title", "file_name", "content", "visibility"); err != nil {
		return snippet.Snippet{}, err
	}
	p := auth.FromContext(ctx)
	var sn *Snippet
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = personalSnippet(tx, p, id); err != nil {
			return err
		}
		if !ownsOrAdmin(p, sn) {
			return projects.ErrForbidden
		}
		if err := check(f); err != nil {
			return err
		}
		return apply(tx, sn, f, s.now())
	})
	if err != nil {
		return snippet.Snippet{}, err
	}
	return record(sn, ""), nil
}

// DeletePersonalSnippet implements snippet.Service: 9.x's answers are
// ErrNotFound when the caller sees no such snippet and
// projects.ErrForbidden when they see it but it is not theirs.
func (s *Service) DeletePersonalSnippet(ctx context.Context, id snippet.ID) error {
	if err := signedIn(ctx); err != nil {
		return err
	}
	p := auth.FromContext(ctx)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		sn, err := personalSnippet(tx, p, id)
		if err != nil {
			return err
		}
		if !ownsOrAdmin(p, sn) {
			return projects.ErrForbidden
		}
		return s.remove(tx, sn.ID)
	})
}
