package internal

// Discussions (GitLab's threads) over the notes of every registered kind:
// /projects/:id/<noteables>/:ref/discussions. A thread is the notes that
// share a discussion id, oldest first. A note made through the notes API
// is a thread by itself (individual_note, as GitLab shows each plain
// note); a discussion started here is a thread of DiscussionNotes, or of
// DiffNotes with the position of a line comment where the kind allows them
// (CheckPosition); a reply joins its thread, and a reply to a note by
// itself turns it into a thread. Threads of a Resolvable kind (merge
// requests) are resolved note by note or as a whole.
//
// Replies are notes: they are made as the notes API makes them (todos done,
// mentions, the feed's "commented on", NoteEvent for hooks and mail).

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ErrDiscussionNotFound: no such thread on the noteable (the contract's).
var ErrDiscussionNotFound = target.ErrDiscussionNotFound

// The types of a note in a thread.
const (
	discussionNote = "DiscussionNote"
	diffNote       = "DiffNote"
)

// newDiscussionID is a new thread's id: 40 hex digits, as GitLab's (a
// SHA-1 there), from the system's random source.
func newDiscussionID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// legacyDiscussionID is the thread id given to a note stored before
// threads: derived from its id, so the same note gets the same id on every
// server that migrates the same data.
func legacyDiscussionID(noteID int64) string {
	sum := sha1.Sum([]byte("fennec note " + strconv.FormatInt(noteID, 10)))
	return hex.EncodeToString(sum[:])
}

// backfillDiscussionIDs gives every note stored before threads a thread of
// its own (schema migration 2).
func backfillDiscussionIDs(tx *store.Tx) error {
	var old []*Note
	if err := notesTable.Scan(tx, false, 0, func(n *Note) (bool, error) {
		if n.DiscussionID == "" {
			old = append(old, n)
		}
		return true, nil
	}); err != nil {
		return err
	}
	for _, n := range old {
		n.DiscussionID = legacyDiscussionID(n.ID)
		if err := notesTable.Update(tx, n); err != nil {
			return err
		}
	}
	return nil
}

func discussionKey(typ string, id int64, discussion string) string {
	return noteableKey(typ, id) + "#" + discussion
}

// discussionNotes are the notes of one thread of n, oldest first;
// ErrDiscussionNotFound when it has none.
func discussionNotes(tx *store.Tx, n target.Noteable, discussion string) ([]*Note, error) {
	if !validDiscussionID(discussion) {
		return nil, ErrDiscussionNotFound
	}
	ids, err := notesTable.IDsBy(tx, "discussion", discussionKey(n.Type, n.ID, discussion))
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrDiscussionNotFound
	}
	return loadNotes(tx, ids)
}

func validDiscussionID(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// threads groups notes (in creation order) into threads, ordered by their
// first note.
func threads(list []*Note) [][]*Note {
	var out [][]*Note
	at := map[string]int{}
	for _, n := range list {
		i, ok := at[n.DiscussionID]
		if !ok || n.DiscussionID == "" {
			at[n.DiscussionID] = len(out)
			out = append(out, []*Note{n})
			continue
		}
		out[i] = append(out[i], n)
	}
	return out
}

// resolvable is GitLab's Note#resolvable?: a user's note of a thread on a
// noteable whose threads can be resolved.
func resolvable(k target.Kind, n *Note) bool {
	return k.Resolvable && !n.System && (n.Type == discussionNote || n.Type == diffNote)
}

// UnresolvedDiscussions implements target.Service.
func (s *Service) UnresolvedDiscussions(ctx context.Context, n target.Noteable) (int, error) {
	k, ok := s.byType[n.Type]
	if !ok || !k.Resolvable {
		return 0, nil
	}
	count := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		list, err := noteableNotes(tx, n.Type, n.ID)
		if err != nil {
			return err
		}
		for _, t := range threads(list) {
			for _, note := range t {
				if resolvable(k, note) && !note.Resolved {
					count++
					break
				}
			}
		}
		return nil
	})
	return count, err
}

// thread is the contract's record of a thread of a target of kind k.
func thread(k target.Kind, notes []*Note) target.Thread {
	return target.Thread{ID: notes[0].DiscussionID, Individual: notes[0].Type == "", Notes: records(k, notes)}
}

// Threads implements target.Service: a page of the threads of the target
// w names, ordered by their first note, and how many there are.
func (s *Service) Threads(ctx context.Context, w target.Where, page target.Page) ([]target.Thread, int, error) {
	_, k, n, err := s.locate(ctx, w)
	if err != nil {
		return nil, 0, err
	}
	var all [][]*Note
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, err := noteableNotes(tx, n.Type, n.ID)
		all = threads(list)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	shown := store.Window(all, page.Offset, page.Limit)
	out := make([]target.Thread, len(shown))
	for i, t := range shown {
		out[i] = thread(k, t)
	}
	return out, len(all), nil
}

// threadOf reads thread id of the target w names.
func (s *Service) threadOf(ctx context.Context, w target.Where, id string) (projects.ProjectInfo, target.Kind, target.Noteable, []*Note, error) {
	info, k, n, err := s.locate(ctx, w)
	if err != nil {
		return info, k, n, nil, err
	}
	var list []*Note
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, err = discussionNotes(tx, n, id)
		return err
	})
	return info, k, n, list, err
}

// Thread implements target.Service: thread id of the target w names.
func (s *Service) Thread(ctx context.Context, w target.Where, id string) (target.Thread, error) {
	_, k, _, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return target.Thread{}, err
	}
	return thread(k, list), nil
}

// noteInThread is note noteID of a thread: ErrNoteNotFound for a note of
// another thread.
func noteInThread(list []*Note, noteID string) (*Note, error) {
	id, err := parseNoteID(noteID)
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

// ThreadNote implements target.Service: note noteID of thread id.
func (s *Service) ThreadNote(ctx context.Context, w target.Where, id, noteID string) (target.Note, error) {
	_, k, _, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return target.Note{}, err
	}
	note, err := noteInThread(list, noteID)
	if err != nil {
		return target.Note{}, err
	}
	return note.record(k), nil
}

// StartThread implements target.Service: a thread of DiscussionNotes, or
// of DiffNotes at a line of the target's diffs on a kind that takes line
// comments (pos; on another kind it is ignored, as GitLab does).
func (s *Service) StartThread(ctx context.Context, w target.Where, in target.NoteInput, pos *target.Position) (target.Thread, error) {
	info, k, n, err := s.locate(ctx, w)
	if err != nil {
		return target.Thread{}, err
	}
	if pos != nil && k.CheckPosition != nil {
		p := *pos
		// A path given on one side only is the same file on both (GitLab
		// fills the other side so).
		if p.OldPath == "" {
			p.OldPath = p.NewPath
		}
		if p.NewPath == "" {
			p.NewPath = p.OldPath
		}
		if err := checkBody(in.Body); err != nil {
			return target.Thread{}, err
		}
		if p.NewPath == "" || (p.NewLine == nil && p.OldLine == nil) {
			return target.Thread{}, target.ErrBadPosition
		}
		if err := k.CheckPosition(ctx, info, n, p); err != nil {
			return target.Thread{}, err
		}
		pos = &p
	} else {
		pos = nil
	}
	if err := mayComment(ctx, info, k, n, in.Body); err != nil {
		return target.Thread{}, err
	}
	note, err := s.comment(ctx, info, k, n, in, func(note *Note) {
		note.Type = discussionNote
		if pos != nil {
			note.Type, note.Position = diffNote, pos
		}
	}, nil)
	if err != nil {
		return target.Thread{}, err
	}
	return thread(k, []*Note{note}), nil
}

// Reply implements target.Service: a note that joins thread id; a reply
// to a note by itself makes a thread of it, and a line comment's replies
// are on its line. A system note's thread takes none.
func (s *Service) Reply(ctx context.Context, w target.Where, id string, in target.NoteInput) (target.Note, error) {
	info, k, n, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return target.Note{}, err
	}
	// GitLab: a system note's thread cannot become a discussion.
	if list[0].System {
		return target.Note{}, target.BadRequest("Discussion can not be replied to.")
	}
	if err := mayComment(ctx, info, k, n, in.Body); err != nil {
		return target.Note{}, err
	}
	note, err := s.comment(ctx, info, k, n, in, func(note *Note) {
		note.DiscussionID, note.Type = id, discussionNote
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
		return target.Note{}, err
	}
	return note.record(k), nil
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

// UpdateThreadNote implements target.Service: a note of thread id gets a
// new body (as UpdateNote), or, with resolved, is resolved or unresolved
// (by its author, the target's author or a Developer); exactly one of
// body and resolved is set.
func (s *Service) UpdateThreadNote(ctx context.Context, w target.Where, id, noteID string, body *string, resolved *bool) (target.Note, error) {
	info, k, n, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return target.Note{}, err
	}
	note, err := noteInThread(list, noteID)
	if err != nil {
		return target.Note{}, err
	}
	if body != nil {
		// The notes' edit, with its rules and events.
		if _, err := s.updateNote(ctx, info, n, note.ID, body); err != nil {
			return target.Note{}, err
		}
	} else {
		if !resolvable(k, note) {
			return target.Note{}, target.BadRequest("Note is not resolvable")
		}
		if err := writable(info); err != nil {
			return target.Note{}, err
		}
		if !mayResolve(ctx, info, n, note) {
			return target.Note{}, projects.ErrForbidden
		}
		if err := s.db.Update(ctx, func(tx *store.Tx) error {
			fresh, err := noteOf(tx, n, note.ID)
			if err != nil {
				return err
			}
			return s.setResolved(ctx, tx, k, []*Note{fresh}, resolved != nil && *resolved)
		}); err != nil {
			return target.Note{}, err
		}
	}
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		note, err = noteOf(tx, n, note.ID)
		return err
	}); err != nil {
		return target.Note{}, err
	}
	return note.record(k), nil
}

// DeleteThreadNote implements target.Service: as DeleteNote, for a note of
// thread id.
func (s *Service) DeleteThreadNote(ctx context.Context, w target.Where, id, noteID string) error {
	info, _, n, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return err
	}
	note, err := noteInThread(list, noteID)
	if err != nil {
		return err
	}
	return s.deleteNote(ctx, info, n, note.ID)
}

// ResolveThread implements target.Service: every note of thread id that
// can be is resolved or unresolved. A thread that cannot be resolved, or a
// caller who may not, is refused (403, as GitLab).
func (s *Service) ResolveThread(ctx context.Context, w target.Where, id string, resolved bool) (target.Thread, error) {
	info, k, n, list, err := s.threadOf(ctx, w, id)
	if err != nil {
		return target.Thread{}, err
	}
	if !resolvable(k, list[0]) || !mayResolve(ctx, info, n, list[0]) {
		return target.Thread{}, projects.ErrForbidden
	}
	if err := writable(info); err != nil {
		return target.Thread{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		fresh, err := discussionNotes(tx, n, id)
		if err != nil {
			return err
		}
		if err := s.setResolved(ctx, tx, k, fresh, resolved); err != nil {
			return err
		}
		list = fresh
		return nil
	})
	if err != nil {
		return target.Thread{}, err
	}
	return thread(k, list), nil
}
