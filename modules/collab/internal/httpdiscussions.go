package internal

// The HTTP adapter of discussions (threads): their views, inputs and
// handlers, for every kind that has notes.

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
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
func (s *Service) threadViews(ctx context.Context, k target.Kind, list [][]*Note) ([]DiscussionView, error) {
	var flat []*Note
	for _, t := range list {
		flat = append(flat, t...)
	}
	views, err := s.noteViews(ctx, k, flat)
	if err != nil {
		return nil, err
	}
	out := make([]DiscussionView, 0, len(list))
	i := 0
	for _, t := range list {
		d := DiscussionView{ID: t[0].DiscussionID, IndividualNote: t[0].Type == "", Notes: views[i : i+len(t)]}
		i += len(t)
		out = append(out, d)
	}
	return out, nil
}

// noteViews renders notes of threads, in order.
func (s *Service) noteViews(ctx context.Context, k target.Kind, list []*Note) ([]DiscussionNoteView, error) {
	plain, err := s.views(ctx, list)
	if err != nil {
		return nil, err
	}
	resolvers := map[int64]identity.BasicUser{}
	out := make([]DiscussionNoteView, 0, len(list))
	for i, n := range list {
		v := DiscussionNoteView{NoteView: plain[i], ProjectID: n.ProjectID, Resolvable: resolvable(k, n)}
		if n.Type != "" {
			typ := n.Type
			v.Type = &typ
		}
		if n.NoteableIID > 0 {
			iid := n.NoteableIID
			v.NoteableIID = &iid
		}
		if p := n.Position; p != nil && n.Type == diffNote {
			v.Position = &PositionView{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, OldPath: p.OldPath,
				NewPath: p.NewPath, PositionType: p.PositionType, OldLine: p.OldLine, NewLine: p.NewLine}
		}
		if v.Resolvable && n.Resolved {
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
	_, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	var all [][]*Note
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, err := noteableNotes(tx, n.Type, n.ID)
		all = threads(list)
		return err
	})
	if err != nil {
		return nil, err
	}
	views, err := s.threadViews(ctx, k, api.Window(all, in.PageParams))
	if err != nil {
		return nil, err
	}
	return &discussionsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(all)), Body: views}, nil
}

// thread reads one thread of the noteable a request names.
func (s *Service) thread(ctx context.Context, k target.Kind, in *DiscussionPath) (projects.ProjectInfo, target.Noteable, []*Note, error) {
	info, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return info, n, nil, err
	}
	var list []*Note
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, err = discussionNotes(tx, n, in.DiscussionID)
		return err
	})
	return info, n, list, err
}

func (s *Service) getDiscussion(ctx context.Context, k target.Kind, in *DiscussionPath) (*discussionOutput, error) {
	_, _, list, err := s.thread(ctx, k, in)
	if err != nil {
		return nil, err
	}
	views, err := s.threadViews(ctx, k, [][]*Note{list})
	if err != nil {
		return nil, err
	}
	return &discussionOutput{Body: &views[0]}, nil
}

func (s *Service) discussionNotes(ctx context.Context, k target.Kind, in *DiscussionPath) (*discussionNotesOutput, error) {
	_, _, list, err := s.thread(ctx, k, in)
	if err != nil {
		return nil, err
	}
	views, err := s.noteViews(ctx, k, list)
	if err != nil {
		return nil, err
	}
	return &discussionNotesOutput{Body: views}, nil
}

// noteInThread is the note of a thread a request names: target.ErrNoteNotFound
// for a note of another thread.
func noteInThread(list []*Note, raw string) (*Note, error) {
	id, err := parseNoteID(raw)
	if err != nil {
		return nil, err
	}
	for _, n := range list {
		if n.ID == id {
			return n, nil
		}
	}
	return nil, target.ErrNoteNotFound
}

func (s *Service) discussionNote(ctx context.Context, k target.Kind, in *DiscussionNotePath) (*discussionNoteOutput, error) {
	_, _, list, err := s.thread(ctx, k, &in.DiscussionPath)
	if err != nil {
		return nil, err
	}
	note, err := noteInThread(list, in.NoteID)
	if err != nil {
		return nil, err
	}
	return s.noteOut(ctx, k, note)
}

func (s *Service) noteOut(ctx context.Context, k target.Kind, note *Note) (*discussionNoteOutput, error) {
	views, err := s.noteViews(ctx, k, []*Note{note})
	if err != nil {
		return nil, err
	}
	return &discussionNoteOutput{Body: &views[0]}, nil
}

// comment makes a user's note in a thread as the notes API makes one (the
// same checks, todos, mentions, feed entry and NoteEvent); join, when set,
// runs in the note's transaction before it is stored, to place it in its
// thread.
func (s *Service) comment(ctx context.Context, k target.Kind, info projects.ProjectInfo, n target.Noteable, body createBody,
	prepare func(note *Note), join func(tx *store.Tx, note *Note) error) (*Note, error) {
	if err := checkBody(body.Body); err != nil {
		return nil, err
	}
	if err := writable(info); err != nil {
		return nil, err
	}
	if k.CanComment != nil {
		if err := k.CanComment(ctx, info, n); err != nil {
			return nil, err
		}
	}
	author := auth.FromContext(ctx).UserID()
	at := s.now().UTC()
	if body.CreatedAt != nil && info.Level >= projects.Owner {
		t, err := api.ParseTime(*body.CreatedAt)
		if err != nil {
			return nil, api.Invalid("created_at")
		}
		at = t.UTC()
	}
	note := noteFor(n, author, *body.Body, false, at)
	prepare(note)
	authorView, err := s.author(ctx, author)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		note.ID = 0
		if join != nil {
			if err := join(tx, note); err != nil {
				return err
			}
		}
		if err := insertNote(tx, note); err != nil {
			return err
		}
		if err := s.TodosDone(tx.Context(), n.Target(), author); err != nil {
			return err
		}
		if err := s.mention(tx.Context(), n, author, note.Body, nil); err != nil {
			return err
		}
		return s.publishCreated(tx, n, note, authorView)
	})
	if err != nil {
		return nil, err
	}
	return note, nil
}

func (s *Service) createDiscussion(ctx context.Context, k target.Kind, in *createDiscussionInput) (*discussionOutput, error) {
	info, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	var pos *target.Position
	if p := in.Body.Position; p != nil && k.CheckPosition != nil {
		pos = &target.Position{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, PositionType: p.PositionType,
			OldPath: p.OldPath, NewPath: p.NewPath, OldLine: p.OldLine, NewLine: p.NewLine}
		// A path given on one side only is the same file on both (GitLab
		// fills the other side so).
		if pos.OldPath == "" {
			pos.OldPath = pos.NewPath
		}
		if pos.NewPath == "" {
			pos.NewPath = pos.OldPath
		}
		if err := checkBody(in.Body.Body); err != nil {
			return nil, err
		}
		if pos.NewPath == "" || (pos.NewLine == nil && pos.OldLine == nil) {
			return nil, errBadPosition
		}
		if err := k.CheckPosition(ctx, info, n, *pos); err != nil {
			return nil, err
		}
	}
	note, err := s.comment(ctx, k, info, n, createBody{Body: in.Body.Body, CreatedAt: in.Body.CreatedAt}, func(note *Note) {
		note.Type = discussionNote
		if pos != nil {
			note.Type, note.Position = diffNote, pos
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	views, err := s.threadViews(ctx, k, [][]*Note{{note}})
	if err != nil {
		return nil, err
	}
	return &discussionOutput{Body: &views[0]}, nil
}

func (s *Service) reply(ctx context.Context, k target.Kind, in *replyInput) (*discussionNoteOutput, error) {
	info, n, list, err := s.thread(ctx, k, &in.DiscussionPath)
	if err != nil {
		return nil, err
	}
	// A system note's thread takes no replies (GitLab: it cannot become
	// a discussion).
	if list[0].System {
		return nil, badRequest("Discussion can not be replied to.")
	}
	note, err := s.comment(ctx, k, info, n, in.Body, func(note *Note) {
		note.DiscussionID, note.Type = in.DiscussionID, discussionNote
	}, func(tx *store.Tx, note *Note) error {
		first, err := notesTable.Get(tx, list[0].ID)
		if errors.Is(err, store.ErrNotFound) {
			return ErrDiscussionNotFound
		} else if err != nil {
			return err
		}
		switch first.Type {
		case "":
			// A reply to a note by itself makes a thread of it.
			first.Type = discussionNote
			return notesTable.Update(tx, first)
		case diffNote:
			// A line comment's replies are on its line.
			note.Type, note.Position = diffNote, first.Position
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.noteOut(ctx, k, note)
}

// mayResolve is GitLab's can_resolve?: the note's author, the noteable's
// author, or a Developer (who may resolve any thread).
func mayResolve(ctx context.Context, info projects.ProjectInfo, n target.Noteable, note *Note) bool {
	uid := auth.FromContext(ctx).UserID()
	return uid != 0 && (uid == note.AuthorID || uid == n.AuthorID || info.Level >= projects.Developer)
}

// setResolved resolves or unresolves notes (those that can be), in tx.
func (s *Service) setResolved(ctx context.Context, tx *store.Tx, k target.Kind, notes []*Note, resolved bool) error {
	uid := auth.FromContext(ctx).UserID()
	now := s.now().UTC()
	for _, n := range notes {
		if !resolvable(k, n) || n.Resolved == resolved {
			continue
		}
		n.Resolved = resolved
		n.ResolvedBy, n.ResolvedAt = 0, nil
		if resolved {
			n.ResolvedBy, n.ResolvedAt = uid, &now
		}
		if err := notesTable.Update(tx, n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) updateDiscussionNote(ctx context.Context, k target.Kind, in *updateDiscussionNoteInput) (*discussionNoteOutput, error) {
	b := in.Body
	switch {
	case b.Body != nil && b.Resolved != nil:
		return nil, &api.Error{Status: http.StatusBadRequest, Err: "body, resolved are mutually exclusive"}
	case b.Body == nil && b.Resolved == nil:
		return nil, &api.Error{Status: http.StatusBadRequest, Err: "body, resolved are missing, exactly one parameter must be provided"}
	}
	info, n, list, err := s.thread(ctx, k, &in.DiscussionPath)
	if err != nil {
		return nil, err
	}
	note, err := noteInThread(list, in.NoteID)
	if err != nil {
		return nil, err
	}
	if b.Body != nil {
		// The notes API's edit, with its rules and events.
		up := &updateInput{NoteInput: NoteInput{ProjectPath: in.ProjectPath, NoteID: in.NoteID}}
		up.Body.Body = b.Body
		if _, err := s.update(ctx, k, up); err != nil {
			return nil, err
		}
	} else {
		if !resolvable(k, note) {
			return nil, badRequest("Note is not resolvable")
		}
		if err := writable(info); err != nil {
			return nil, err
		}
		if !mayResolve(ctx, info, n, note) {
			return nil, projects.ErrForbidden
		}
		if err := s.db.Update(ctx, func(tx *store.Tx) error {
			fresh, err := noteOf(tx, n, note.ID)
			if err != nil {
				return err
			}
			return s.setResolved(ctx, tx, k, []*Note{fresh}, *b.Resolved)
		}); err != nil {
			return nil, err
		}
	}
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		note, err = noteOf(tx, n, note.ID)
		return err
	}); err != nil {
		return nil, err
	}
	return s.noteOut(ctx, k, note)
}

func (s *Service) deleteDiscussionNote(ctx context.Context, k target.Kind, in *DiscussionNotePath) error {
	_, _, list, err := s.thread(ctx, k, &in.DiscussionPath)
	if err != nil {
		return err
	}
	if _, err := noteInThread(list, in.NoteID); err != nil {
		return err
	}
	return s.delete(ctx, k, &NoteInput{ProjectPath: in.ProjectPath, NoteID: in.NoteID})
}

func (s *Service) resolveDiscussion(ctx context.Context, k target.Kind, in *resolveDiscussionInput) (*discussionOutput, error) {
	info, n, list, err := s.thread(ctx, k, &in.DiscussionPath)
	if err != nil {
		return nil, err
	}
	// GitLab: a thread that cannot be resolved, or a caller who may not,
	// is 403.
	if !resolvable(k, list[0]) || !mayResolve(ctx, info, n, list[0]) {
		return nil, projects.ErrForbidden
	}
	if err := writable(info); err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		fresh, err := discussionNotes(tx, n, in.DiscussionID)
		if err != nil {
			return err
		}
		if err := s.setResolved(ctx, tx, k, fresh, in.Body.Resolved); err != nil {
			return err
		}
		list = fresh
		return nil
	})
	if err != nil {
		return nil, err
	}
	views, err := s.threadViews(ctx, k, [][]*Note{list})
	if err != nil {
		return nil, err
	}
	return &discussionOutput{Body: &views[0]}, nil
}
