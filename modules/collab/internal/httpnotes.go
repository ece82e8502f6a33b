package internal

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// MaxBodyChars bounds a note's body, as GitLab's note validation does
// (1,000,000 characters); a longer one is a 400 naming the limit.
const MaxBodyChars = 1_000_000

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

// resolve finds the project and the noteable a request names, as the
// caller sees them: the project's 404, a malformed reference's 400, the
// kind's Read refused (403), then the kind's own 404. The noteable's path
// parameter is the kind's own (":issue_iid"), read from the request, since
// an input struct's tags cannot vary by kind.
func (s *Service) resolve(ctx context.Context, k target.Kind, projectRef string) (projects.ProjectInfo, target.Noteable, error) {
	info, err := s.kindProject(ctx, k, projectRef)
	ref, refErr := pathRef(ctx, k)
	switch {
	case err != nil && (refErr == nil || !errors.Is(err, projects.ErrForbidden)):
		return info, target.Noteable{}, err
	case refErr != nil:
		return info, target.Noteable{}, refErr
	}
	n, err := k.Resolve(ctx, info, ref)
	return info, n, err
}

// pathRef is the target's reference in the request's path (k.Param).
func pathRef(ctx context.Context, k target.Kind) (int64, error) {
	raw := ""
	if r := api.Request(ctx); r != nil {
		raw = r.PathValue(k.Param)
	}
	ref, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || ref <= 0 {
		return 0, api.Invalid(k.Param)
	}
	return ref, nil
}

// parseNoteID is a note id from the path; anything else is no note.
func parseNoteID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, target.ErrNoteNotFound
	}
	return id, nil
}

// noteOf reads note id of noteable n; a note of another noteable (of this
// project or another) is no note of n.
func noteOf(tx *store.Tx, n target.Noteable, id uint64) (*Note, error) {
	note, err := notesTable.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (note.NoteableType != n.Type || note.NoteableID != n.ID)) {
		return nil, target.ErrNoteNotFound
	}
	return note, err
}

func (s *Service) list(ctx context.Context, k target.Kind, in *listInput) (*listOutput, error) {
	_, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	var page []*Note
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := notesTable.IDsBy(tx, "noteable", noteableKey(n.Type, n.ID))
		if err != nil {
			return err
		}
		total = len(ids)
		page, err = loadNotes(tx, api.Window(ids, in.PageParams))
		return err
	})
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, page)
	if err != nil {
		return nil, err
	}
	return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (s *Service) get(ctx context.Context, k target.Kind, in *NoteInput) (*noteOutput, error) {
	_, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	id, err := parseNoteID(in.NoteID)
	if err != nil {
		return nil, err
	}
	var note *Note
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		note, err = noteOf(tx, n, id)
		return err
	}); err != nil {
		return nil, err
	}
	views, err := s.views(ctx, []*Note{note})
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

// checkBody applies the rules of a note's body: present and not blank,
// valid UTF-8, at most MaxBodyChars characters. Surrounding whitespace is
// kept, as GitLab keeps it.
func checkBody(body *string) error {
	if body == nil || strings.TrimSpace(*body) == "" {
		return api.Missing("body")
	}
	// The API's parameter merging turns invalid UTF-8 (in a form or a
	// JSON body) into U+FFFD before a handler sees it, so a replacement
	// character is how invalid input shows here: refused, rather than
	// stored mangled. Nobody types U+FFFD on purpose.
	if !utf8.ValidString(*body) || strings.ContainsRune(*body, utf8.RuneError) {
		return api.Invalid("body")
	}
	if utf8.RuneCountInString(*body) > MaxBodyChars {
		return api.FieldErrors{"note": {"is too long (maximum is " + strconv.Itoa(MaxBodyChars) + " characters)"}}
	}
	return nil
}

// writable refuses writes to an archived project, for everyone.
func writable(info projects.ProjectInfo) error {
	if info.Archived {
		return projects.ErrForbidden
	}
	return nil
}

func (s *Service) create(ctx context.Context, k target.Kind, in *createInput) (*noteOutput, error) {
	info, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	if err := checkBody(in.Body.Body); err != nil {
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
	// A body that is only an award emoji awards it (unless it is the
	// author's vote on their own noteable, which stays a comment).
	if k.EmojiNotesAward {
		if name := emojiOnly(*in.Body.Body); name != "" && mayAward(n.AuthorID, author, name) {
			return s.emojiNote(ctx, info, n, author, name)
		}
	}
	at := s.now().UTC()
	// created_at is taken from administrators and project owners only
	// (administrators have the Owner level); others' is ignored, as 9.x.
	if in.Body.CreatedAt != nil && info.Level >= projects.Owner {
		t, err := api.ParseTime(*in.Body.CreatedAt)
		if err != nil {
			return nil, api.Invalid("created_at")
		}
		at = t.UTC()
	}
	note := noteFor(n, author, *in.Body.Body, false, at)
	authorView, err := s.author(ctx, author)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		note.ID = 0
		if err := insertNote(tx, note); err != nil {
			return err
		}
		// Commenting on a target is being done with it (9.x TodoService).
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
	return &noteOutput{Body: noteView(note, authorView)}, nil
}

// publishCreated adds the feed entry ("commented on" the note, titled with
// the noteable's title) and the NoteEvent of a new user note.
func (s *Service) publishCreated(tx *store.Tx, n target.Noteable, note *Note, a AuthorView) error {
	raw, err := json.Marshal(EventNoteView{ID: int64(note.ID), Body: note.Body, Author: a, CreatedAt: api.NewTime(note.CreatedAt),
		System: note.System, NoteableID: note.NoteableID, NoteableType: note.NoteableType})
	if err != nil {
		return err
	}
	if err := s.bus.Publish(tx, feed.Event{ProjectID: note.ProjectID, AuthorID: note.AuthorID, ActionName: feed.CommentedOn,
		TargetID: int64(note.ID), TargetType: "Note", TargetTitle: n.Title, Note: raw,
		Key: "notes.note:" + strconv.FormatUint(note.ID, 10)}); err != nil {
		return err
	}
	return s.bus.Publish(tx, noteEvent(event.NoteCreated, note))
}

// mayChange: the author, a Master or more, an administrator (who has the
// Owner level). System notes are the server's record: nobody changes them.
func mayChange(ctx context.Context, info projects.ProjectInfo, note *Note) error {
	if note.System {
		return projects.ErrForbidden
	}
	if note.AuthorID == auth.FromContext(ctx).UserID() || info.Level >= projects.Master {
		return nil
	}
	return projects.ErrForbidden
}

func (s *Service) update(ctx context.Context, k target.Kind, in *updateInput) (*noteOutput, error) {
	info, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	id, err := parseNoteID(in.NoteID)
	if err != nil {
		return nil, err
	}
	if err := checkBody(in.Body.Body); err != nil {
		return nil, err
	}
	if err := writable(info); err != nil {
		return nil, err
	}
	editor := auth.FromContext(ctx).UserID()
	var note *Note
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if note, err = noteOf(tx, n, id); err != nil {
			return err
		}
		if err := mayChange(ctx, info, note); err != nil {
			return err
		}
		before := note.Body
		note.Body, note.UpdatedAt = *in.Body.Body, s.now().UTC()
		if err := notesTable.Update(tx, note); err != nil {
			return err
		}
		// Only a mention the edit adds gives a todo (9.x's update service).
		if err := s.mention(tx.Context(), n, editor, note.Body, target.Mentions(before)); err != nil {
			return err
		}
		return s.bus.Publish(tx, noteEvent(event.NoteUpdated, note))
	})
	if err != nil {
		return nil, err
	}
	a, err := s.author(ctx, note.AuthorID)
	if err != nil {
		return nil, err
	}
	return &noteOutput{Body: noteView(note, a)}, nil
}

func (s *Service) delete(ctx context.Context, k target.Kind, in *NoteInput) error {
	info, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return err
	}
	id, err := parseNoteID(in.NoteID)
	if err != nil {
		return err
	}
	if err := writable(info); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		note, err := noteOf(tx, n, id)
		if err != nil {
			return err
		}
		if err := mayChange(ctx, info, note); err != nil {
			return err
		}
		return deleteNote(tx, note)
	})
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

func (s *Service) views(ctx context.Context, list []*Note) ([]NoteView, error) {
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

func noteView(n *Note, a AuthorView) NoteView {
	return NoteView{ID: int64(n.ID), Body: n.Body, Author: a, CreatedAt: api.NewTime(n.CreatedAt), UpdatedAt: api.NewTime(n.UpdatedAt),
		System: n.System, NoteableID: n.NoteableID, NoteableType: n.NoteableType}
}
