package internal

// Personal snippets, GitLab 9.x's /snippets: a snippet of no project, by a
// signed-in user (the whole API answers 401 to anonymous callers, as 9.x's
// did), parameter content instead of code, visibility internal unless
// given, and raw_url in the view.

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// PersonalPath is a personal snippet's :id.
type PersonalPath struct {
	ID int64 `path:"id" doc:"The snippet's id"`
}

type personalListOutput struct {
	api.PageHeaders
	Body []PersonalSnippetView
}

type personalOutput struct {
	Body *PersonalSnippetView
}

type personalBody struct {
	Title       *string `json:"title,omitempty" doc:"The title"`
	FileName    *string `json:"file_name,omitempty" doc:"The file name (one name, no path)"`
	Content     *string `json:"content,omitempty" doc:"The content (at most 1 MiB of UTF-8 text)"`
	Description *string `json:"description,omitempty" doc:"A description"`
	Visibility  *string `json:"visibility,omitempty" enum:"private,internal,public" doc:"private, internal (the default) or public"`
}

func (b *personalBody) fields() fields {
	return fields{Title: b.Title, FileName: b.FileName, Content: b.Content, Description: b.Description, Visibility: b.Visibility}
}

func (s *Service) registerPersonalSnippets(a *api.API) {
	tags := []string{"snippets"}
	api.Register(a, api.Op{ID: "list-snippets", Method: http.MethodGet, Path: "/snippets", Tags: tags,
		Summary: "The caller's personal snippets, newest first", Access: api.SignedIn}, s.listOwnSnippets)
	api.Register(a, api.Op{ID: "list-public-snippets", Method: http.MethodGet, Path: "/snippets/public", Tags: tags,
		Summary: "Every public personal snippet, newest first", Access: api.SignedIn}, s.listPublicSnippets)
	api.Register(a, api.Op{ID: "get-snippet", Method: http.MethodGet, Path: "/snippets/{id}", Tags: tags,
		Summary: "A personal snippet", Access: api.SignedIn}, s.getPersonalSnippet)
	api.Register(a, api.Op{ID: "create-snippet", Method: http.MethodPost, Path: "/snippets", Tags: tags,
		Summary: "Create a personal snippet", Access: api.SignedIn}, s.createPersonalSnippet)
	api.Register(a, api.Op{ID: "update-snippet", Method: http.MethodPut, Path: "/snippets/{id}", Tags: tags,
		Summary: "Change a personal snippet (its author or an administrator)", Access: api.SignedIn}, s.updatePersonalSnippet)
	api.Register(a, api.Op{ID: "delete-snippet", Method: http.MethodDelete, Path: "/snippets/{id}", Tags: tags,
		Summary: "Delete a personal snippet (its author or an administrator)", Access: api.SignedIn}, s.deletePersonalSnippet)
	api.Register(a, api.Op{ID: "snippet-raw", Method: http.MethodGet, Path: "/snippets/{id}/raw", Tags: tags,
		Summary: "A personal snippet's content as plain text", Access: api.SignedIn}, s.rawPersonalSnippet)
}

// personalPage renders one page of the personal snippets an index key
// names.
func (s *Service) personalPage(ctx context.Context, index, key string, pp api.PageParams) (*personalListOutput, error) {
	var page []*Snippet
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := snippets.IDsBy(tx, index, key)
		if err != nil {
			return err
		}
		ids = newestFirst(ids)
		total = len(ids)
		page = page[:0]
		for _, id := range api.Window(ids, pp) {
			sn, err := snippets.Get(tx, id)
			if err != nil {
				return err
			}
			page = append(page, sn)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &personalListOutput{PageHeaders: api.Paginate(ctx, pp, total), Body: make([]PersonalSnippetView, 0, len(page))}
	cache := map[uint64]identity.BasicUser{}
	for _, sn := range page {
		v, err := s.personalView(ctx, sn, cache)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

func (s *Service) listOwnSnippets(ctx context.Context, in *api.PageParams) (*personalListOutput, error) {
	return s.personalPage(ctx, "personal_author", u64(uint64(auth.FromContext(ctx).UserID())), *in)
}

func (s *Service) listPublicSnippets(ctx context.Context, in *api.PageParams) (*personalListOutput, error) {
	return s.personalPage(ctx, "visibility", scopeKey(0, Public), *in)
}

// personalSnippet loads a personal snippet the caller may see.
func personalSnippet(tx *store.Tx, p *auth.Principal, id int64) (*Snippet, error) {
	if id <= 0 {
		return nil, ErrSnippetNotFound
	}
	sn, err := snippets.Get(tx, uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!sn.personal() || !canRead(p, 0, sn))) {
		return nil, ErrSnippetNotFound
	}
	return sn, err
}

// ownsOrAdmin is update_personal_snippet / destroy_personal_snippet.
func ownsOrAdmin(p *auth.Principal, sn *Snippet) bool {
	return p.IsAdmin() || (!p.IsAnonymous() && uint64(p.UserID()) == sn.AuthorID)
}

func (s *Service) getPersonalSnippet(ctx context.Context, in *PersonalPath) (*personalOutput, error) {
	var sn *Snippet
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		sn, err = personalSnippet(tx, auth.FromContext(ctx), in.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := s.personalView(ctx, sn, nil)
	if err != nil {
		return nil, err
	}
	return &personalOutput{Body: &v}, nil
}

func (s *Service) createPersonalSnippet(ctx context.Context, in *struct{ Body personalBody }) (*personalOutput, error) {
	// External users may not create personal snippets in GitLab.
	if p := auth.FromContext(ctx); p.User.External {
		return nil, projects.ErrForbidden
	}
	b := &in.Body
	var missing []string
	for _, m := range []struct {
		name  string
		value *string
	}{{"title", b.Title}, {"file_name", b.FileName}, {"content", b.Content}} {
		if m.value == nil {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return nil, api.Missing(missing...)
	}
	f := b.fields()
	if f.Visibility == nil {
		internal := Internal
		f.Visibility = &internal
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	sn, err := s.create(ctx, 0, f)
	if err != nil {
		return nil, err
	}
	v, err := s.personalView(ctx, sn, nil)
	if err != nil {
		return nil, err
	}
	return &personalOutput{Body: &v}, nil
}

func (s *Service) updatePersonalSnippet(ctx context.Context, in *struct {
	PersonalPath
	Body personalBody
}) (*personalOutput, error) {
	f := in.Body.fields()
	if f.Title == nil && f.FileName == nil && f.Content == nil && f.Visibility == nil && f.Description == nil {
		return nil, api.AtLeastOne("title", "file_name", "content", "visibility")
	}
	p := auth.FromContext(ctx)
	var sn *Snippet
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = personalSnippet(tx, p, in.ID); err != nil {
			return err
		}
		if !ownsOrAdmin(p, sn) {
			return projects.ErrForbidden
		}
		if err := f.check(); err != nil {
			return err
		}
		return apply(tx, sn, f, s.now())
	})
	if err != nil {
		return nil, err
	}
	v, err := s.personalView(ctx, sn, nil)
	if err != nil {
		return nil, err
	}
	return &personalOutput{Body: &v}, nil
}

// deletePersonalSnippet is 9.x's: 404 when the caller sees no such
// snippet, 403 when they see it but it is not theirs, 204 when deleted.
func (s *Service) deletePersonalSnippet(ctx context.Context, in *PersonalPath) (*struct{}, error) {
	p := auth.FromContext(ctx)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		sn, err := personalSnippet(tx, p, in.ID)
		if err != nil {
			return err
		}
		if !ownsOrAdmin(p, sn) {
			return projects.ErrForbidden
		}
		return s.remove(tx, sn.ID)
	})
	if err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

func (s *Service) rawPersonalSnippet(ctx context.Context, in *PersonalPath) (*rawOutput, error) {
	var sn *Snippet
	var body []byte
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = personalSnippet(tx, auth.FromContext(ctx), in.ID); err != nil {
			return err
		}
		body = content(tx, sn.ID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newRaw(sn.FileName, body), nil
}
