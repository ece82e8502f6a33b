package internal

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// NewRoutes registers the module's operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "snippets", Register: func(a *api.API) {
		mapErrors(a)
		s.registerProjectSnippets(a)
		s.registerPersonalSnippets(a)
	}}
}

// ProjectPath is a project's :id. Exported (as SnippetPath) because
// operations embed it: huma reads the parameters of exported embedded
// structs only.
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

// SnippetPath is a project snippet's :id and :snippet_id.
type SnippetPath struct {
	ProjectPath
	SnippetID int64 `path:"snippet_id" doc:"The snippet's id"`
}

// snippetBody is the parameters of a create or an update. The spec's
// project snippet parameter is code; content, the personal snippets' name
// (and what later GitLab and today's client-go send for project snippets
// too), is taken as the same thing.
type snippetBody struct {
	Title       *string `json:"title,omitempty" doc:"The title"`
	FileName    *string `json:"file_name,omitempty" doc:"The file name (one name, no path)"`
	Code        *string `json:"code,omitempty" doc:"The content (at most 1 MiB of UTF-8 text)"`
	Content     *string `json:"content,omitempty" doc:"Same as code"`
	Description *string `json:"description,omitempty" doc:"A description"`
	Visibility  *string `json:"visibility,omitempty" enum:"private,internal,public" doc:"private, internal or public"`
}

// createSnippetBody is snippetBody as POST documents it: GitLab requires
// title, file_name, code and visibility there, while PUT takes any of
// them. Only the tags differ, so snippetBody(b) converts it. A null is
// let through the schema (nullable) for the handler to call it missing,
// as it does an absent one.
type createSnippetBody struct {
	Title       *string `json:"title,omitempty" required:"true" nullable:"true" doc:"The title"`
	FileName    *string `json:"file_name,omitempty" required:"true" nullable:"true" doc:"The file name (one name, no path)"`
	Code        *string `json:"code,omitempty" doc:"The content (at most 1 MiB of UTF-8 text); required, as code or as content"`
	Content     *string `json:"content,omitempty" doc:"Same as code"`
	Description *string `json:"description,omitempty" doc:"A description"`
	Visibility  *string `json:"visibility,omitempty" required:"true" nullable:"true" enum:"private,internal,public" doc:"private, internal or public"`
}

// Resolve says "code is missing" beside the schema's missing parameters:
// code may come as content, which a schema's required list cannot say,
// and the handler is not reached when the schema refuses the body.
func (b *createSnippetBody) Resolve(huma.Context) []error {
	if b.Code == nil && b.Content == nil {
		return []error{&huma.ErrorDetail{Location: "body", Message: "expected required property code to be present"}}
	}
	return nil
}

// text is the content given as code or content (code wins).
func (b *snippetBody) text() *string {
	if b.Code != nil {
		return b.Code
	}
	return b.Content
}

func (b *snippetBody) fields() fields {
	return fields{Title: b.Title, FileName: b.FileName, Content: b.text(), Description: b.Description, Visibility: b.Visibility}
}

type listProjectInput struct {
	ProjectPath
	api.PageParams
}

type snippetsOutput struct {
	api.PageHeaders
	Body []SnippetView
}

type snippetOutput struct {
	Body *SnippetView
}

// deleteOutput is an idempotent delete's answer: the deleted snippet, or
// an empty 200 when there was none to delete.
type deleteOutput struct {
	Body any
}

func (s *Service) registerProjectSnippets(a *api.API) {
	tags := []string{"project snippets"}
	api.Register(a, api.Op{ID: "list-project-snippets", Method: http.MethodGet, Path: "/projects/{id}/snippets", Tags: tags,
		Summary: "A project's snippets the caller may see, newest first", Access: api.Public}, s.listProjectSnippets)
	api.Register(a, api.Op{ID: "get-project-snippet", Method: http.MethodGet, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "A project snippet", Access: api.Public}, s.getProjectSnippet)
	api.Register(a, api.Op{ID: "create-project-snippet", Method: http.MethodPost, Path: "/projects/{id}/snippets", Tags: tags,
		Summary: "Create a project snippet (Reporter or above)", Access: api.SignedIn}, s.createProjectSnippet)
	api.Register(a, api.Op{ID: "update-project-snippet", Method: http.MethodPut, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "Change a project snippet (its author, Master or above)", Access: api.SignedIn}, s.updateProjectSnippet)
	api.Register(a, api.Op{ID: "delete-project-snippet", Method: http.MethodDelete, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "Delete a project snippet; 200 even when it does not exist", Access: api.SignedIn, Status: http.StatusOK}, s.deleteProjectSnippet)
	api.Register(a, api.Op{ID: "project-snippet-raw", Method: http.MethodGet, Path: "/projects/{id}/snippets/{snippet_id}/raw", Tags: tags,
		Summary: "A project snippet's content as plain text", Access: api.Public}, s.rawProjectSnippet)
}

func (s *Service) listProjectSnippets(ctx context.Context, in *listProjectInput) (*snippetsOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	p := auth.FromContext(ctx)
	var page []*Snippet
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := visibleIDs(tx, p, uint64(info.ID), info.MemberLevel)
		if err != nil {
			return err
		}
		total = len(ids)
		page = page[:0]
		for _, id := range api.Window(ids, in.PageParams) {
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
	out := &snippetsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: make([]SnippetView, 0, len(page))}
	cache := map[uint64]identity.BasicUser{}
	for _, sn := range page {
		v, err := s.view(ctx, sn, info.WebURL, cache)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// projectSnippet loads a snippet of the project that the caller may see.
func projectSnippet(tx *store.Tx, p *auth.Principal, info projects.ProjectInfo, id int64) (*Snippet, error) {
	if id <= 0 {
		return nil, ErrSnippetNotFound
	}
	sn, err := snippets.Get(tx, uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sn.ProjectID != uint64(info.ID) || !canRead(p, info.MemberLevel, sn))) {
		return nil, ErrSnippetNotFound
	}
	return sn, err
}

// canChange is update_project_snippet / admin_project_snippet: the author,
// or a Master of the project (an administrator acts as Owner), and never
// on an archived project.
func canChange(p *auth.Principal, info projects.ProjectInfo, sn *Snippet) bool {
	if info.Archived {
		return false
	}
	return info.Level >= projects.Master || (!p.IsAnonymous() && uint64(p.UserID()) == sn.AuthorID)
}

func (s *Service) getProjectSnippet(ctx context.Context, in *SnippetPath) (*snippetOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	var sn *Snippet
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		sn, err = projectSnippet(tx, auth.FromContext(ctx), info, in.SnippetID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx, sn, info.WebURL, nil)
	if err != nil {
		return nil, err
	}
	return &snippetOutput{Body: &v}, nil
}

func (s *Service) createProjectSnippet(ctx context.Context, in *struct {
	ProjectPath
	Body createSnippetBody
}) (*snippetOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.CreateSnippet)
	if err != nil {
		return nil, err
	}
	b := (*snippetBody)(&in.Body)
	var missing []string
	for _, m := range []struct {
		name  string
		value *string
	}{{"title", b.Title}, {"file_name", b.FileName}, {"code", b.text()}, {"visibility", b.Visibility}} {
		if m.value == nil {
			missing = append(missing, m.name)
		}
	}
	if len(missing) > 0 {
		return nil, api.Missing(missing...)
	}
	f := b.fields()
	if err := f.check(); err != nil {
		return nil, err
	}
	sn, err := s.create(ctx, uint64(info.ID), f)
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx, sn, info.WebURL, nil)
	if err != nil {
		return nil, err
	}
	return &snippetOutput{Body: &v}, nil
}

// create stores a checked snippet by the caller.
func (s *Service) create(ctx context.Context, project uint64, f fields) (*Snippet, error) {
	now := s.now()
	sn := &Snippet{ProjectID: project, AuthorID: uint64(auth.FromContext(ctx).UserID()), Title: *f.Title, FileName: *f.FileName,
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
func apply(tx *store.Tx, sn *Snippet, f fields, now time.Time) error {
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

func (s *Service) updateProjectSnippet(ctx context.Context, in *struct {
	SnippetPath
	Body snippetBody
}) (*snippetOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	f := in.Body.fields()
	if f.Title == nil && f.FileName == nil && f.Content == nil && f.Visibility == nil && f.Description == nil {
		return nil, api.AtLeastOne("title", "file_name", "code", "visibility")
	}
	p := auth.FromContext(ctx)
	var sn *Snippet
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = projectSnippet(tx, p, info, in.SnippetID); err != nil {
			return err
		}
		if !canChange(p, info, sn) {
			return projects.ErrForbidden
		}
		// Checked after the permission, so a caller who may not change
		// the snippet learns nothing from a validation answer.
		if err := f.check(); err != nil {
			return err
		}
		return apply(tx, sn, f, s.now())
	})
	if err != nil {
		return nil, err
	}
	v, err := s.view(ctx, sn, info.WebURL, nil)
	if err != nil {
		return nil, err
	}
	return &snippetOutput{Body: &v}, nil
}

// deleteProjectSnippet is idempotent as the spec has it: a snippet that is
// not there (or that the caller may not see, which is the same to them) is
// a 200 with nothing deleted; one they see but may not change is 403.
func (s *Service) deleteProjectSnippet(ctx context.Context, in *SnippetPath) (*deleteOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	p := auth.FromContext(ctx)
	var deleted *Snippet
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		deleted = nil
		sn, err := projectSnippet(tx, p, info, in.SnippetID)
		if errors.Is(err, ErrSnippetNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !canChange(p, info, sn) {
			return projects.ErrForbidden
		}
		if err := s.remove(tx, sn.ID); err != nil {
			return err
		}
		deleted = sn
		return nil
	})
	if err != nil {
		return nil, err
	}
	if deleted == nil {
		return &deleteOutput{Body: []byte{}}, nil
	}
	v, err := s.view(ctx, deleted, info.WebURL, nil)
	if err != nil {
		return nil, err
	}
	return &deleteOutput{Body: &v}, nil
}

// remove deletes a snippet with its notes, in tx.
func (s *Service) remove(tx *store.Tx, id uint64) error {
	if err := deleteSnippet(tx, id); err != nil {
		return err
	}
	if s.notes == nil {
		return nil
	}
	return s.notes.Remove(tx.Context(), NoteableType, int64(id))
}

func (s *Service) rawProjectSnippet(ctx context.Context, in *SnippetPath) (*rawOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadSnippets)
	if err != nil {
		return nil, err
	}
	var sn *Snippet
	var body []byte
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if sn, err = projectSnippet(tx, auth.FromContext(ctx), info, in.SnippetID); err != nil {
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
