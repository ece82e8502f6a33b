package internal

// The notes of a target as commands and queries (target.Service): list,
// read, post, edit and delete, with their rules; the HTTP adapter
// (httpnotes.go) only decodes, calls these and renders.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// record is the contract's record of a note of a target of kind k.
func (n *Note) record(k target.Kind) target.Note {
	r := target.Note{ID: n.ID, ProjectID: n.ProjectID, NoteableType: n.NoteableType, NoteableID: n.NoteableID,
		NoteableIID: n.NoteableIID, AuthorID: n.AuthorID, Body: n.Body, System: n.System, CreatedAt: n.CreatedAt,
		UpdatedAt: n.UpdatedAt, DiscussionID: n.DiscussionID, Type: n.Type, Resolvable: resolvable(k, n)}
	if n.Type == diffNote && n.Position != nil {
		p := *n.Position
		r.Position = &p
	}
	if r.Resolvable && n.Resolved {
		r.Resolved, r.ResolvedBy, r.ResolvedAt = true, n.ResolvedBy, n.ResolvedAt
	}
	return r
}

func records(k target.Kind, list []*Note) []target.Note {
	out := make([]target.Note, len(list))
	for i, n := range list {
		out[i] = n.record(k)
	}
	return out
}

// parseNoteID is a note id from the path; anything else is no note.
func parseNoteID(s string) (int64, error) {
	id, err := strconv.ParseUint(s, 10, 63)
	if err != nil || id == 0 {
		return 0, target.ErrNoteNotFound
	}
	return int64(id), nil
}

// noteOf reads note id of noteable n; a note of another noteable (of this
// project or another) is no note of n.
func noteOf(tx *store.Tx, n target.Noteable, id int64) (*Note, error) {
	note, err := notesTable.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (note.NoteableType != n.Type || note.NoteableID != n.ID)) {
		return nil, target.ErrNoteNotFound
	}
	return note, err
}

// Notes implements target.Service: a page of the notes of the target w
// names, oldest first, and how many there are.
func (s *Service) Notes(ctx context.Context, w target.Where, page target.Page) ([]target.Note, int, error) {
	_, k, n, err := s.locate(ctx, w)
	if err != nil {
		return nil, 0, err
	}
	var list []*Note
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := notesTable.IDsBy(tx, "noteable", noteableKey(n.Type, n.ID))
		if err != nil {
			return err
		}
		total = len(ids)
		list, err = loadNotes(tx, store.Window(ids, page.Offset, page.Limit))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return records(k, list), total, nil
}

// Note implements target.Service: one note of the target w names, and
// the target.
func (s *Service) Note(ctx context.Context, w target.Where, noteID string) (target.Note, target.Noteable, error) {
	_, k, n, err := s.locate(ctx, w)
	if err != nil {
		return target.Note{}, n, err
	}
	id, err := parseNoteID(noteID)
	if err != nil {
		return target.Note{}, n, err
	}
	var note *Note
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		note, err = noteOf(tx, n, id)
		return err
	}); err != nil {
		return target.Note{}, n, err
	}
	return note.record(k), n, nil
}

// checkBody applies the rules of a note's body: present and not blank,
// valid UTF-8, at most MaxBodyChars characters. Surrounding whitespace is
// kept, as GitLab keeps it.
func checkBody(body *string) error {
	if body == nil || strings.TrimSpace(*body) == "" {
		return target.Missing("body")
	}
	// The API's parameter merging turns invalid UTF-8 (in a form or a
	// JSON body) into U+FFFD before a handler sees it, so a replacement
	// character is how invalid input shows here: refused, rather than
	// stored mangled. Nobody types U+FFFD on purpose.
	if target.InvalidText(*body) {
		return target.BadParam("body")
	}
	if utf8.RuneCountInString(*body) > target.MaxBodyChars {
		return &target.InvalidError{Field: "note", Text: "is too long (maximum is " + strconv.Itoa(target.MaxBodyChars) + " characters)"}
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

// mayComment is the rule of every new note on n: a body, a project that
// takes writes, and the kind's CanComment.
func mayComment(ctx context.Context, info projects.ProjectInfo, k target.Kind, n target.Noteable, body *string) error {
	if err := checkBody(body); err != nil {
		return err
	}
	if err := writable(info); err != nil {
		return err
	}
	if k.CanComment != nil {
		return k.CanComment(ctx, info, n)
	}
	return nil
}

// CreateNote implements target.Service: a note on the target w names,
// or, for a body that is only an award emoji on a kind that says so, the
// award.
func (s *Service) CreateNote(ctx context.Context, w target.Where, in target.NoteInput) (target.Posted, error) {
	info, k, n, err := s.locate(ctx, w)
	if err != nil {
		return target.Posted{}, err
	}
	if err := mayComment(ctx, info, k, n, in.Body); err != nil {
		return target.Posted{}, err
	}
	author := auth.FromContext(ctx).UserID()
	// A body that is only an award emoji awards it (unless it is the
	// author's vote on their own noteable, which stays a comment).
	if k.EmojiNotesAward {
		if name := emojiOnly(*in.Body); name != "" && mayAward(n.AuthorID, author, name) {
			a, err := s.emojiNote(ctx, info, n, author, name)
			if err != nil {
				return target.Posted{}, err
			}
			r := a.record()
			return target.Posted{Award: &r}, nil
		}
	}
	note, err := s.comment(ctx, info, k, n, in, nil, nil)
	if err != nil {
		return target.Posted{}, err
	}
	r := note.record(k)
	return target.Posted{Note: &r}, nil
}

// comment stores a user's note on n as every note is made (the note API's,
// a thread's first note, a reply): done with the caller's todos on n, the
// mentions' todos, the feed's "commented on" and NoteEvent, in one
// transaction. The rules (mayComment) are the caller's to apply first.
// prepare, when set, shapes the note before it is stored; join, when set,
// runs in the note's transaction before it is stored, to place it in its
// thread.
func (s *Service) comment(ctx context.Context, info projects.ProjectInfo, k target.Kind, n target.Noteable, in target.NoteInput,
	prepare func(note *Note), join func(tx *store.Tx, note *Note) error) (*Note, error) {
	author := auth.FromContext(ctx).UserID()
	at := s.now().UTC()
	// created_at is taken from administrators and project owners only
	// (administrators have the Owner level); others' is ignored, as 9.x.
	if info.Level >= projects.Owner {
		switch {
		case in.BadCreatedAt:
			return nil, target.BadParam("created_at")
		case in.CreatedAt != nil:
			at = in.CreatedAt.UTC()
		}
	}
	note := noteFor(n, author, *in.Body, false, at)
	if prepare != nil {
		prepare(note)
	}
	eventNote, err := s.eventNote(ctx, author)
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
		// Commenting on a target is being done with it (9.x TodoService).
		if err := s.TodosDone(tx.Context(), n.Target(), author); err != nil {
			return err
		}
		if err := s.mention(tx.Context(), n, author, note.ID, note.Body, nil); err != nil {
			return err
		}
		return s.publishCreated(tx, n, note, eventNote)
	})
	if err != nil {
		return nil, err
	}
	return note, nil
}

// eventNote prepares, before the write, how a new note of authorID shows
// in its "commented on" feed entry: the events API's note, which the feed
// stores as it is published (as GitLab does). The HTTP adapter renders it
// (SetPresenter); without one the entry carries no note.
func (s *Service) eventNote(ctx context.Context, authorID int64) (func(*Note) (json.RawMessage, error), error) {
	if s.present == nil {
		return func(*Note) (json.RawMessage, error) { return nil, nil }, nil
	}
	return s.present.EventNote(ctx, authorID)
}

// publishCreated adds the feed entry ("commented on" the note, titled with
// the noteable's title) and the NoteEvent of a new user note.
func (s *Service) publishCreated(tx *store.Tx, n target.Noteable, note *Note, eventNote func(*Note) (json.RawMessage, error)) error {
	raw, err := eventNote(note)
	if err != nil {
		return err
	}
	if err := s.bus.Publish(tx, feed.Event{ProjectID: note.ProjectID, AuthorID: note.AuthorID, ActionName: feed.CommentedOn,
		TargetID: note.ID, TargetType: noteType, TargetIID: note.NoteableIID, TargetTitle: n.Title, Note: raw,
		Key: "notes.note:" + strconv.FormatInt(note.ID, 10)}); err != nil {
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

// UpdateNote implements target.Service: a note's new body, by its author,
// a Master or an administrator; a mention the edit adds gives a todo.
func (s *Service) UpdateNote(ctx context.Context, w target.Where, noteID string, body *string) (target.Note, error) {
	info, k, n, err := s.locate(ctx, w)
	if err != nil {
		return target.Note{}, err
	}
	id, err := parseNoteID(noteID)
	if err != nil {
		return target.Note{}, err
	}
	note, err := s.updateNote(ctx, info, n, id, body)
	if err != nil {
		return target.Note{}, err
	}
	return note.record(k), nil
}

func (s *Service) updateNote(ctx context.Context, info projects.ProjectInfo, n target.Noteable, id int64, body *string) (*Note, error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	if err := writable(info); err != nil {
		return nil, err
	}
	editor := auth.FromContext(ctx).UserID()
	var note *Note
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if note, err = noteOf(tx, n, id); err != nil {
			return err
		}
		if err := mayChange(ctx, info, note); err != nil {
			return err
		}
		before := note.Body
		note.Body, note.UpdatedAt = *body, s.now().UTC()
		if err := notesTable.Update(tx, note); err != nil {
			return err
		}
		// Only a mention the edit adds gives a todo (9.x's update service).
		if err := s.mention(tx.Context(), n, editor, note.ID, note.Body, target.Mentions(before)); err != nil {
			return err
		}
		return s.bus.Publish(tx, noteEvent(event.NoteUpdated, note))
	})
	return note, err
}

// DeleteNote implements target.Service: by its author, a Master or an
// administrator.
func (s *Service) DeleteNote(ctx context.Context, w target.Where, noteID string) error {
	info, _, n, err := s.locate(ctx, w)
	if err != nil {
		return err
	}
	id, err := parseNoteID(noteID)
	if err != nil {
		return err
	}
	return s.deleteNote(ctx, info, n, id)
}

func (s *Service) deleteNote(ctx context.Context, info projects.ProjectInfo, n target.Noteable, id int64) error {
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
