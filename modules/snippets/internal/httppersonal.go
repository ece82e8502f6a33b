package internal

// The HTTP adapter of personal snippets, GitLab 9.x's /snippets (signed-in
// callers only, parameter content instead of code, raw_url in the view).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
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

func (b *personalBody) fields() snippet.Fields {
	return snippet.Fields{Title: b.Title, FileName: b.FileName, Content: b.Content, Description: b.Description,
		Visibility: (*snippet.Visibility)(b.Visibility)}
}

func (h handlers) registerPersonalSnippets(a *api.API) {
	tags := []string{"snippets"}
	api.Register(a, api.Op{ID: "list-snippets", Method: http.MethodGet, Path: "/snippets", Tags: tags,
		Summary: "The caller's personal snippets, newest first", Access: api.SignedIn}, h.listOwnSnippets)
	api.Register(a, api.Op{ID: "list-public-snippets", Method: http.MethodGet, Path: "/snippets/public", Tags: tags,
		Summary: "Every public personal snippet, newest first", Access: api.SignedIn}, h.listPublicSnippets)
	api.Register(a, api.Op{ID: "get-snippet", Method: http.MethodGet, Path: "/snippets/{id}", Tags: tags,
		Summary: "A personal snippet", Access: api.SignedIn}, h.getPersonalSnippet)
	api.Register(a, api.Op{ID: "create-snippet", Method: http.MethodPost, Path: "/snippets", Tags: tags,
		Summary: "Create a personal snippet", Access: api.SignedIn}, h.createPersonalSnippet)
	api.Register(a, api.Op{ID: "update-snippet", Method: http.MethodPut, Path: "/snippets/{id}", Tags: tags,
		Summary: "Change a personal snippet (its author or an administrator)", Access: api.SignedIn}, h.updatePersonalSnippet)
	api.Register(a, api.Op{ID: "delete-snippet", Method: http.MethodDelete, Path: "/snippets/{id}", Tags: tags,
		Summary: "Delete a personal snippet (its author or an administrator)", Access: api.SignedIn}, h.deletePersonalSnippet)
	api.Register(a, api.Op{ID: "snippet-raw", Method: http.MethodGet, Path: "/snippets/{id}/raw", Tags: tags,
		Summary: "A personal snippet's content as plain text", Access: api.SignedIn}, h.rawPersonalSnippet)
}

func (h handlers) listOwnSnippets(ctx context.Context, in *api.PageParams) (*personalListOutput, error) {
	list, total, err := h.svc.OwnSnippets(ctx, in.Offset(), in.Limit())
	return h.personalList(ctx, *in, list, total, err)
}

func (h handlers) listPublicSnippets(ctx context.Context, in *api.PageParams) (*personalListOutput, error) {
	list, total, err := h.svc.PublicSnippets(ctx, in.Offset(), in.Limit())
	return h.personalList(ctx, *in, list, total, err)
}

// personalList answers a page of personal snippets.
func (h handlers) personalList(ctx context.Context, pp api.PageParams, list []snippet.Snippet, total int, err error) (*personalListOutput, error) {
	if err != nil {
		return nil, err
	}
	out := &personalListOutput{PageHeaders: api.Paginate(ctx, pp, total), Body: make([]PersonalSnippetView, 0, len(list))}
	cache := map[int64]identity.BasicUser{}
	for _, sn := range list {
		v, err := h.personalView(ctx, sn, cache)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// personal answers a command or query on one personal snippet.
func (h handlers) personal(ctx context.Context, sn snippet.Snippet, err error) (*personalOutput, error) {
	if err != nil {
		return nil, err
	}
	v, err := h.personalView(ctx, sn, nil)
	if err != nil {
		return nil, err
	}
	return &personalOutput{Body: &v}, nil
}

func (h handlers) getPersonalSnippet(ctx context.Context, in *PersonalPath) (*personalOutput, error) {
	sn, err := h.svc.PersonalSnippet(ctx, snippet.ID(in.ID))
	return h.personal(ctx, sn, err)
}

func (h handlers) createPersonalSnippet(ctx context.Context, in *struct{ Body personalBody }) (*personalOutput, error) {
	sn, err := h.svc.CreatePersonalSnippet(ctx, in.Body.fields())
	return h.personal(ctx, sn, err)
}

func (h handlers) updatePersonalSnippet(ctx context.Context, in *struct {
	PersonalPath
	Body personalBody
}) (*personalOutput, error) {
	sn, err := h.svc.UpdatePersonalSnippet(ctx, snippet.ID(in.ID), in.Body.fields())
	return h.personal(ctx, sn, err)
}

// deletePersonalSnippet is 9.x's: 404 when the caller sees no such
// snippet, 403 when they see it but it is not theirs, 204 when deleted.
func (h handlers) deletePersonalSnippet(ctx context.Context, in *PersonalPath) (*struct{}, error) {
	if err := h.svc.DeletePersonalSnippet(ctx, snippet.ID(in.ID)); err != nil {
		return nil, err
	}
	return &struct{}{}, nil
}

func (h handlers) rawPersonalSnippet(ctx context.Context, in *PersonalPath) (*rawOutput, error) {
	sn, body, err := h.svc.PersonalSnippetContent(ctx, snippet.ID(in.ID))
	if err != nil {
		return nil, err
	}
	return newRaw(sn.FileName, body), nil
}
