package internal

// The HTTP adapter of discussions (threads): their views, inputs and
// handlers, for every kind that has notes.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

// PositionView is a DiffNote's position as GitLab shows it.
type PositionView struct {
	BaseSHA      string  `json:"base_sha"`
	StartSHA     string  `json:"start_sha"`
	HeadSHA      string  `json:"head_sha"`
	OldPath      string  `json:"old_path"`
	NewPath      string  `json:"new_path"`
	PositionType string  `json:"position_type"`
	OldLine      *int    `json:"old_line"`
	NewLine      *int    `json:"new_line"`
	LineRange    *string `json:"line_range"`
}

// DiscussionNoteView is a note of a thread: the Note resource with the
// fields of GitLab's later Note entity that threads need.
type DiscussionNoteView struct {
	NoteView
	ProjectID   int64               `json:"project_id"`
	Type        *string             `json:"type"`
	Position    *PositionView       `json:"position,omitempty"`
	Resolvable  bool                `json:"resolvable"`
	Resolved    bool                `json:"resolved"`
	ResolvedBy  *identity.BasicUser `json:"resolved_by"`
	ResolvedAt  *api.Time           `json:"resolved_at"`
	NoteableIID *int64              `json:"noteable_iid"`
}

// DiscussionView is GitLab's Discussion resource.
type DiscussionView struct {
	ID             string               `json:"id"`
	IndividualNote bool                 `json:"individual_note"`
	Notes          []DiscussionNoteView `json:"notes"`
}

// threadViews renders threads; authors are read once each.
func (s *Service) threadViews(ctx context.Context, list []target.Thread) ([]DiscussionView, error) {
	var flat []target.Note
	for _, t := range list {
		flat = append(flat, t.Notes...)
	}
	views, err := s.noteViews(ctx, flat)
	if err != nil {
		return nil, err
	}
	out := make([]DiscussionView, 0, len(list))
	i := 0
	for _, t := range list {
		out = append(out, DiscussionView{ID: t.ID, IndividualNote: t.Individual, Notes: views[i : i+len(t.Notes)]})
		i += len(t.Notes)
	}
	return out, nil
}

// noteViews renders notes of threads, in order.
func (s *Service) noteViews(ctx context.Context, list []target.Note) ([]DiscussionNoteView, error) {
	plain, err := s.views(ctx, list)
	if err != nil {
		return nil, err
	}
	resolvers := map[int64]identity.BasicUser{}
	out := make([]DiscussionNoteView, 0, len(list))
	for i, n := range list {
		v := DiscussionNoteView{NoteView: plain[i], ProjectID: n.ProjectID, Resolvable: n.Resolvable}
		if n.Type != "" {
			typ := n.Type
			v.Type = &typ
		}
		if n.NoteableIID > 0 {
			iid := n.NoteableIID
			v.NoteableIID = &iid
		}
		if p := n.Position; p != nil {
			v.Position = &PositionView{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, OldPath: p.OldPath,
				NewPath: p.NewPath, PositionType: p.PositionType, OldLine: p.OldLine, NewLine: p.NewLine}
		}
		if n.Resolved {
			v.Resolved = true
			if n.ResolvedAt != nil {
				v.ResolvedAt = api.TimePtr(*n.ResolvedAt)
			}
			if n.ResolvedBy != 0 {
				u, ok := resolvers[n.ResolvedBy]
				if !ok {
					a, err := s.author(ctx, n.ResolvedBy)
					if err != nil {
						return nil, err
					}
					u = a.BasicUser
					resolvers[n.ResolvedBy] = u
				}
				v.ResolvedBy = &u
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// DiscussionPath names a thread of a noteable (exported: Huma reads the
// parameters of exported embedded structs only).
type DiscussionPath struct {
	ProjectPath
	DiscussionID string `path:"discussion_id" doc:"The thread's id (40 hex digits)"`
}

// DiscussionNotePath names a note of a thread.
type DiscussionNotePath struct {
	DiscussionPath
	NoteID string `path:"note_id" doc:"The note's id"`
}

type discussionsOutput struct {
	api.PageHeaders
	Body []DiscussionView
}

type discussionOutput struct {
	Body *DiscussionView
}

type discussionNoteOutput struct {
	Body *DiscussionNoteView
}

type discussionNotesOutput struct {
	Body []DiscussionNoteView
}

// positionInput is a line comment's position; only text positions are
// taken (GitLab's image positions comment on a point of an image).
type positionInput struct {
	BaseSHA      string `json:"base_sha" required:"true"`
	StartSHA     string `json:"start_sha" required:"true"`
	HeadSHA      string `json:"head_sha" required:"true"`
	PositionType string `json:"position_type" required:"true" enum:"text"`
	NewPath      string `json:"new_path,omitempty"`
	OldPath      string `json:"old_path,omitempty"`
	NewLine      *int   `json:"new_line,omitempty"`
	OldLine      *int   `json:"old_line,omitempty"`
}

type createDiscussionInput struct {
	ProjectPath
	Body struct {
		Body      *string        `json:"body,omitempty" required:"true" nullable:"true" doc:"The note's text"`
		CreatedAt *string        `json:"created_at,omitempty" doc:"ISO 8601 date-time; administrators and project owners only, ignored for others"`
		Position  *positionInput `json:"position,omitempty" doc:"A line comment's place in the diff (merge requests)"`
	}
}

type replyInput struct {
	DiscussionPath
	Body createBody
}

type updateDiscussionNoteInput struct {
	DiscussionNotePath
	Body struct {
		Body     *string `json:"body,omitempty" doc:"The note's text; exactly one of body and resolved"`
		Resolved *bool   `json:"resolved,omitempty" doc:"Resolve or unresolve the note (merge requests)"`
	}
}

type resolveDiscussionInput struct {
	DiscussionPath
	Body struct {
		Resolved bool `json:"resolved" required:"true"`
	}
}

// badRequest is the modern GitLab's bad_request!(reason).
func badRequest(reason string) *api.Error { return api.BadRequest("400 Bad request - " + reason) }

// errBadPosition is GitLab's answer to a line comment whose position names
// no line of the diff (target.ErrBadPosition, from a kind's
// CheckPosition, is answered so too): the note's validation errors, as its
// API prints the Ruby hash of them (behaviour, not documentation).
var errBadPosition = badRequest(`Note {:line_code=>["can't be blank", "must be a valid line code"]}`)

// registerDiscussions serves the threads of one kind.
func (s *Service) registerDiscussions(a *api.API, k target.Kind) {
	base := "/projects/{id}/" + k.Path + "/{" + k.Param + "}/discussions"
	one := base + "/{discussion_id}"
	tags := []string{"discussions", k.Path}
	id := func(verb string) string { return verb + "-" + k.Path + "-discussion" }
	api.Register(a, api.Op{ID: id("list") + "s", Method: http.MethodGet, Path: base, Tags: tags, Access: api.Public,
		Summary: "The threads of a " + k.Type + ", oldest first"}, func(ctx context.Context, in *listInput) (*discussionsOutput, error) {
		return s.listDiscussions(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("get"), Method: http.MethodGet, Path: one, Tags: tags, Access: api.Public,
		Summary: "One thread of a " + k.Type}, func(ctx context.Context, in *DiscussionPath) (*discussionOutput, error) {
		return s.getDiscussion(ctx, k, in)
	})
	summary := "Starts a thread on a " + k.Type
	if k.CheckPosition != nil {
		summary += ", or a line comment with position"
	}
	api.Register(a, api.Op{ID: id("create"), Method: http.MethodPost, Path: base, Tags: tags, Access: api.SignedIn,
		Summary: summary}, func(ctx context.Context, in *createDiscussionInput) (*discussionOutput, error) {
		return s.createDiscussion(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("list") + "-notes", Method: http.MethodGet, Path: one + "/notes", Tags: tags, Access: api.Public,
		Summary: "The notes of a thread of a " + k.Type}, func(ctx context.Context, in *DiscussionPath) (*discussionNotesOutput, error) {
		return s.discussionNotes(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("reply-to"), Method: http.MethodPost, Path: one + "/notes", Tags: tags, Access: api.SignedIn,
		Summary: "Replies to a thread of a " + k.Type}, func(ctx context.Context, in *replyInput) (*discussionNoteOutput, error) {
		return s.reply(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("get") + "-note", Method: http.MethodGet, Path: one + "/notes/{note_id}", Tags: tags, Access: api.Public,
		Summary: "A note of a thread of a " + k.Type}, func(ctx context.Context, in *DiscussionNotePath) (*discussionNoteOutput, error) {
		return s.discussionNote(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("update") + "-note", Method: http.MethodPut, Path: one + "/notes/{note_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Changes a note of a thread: its body, or whether it is resolved"}, func(ctx context.Context, in *updateDiscussionNoteInput) (*discussionNoteOutput, error) {
		return s.updateDiscussionNote(ctx, k, in)
	})
	api.Register(a, api.Op{ID: id("delete") + "-note", Method: http.MethodDelete, Path: one + "/notes/{note_id}", Tags: tags, Access: api.SignedIn,
		Summary: "Deletes a note of a thread"}, func(ctx context.Context, in *DiscussionNotePath) (*struct{}, error) {
		return nil, s.deleteDiscussionNote(ctx, k, in)
	})
	if k.Resolvable {
		api.Register(a, api.Op{ID: id("resolve"), Method: http.MethodPut, Path: one, Tags: tags, Access: api.SignedIn,
			Summary: "Resolves or unresolves a thread of a " + k.Type}, func(ctx context.Context, in *resolveDiscussionInput) (*discussionOutput, error) {
			return s.resolveDiscussion(ctx, k, in)
		})
	}
}

func (s *Service) listDiscussions(ctx context.Context, k target.Kind, in *listInput) (*discussionsOutput, error) {
	list, total, err := s.Threads(ctx, where(ctx, k, in.ID), page(in.PageParams))
	if err != nil {
		return nil, err
	}
	views, err := s.threadViews(ctx, list)
	if err != nil {
		return nil, err
	}
	return &discussionsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

// oneThread answers a single thread.
func (s *Service) oneThread(ctx context.Context, t target.Thread) (*discussionOutput, error) {
	views, err := s.threadViews(ctx, []target.Thread{t})
	if err != nil {
		return nil, err
	}
	return &discussionOutput{Body: &views[0]}, nil
}

// oneNote answers a single note of a thread.
func (s *Service) oneNote(ctx context.Context, note target.Note) (*discussionNoteOutput, error) {
	views, err := s.noteViews(ctx, []target.Note{note})
	if err != nil {
		return nil, err
	}
	return &discussionNoteOutput{Body: &views[0]}, nil
}

func (s *Service) getDiscussion(ctx context.Context, k target.Kind, in *DiscussionPath) (*discussionOutput, error) {
	t, err := s.Thread(ctx, where(ctx, k, in.ID), in.DiscussionID)
	if err != nil {
		return nil, err
	}
	return s.oneThread(ctx, t)
}

func (s *Service) discussionNotes(ctx context.Context, k target.Kind, in *DiscussionPath) (*discussionNotesOutput, error) {
	t, err := s.Thread(ctx, where(ctx, k, in.ID), in.DiscussionID)
	if err != nil {
		return nil, err
	}
	views, err := s.noteViews(ctx, t.Notes)
	if err != nil {
		return nil, err
	}
	return &discussionNotesOutput{Body: views}, nil
}

func (s *Service) discussionNote(ctx context.Context, k target.Kind, in *DiscussionNotePath) (*discussionNoteOutput, error) {
	note, err := s.ThreadNote(ctx, where(ctx, k, in.ID), in.DiscussionID, in.NoteID)
	if err != nil {
		return nil, err
	}
	return s.oneNote(ctx, note)
}

func (s *Service) createDiscussion(ctx context.Context, k target.Kind, in *createDiscussionInput) (*discussionOutput, error) {
	var pos *target.Position
	if p := in.Body.Position; p != nil {
		pos = &target.Position{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, PositionType: p.PositionType,
			OldPath: p.OldPath, NewPath: p.NewPath, OldLine: p.OldLine, NewLine: p.NewLine}
	}
	t, err := s.StartThread(ctx, where(ctx, k, in.ID), noteInput(in.Body.Body, in.Body.CreatedAt), pos)
	if err != nil {
		return nil, err
	}
	return s.oneThread(ctx, t)
}

func (s *Service) reply(ctx context.Context, k target.Kind, in *replyInput) (*discussionNoteOutput, error) {
	note, err := s.Reply(ctx, where(ctx, k, in.ID), in.DiscussionID, noteInput(in.Body.Body, in.Body.CreatedAt))
	if err != nil {
		return nil, err
	}
	return s.oneNote(ctx, note)
}

func (s *Service) updateDiscussionNote(ctx context.Context, k target.Kind, in *updateDiscussionNoteInput) (*discussionNoteOutput, error) {
	b := in.Body
	switch {
	case b.Body != nil && b.Resolved != nil:
		return nil, &api.Error{Status: http.StatusBadRequest, Err: "body, resolved are mutually exclusive"}
	case b.Body == nil && b.Resolved == nil:
		return nil, &api.Error{Status: http.StatusBadRequest, Err: "body, resolved are missing, exactly one parameter must be provided"}
	}
	note, err := s.UpdateThreadNote(ctx, where(ctx, k, in.ID), in.DiscussionID, in.NoteID, b.Body, b.Resolved)
	if err != nil {
		return nil, err
	}
	return s.oneNote(ctx, note)
}

func (s *Service) deleteDiscussionNote(ctx context.Context, k target.Kind, in *DiscussionNotePath) error {
	return s.DeleteThreadNote(ctx, where(ctx, k, in.ID), in.DiscussionID, in.NoteID)
}

func (s *Service) resolveDiscussion(ctx context.Context, k target.Kind, in *resolveDiscussionInput) (*discussionOutput, error) {
	t, err := s.ResolveThread(ctx, where(ctx, k, in.ID), in.DiscussionID, in.Body.Resolved)
	if err != nil {
		return nil, err
	}
	return s.oneThread(ctx, t)
}
