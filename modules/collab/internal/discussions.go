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

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// ErrDiscussionNotFound: no such thread on the noteable; answered 404
// Discussion Not Found.
var ErrDiscussionNotFound = errors.New("notes: discussion not found")

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
func legacyDiscussionID(noteID uint64) string {
	sum := sha1.Sum([]byte("fennec note " + strconv.FormatUint(noteID, 10)))
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
