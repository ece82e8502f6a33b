package internal

// The HTTP adapter: GitLab's routes decode their parameters, call
// snippet.Service, render GitLab's JSON views (httpviews.go) and leave the
// service's errors to mapErrors. Nothing else in the module speaks HTTP.

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// handlers serve the routes over the service; users render the authors.
type handlers struct {
	svc   snippet.Service
	users identity.Users
}

// NewRoutes registers the module's operations.
func NewRoutes(s *Service) fennec.Routes {
	h := handlers{svc: s, users: s.users}
	return fennec.Routes{Name: "snippets", Register: func(a *api.API) {
		mapErrors(a)
		h.registerProjectSnippets(a)
		h.registerPersonalSnippets(a)
	}}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (projects.ErrForbidden and ErrNotFound are the projects module's).
func mapErrors(a *api.API) {
	a.MapError(snippet.ErrNotFound, func(error) *api.Error { return api.NotFound("Snippet") })
	a.MapError(snippet.ErrMissing, func(err error) *api.Error {
		var pe *snippet.ParamsError
		if !errors.As(err, &pe) {
			return nil
		}
		return api.Missing(pe.Params...)
	})
	a.MapError(snippet.ErrNothingGiven, func(err error) *api.Error {
		var pe *snippet.ParamsError
		if !errors.As(err, &pe) {
			return nil
		}
		return api.AtLeastOne(pe.Params...)
	})
	a.MapError(snippet.ErrInvalidVisibility, func(error) *api.Error { return api.NotValidValue("visibility") })
	a.MapError(snippet.ErrInvalid, func(err error) *api.Error {
		var ie *snippet.InvalidError
		if !errors.As(err, &ie) {
			return nil
		}
		return api.Validation(ie.Fields)
	})
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
// let through the schema (nullable) for the service to call it missing,
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

// fields are the service's input: the content given as code or content
// (code wins).
func (b *snippetBody) fields() snippet.Fields {
	text := b.Code
	if text == nil {
		text = b.Content
	}
	return snippet.Fields{Title: b.Title, FileName: b.FileName, Content: text, Description: b.Description,
		Visibility: (*snippet.Visibility)(b.Visibility)}
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

func (h handlers) registerProjectSnippets(a *api.API) {
	tags := []string{"project snippets"}
	api.Register(a, api.Op{ID: "list-project-snippets", Method: http.MethodGet, Path: "/projects/{id}/snippets", Tags: tags,
		Summary: "A project's snippets the caller may see, newest first", Access: api.Public}, h.listProjectSnippets)
	api.Register(a, api.Op{ID: "get-project-snippet", Method: http.MethodGet, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "A project snippet", Access: api.Public}, h.getProjectSnippet)
	api.Register(a, api.Op{ID: "create-project-snippet", Method: http.MethodPost, Path: "/projects/{id}/snippets", Tags: tags,
		Summary: "Create a project snippet (Reporter or above)", Access: api.SignedIn}, h.createProjectSnippet)
	api.Register(a, api.Op{ID: "update-project-snippet", Method: http.MethodPut, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "Change a project snippet (its author, Master or above)", Access: api.SignedIn}, h.updateProjectSnippet)
	api.Register(a, api.Op{ID: "delete-project-snippet", Method: http.MethodDelete, Path: "/projects/{id}/snippets/{snippet_id}", Tags: tags,
		Summary: "Delete a project snippet; 200 even when it does not exist", Access: api.SignedIn, Status: http.StatusOK}, h.deleteProjectSnippet)
	api.Register(a, api.Op{ID: "project-snippet-raw", Method: http.MethodGet, Path: "/projects/{id}/snippets/{snippet_id}/raw", Tags: tags,
		Summary: "A project snippet's content as plain text", Access: api.Public}, h.rawProjectSnippet)
}

func (h handlers) listProjectSnippets(ctx context.Context, in *listProjectInput) (*snippetsOutput, error) {
	list, total, err := h.svc.ProjectSnippets(ctx, in.ID, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	views, err := h.views(ctx, list)
	if err != nil {
		return nil, err
	}
	return &snippetsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (h handlers) getProjectSnippet(ctx context.Context, in *SnippetPath) (*snippetOutput, error) {
	sn, err := h.svc.ProjectSnippet(ctx, in.ID, snippet.ID(in.SnippetID))
	return h.one(ctx, sn, err)
}

func (h handlers) createProjectSnippet(ctx context.Context, in *struct {
	ProjectPath
	Body createSnippetBody
}) (*snippetOutput, error) {
	sn, err := h.svc.CreateProjectSnippet(ctx, in.ID, (*snippetBody)(&in.Body).fields())
	return h.one(ctx, sn, err)
}

func (h handlers) updateProjectSnippet(ctx context.Context, in *struct {
	SnippetPath
	Body snippetBody
}) (*snippetOutput, error) {
	sn, err := h.svc.UpdateProjectSnippet(ctx, in.ID, snippet.ID(in.SnippetID), in.Body.fields())
	return h.one(ctx, sn, err)
}

// one answers a command or query on one project snippet.
func (h handlers) one(ctx context.Context, sn snippet.Snippet, err error) (*snippetOutput, error) {
	if err != nil {
		return nil, err
	}
	v, err := h.view(ctx, sn, nil)
	if err != nil {
		return nil, err
	}
	return &snippetOutput{Body: &v}, nil
}

func (h handlers) deleteProjectSnippet(ctx context.Context, in *SnippetPath) (*deleteOutput, error) {
	deleted, err := h.svc.DeleteProjectSnippet(ctx, in.ID, snippet.ID(in.SnippetID))
	if err != nil {
		return nil, err
	}
	if deleted == nil {
		return &deleteOutput{Body: []byte{}}, nil
	}
	v, err := h.view(ctx, *deleted, nil)
	if err != nil {
		return nil, err
	}
	return &deleteOutput{Body: &v}, nil
}

func (h handlers) rawProjectSnippet(ctx context.Context, in *SnippetPath) (*rawOutput, error) {
	sn, body, err := h.svc.ProjectSnippetContent(ctx, in.ID, snippet.ID(in.SnippetID))
	if err != nil {
		return nil, err
	}
	return newRaw(sn.FileName, body), nil
}
