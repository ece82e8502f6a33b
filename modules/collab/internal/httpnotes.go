package internal

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

// AuthorView is a note's author: the public basic view with email and
// created_at, as the spec's Note shows it (both null for a deleted user,
// shown as the ghost user).
type AuthorView struct {
	identity.BasicUser
	Email     *string   `json:"email"`
	CreatedAt *api.Time `json:"created_at"`
}

// NoteView is the Note resource (GitLab 9.x's, with the upvote and
// downvote booleans of its v3 view, always false: award emoji are not
// votes on notes here).
type NoteView struct {
	ID           int64      `json:"id"`
	Body         string     `json:"body"`
	Attachment   *string    `json:"attachment"`
	Author       AuthorView `json:"author"`
	CreatedAt    api.Time   `json:"created_at"`
	UpdatedAt    api.Time   `json:"updated_at"`
	System       bool       `json:"system"`
	NoteableID   int64      `json:"noteable_id"`
	NoteableType string     `json:"noteable_type"`
	Upvote       bool       `json:"upvote"`
	Downvote     bool       `json:"downvote"`
}

// EventNoteView is the note of a "commented on" feed entry, as the spec's
// Event resource shows it.
type EventNoteView struct {
	ID           int64      `json:"id"`
	Body         string     `json:"body"`
	Attachment   *string    `json:"attachment"`
	Author       AuthorView `json:"author"`
	CreatedAt    api.Time   `json:"created_at"`
	System       bool       `json:"system"`
	NoteableID   int64      `json:"noteable_id"`
	NoteableType string     `json:"noteable_type"`
}

type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type listInput struct {
	ProjectPath
	api.PageParams
}

type NoteInput struct {
	ProjectPath
	NoteID string `path:"note_id" doc:"The note's id"`
}

// createBody: body is required (the schema says so); a null is let
// through (nullable) for checkBody to call it missing, as an absent one.
type createBody struct {
	Body      *string `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
	CreatedAt *string `json:"created_at,omitempty" doc:"ISO 8601 date-time; administrators and project owners only, ignored for others"`
}

type createInput struct {
	ProjectPath
	Body createBody
}

type updateInput struct {
	NoteInput
	Body struct {
		Body *string `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
	}
}

type listOutput struct {
	api.PageHeaders
	Body []NoteView
}

type noteOutput struct {
	Body any
}

// registerKind serves the three notes families' operations for one kind.
// The noteable's path parameter is the kind's own (":issue_iid"), read from
// the request, since an input struct's tags cannot vary by kind.
func (s *Service) registerKind(a *api.API, k target.Kind) {
	base := "/projects/{id}/" + k.Path + "/{" + k.Param + "}/notes"
	tags := []string{"notes", k.Path}
	id := func(verb string) string { return verb + "-" + k.Path + "-note" }
	api.Register(a, api.Op{ID: id("list") + "s", Method: http.MethodGet, Path: base, Tags: tags, Access: api.Public,
		Summary: "The notes of a " + k.Type + ", oldest first"}, func(ctx context.Context, in *listInput) (*listOutput, error) {
		return s.list(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("get"), Method: http.MethodGet, Path: base + "/{note_id}", Tags: tags, Access: api.Public,
		Summary: "One note of a " + k.Type}, func(ctx context.Context, in *NoteInput) (*noteOutput, error) {
		return s.get(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("create"), Method: http.MethodPost, Path: base, Tags: tags, Access: api.SignedIn,
		Summary: "Adds a note to a " + k.Type}, func(ctx context.Context, in *createInput) (*noteOutput, error) {
		return s.create(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("update"), Method: http.MethodPut, Path: base + "/{note_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Changes a note's body (its author, a Master or an administrator)"}, func(ctx context.Context, in *updateInput) (*noteOutput, error) {
		return s.update(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("delete"), Method: http.MethodDelete, Path: base + "/{note_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Deletes a note (its author, a Master or an administrator)"}, func(ctx context.Context, in *NoteInput) (*struct{}, error) {
		return nil, s.delete(ctx, k, in)
	})
}

// where names the target a request's path names: its kind, the :id and
// the kind's own parameter (read from the request, since an input
// struct's tags cannot vary by kind).
func where(ctx context.Context, k target.Kind, projectRef string) target.Where {
	w := target.Where{Type: k.Type, Project: projectRef}
	if r := api.Request(ctx); r != nil {
		w.Ref = r.PathValue(k.Param)
	}
	return w
}

// page is the window a request's paging asks for.
func page(p api.PageParams) target.Page { return target.Page{Offset: p.Offset(), Limit: p.Limit()} }

// noteInput is what a new note says, its created_at parsed (a bad one is
// the service's to refuse, to those whose created_at counts).
func noteInput(body, createdAt *string) target.NoteInput {
	in := target.NoteInput{Body: body}
	if createdAt != nil {
		t, err := api.ParseTime(*createdAt)
		if err != nil {
			in.BadCreatedAt = true
		} else {
			in.CreatedAt = &t
		}
	}
	return in
}

func (s *Service) list(ctx context.Context, k target.Kind, in *listInput) (*listOutput, error) {
	list, total, err := s.Notes(ctx, where(ctx, k, in.ID), page(in.PageParams))
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, list)
	if err != nil {
		return nil, err
	}
	return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (s *Service) get(ctx context.Context, k target.Kind, in *NoteInput) (*noteOutput, error) {
	note, n, err := s.Note(ctx, where(ctx, k, in.ID), in.NoteID)
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, []target.Note{note})
	if err != nil {
		return nil, err
	}
	if k.NoteView != nil {
		v, err := k.NoteView(ctx, n, views[0])
		if err != nil {
			return nil, err
		}
		return &noteOutput{Body: v}, nil
	}
	return &noteOutput{Body: views[0]}, nil
}

func (s *Service) create(ctx context.Context, k target.Kind, in *createInput) (*noteOutput, error) {
	posted, err := s.CreateNote(ctx, where(ctx, k, in.ID), noteInput(in.Body.Body, in.Body.CreatedAt))
	if err != nil {
		// An emoji-only note that gives no award is answered in the
		// notes API's words.
		return nil, awardError(err, "Note")
	}
	if posted.Award != nil {
		v, err := s.awardView(ctx, *posted.Award)
		if err != nil {
			return nil, err
		}
		return &noteOutput{Body: v}, nil
	}
	views, err := s.views(ctx, []target.Note{*posted.Note})
	if err != nil {
		return nil, err
	}
	return &noteOutput{Body: views[0]}, nil
}

func (s *Service) update(ctx context.Context, k target.Kind, in *updateInput) (*noteOutput, error) {
	note, err := s.UpdateNote(ctx, where(ctx, k, in.ID), in.NoteID, in.Body.Body)
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, []target.Note{note})
	if err != nil {
		return nil, err
	}
	return &noteOutput{Body: views[0]}, nil
}

func (s *Service) delete(ctx context.Context, k target.Kind, in *NoteInput) error {
	return s.DeleteNote(ctx, where(ctx, k, in.ID), in.NoteID)
}

// author is a user's view in a note; a deleted user is the ghost user.
func (s *Service) author(ctx context.Context, id int64) (AuthorView, error) {
	base := api.ExternalURLFrom(ctx)
	u, err := s.users.UserByID(ctx, id)
	if errors.Is(err, identity.ErrUserNotFound) {
		return AuthorView{BasicUser: identity.GhostUser(base, id)}, nil
	}
	if err != nil {
		return AuthorView{}, err
	}
	email := u.Email
	return AuthorView{BasicUser: identity.NewBasicUser(base, u), Email: &email, CreatedAt: api.TimePtr(u.CreatedAt)}, nil
}

func (s *Service) views(ctx context.Context, list []target.Note) ([]NoteView, error) {
	out := make([]NoteView, 0, len(list))
	authors := map[int64]AuthorView{}
	for _, note := range list {
		a, ok := authors[note.AuthorID]
		if !ok {
			var err error
			if a, err = s.author(ctx, note.AuthorID); err != nil {
				return nil, err
			}
			authors[note.AuthorID] = a
		}
		out = append(out, noteView(note, a))
	}
	return out, nil
}

func noteView(n target.Note, a AuthorView) NoteView {
	return NoteView{ID: n.ID, Body: n.Body, Author: a, CreatedAt: api.NewTime(n.CreatedAt), UpdatedAt: api.NewTime(n.UpdatedAt),
		System: n.System, NoteableID: n.NoteableID, NoteableType: n.NoteableType}
}

// presenter renders for the service what it stores already rendered: the
// note of a "commented on" feed entry, as the events API shows it.
type presenter struct{ s *Service }

// EventNote looks the author up once, before the write, and renders the
// note once it has its id.
func (p presenter) EventNote(ctx context.Context, authorID int64) (func(*Note) (json.RawMessage, error), error) {
	a, err := p.s.author(ctx, authorID)
	if err != nil {
		return nil, err
	}
	return func(note *Note) (json.RawMessage, error) {
		return json.Marshal(EventNoteView{ID: note.ID, Body: note.Body, Author: a, CreatedAt: api.NewTime(note.CreatedAt),
			System: note.System, NoteableID: note.NoteableID, NoteableType: note.NoteableType})
	}, nil
}
