package internal

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ErrAwardNotFound: no such award emoji on the awardable, or the caller may
// not award it (the contract's).
var ErrAwardNotFound = target.ErrAwardNotFound

// The awardable type of an award on a note; the others are the noteable
// types (an award on an issue is an award on the "Issue" noteable).
const noteAwardable = "Note"

// Award is one award emoji: a user's emoji on a noteable or on one of its
// notes. Ids grow with time, so an awardable's awards in id order are in
// the order they were given (GitLab lists them so).
type Award struct {
	ID            int64  `json:"id"`
	ProjectID     int64  `json:"project_id"`
	AwardableType string `json:"awardable_type"` // a noteable's type, or "Note"
	AwardableID   int64  `json:"awardable_id"`
	// NoteableType and NoteableID name the noteable the award belongs to:
	// the awardable itself, or the noteable of the awarded note. A deleted
	// noteable takes its awards and its notes' awards with it.
	NoteableType string    `json:"noteable_type"`
	NoteableID   int64     `json:"noteable_id"`
	UserID       int64     `json:"user_id"`
	Name         string    `json:"name"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func (a *Award) RecordID() int64      { return a.ID }
func (a *Award) SetRecordID(id int64) { a.ID = id }

// awardKey is what makes an award unique: a user gives an emoji once per
// awardable.
func awardKey(typ string, id, user int64, name string) string {
	return noteableKey(typ, id) + ":" + store.IDString(user) + ":" + name
}

var awardsTable = store.NewTable[int64, Award]("notes.awards",
	store.Index[Award]{Name: "key", Unique: true, Keys: func(a *Award) []string {
		return []string{awardKey(a.AwardableType, a.AwardableID, a.UserID, a.Name)}
	}},
	store.Index[Award]{Name: "awardable", Keys: func(a *Award) []string { return []string{noteableKey(a.AwardableType, a.AwardableID)} }},
	store.Index[Award]{Name: "noteable", Keys: func(a *Award) []string { return []string{noteableKey(a.NoteableType, a.NoteableID)} }},
	store.Index[Award]{Name: "project", Keys: func(a *Award) []string { return []string{store.IDString(a.ProjectID)} }},
)

// awardVotes maps awardable type ++ 0 ++ id (8 bytes) to its upvotes and
// downvotes (8 bytes each), kept with every award written or deleted, so a
// page of issues reads its upvotes and downvotes without reading awards.
var awardVotes = store.Keys("notes.award_votes")

// voteDelta is what an award of name adds to its awardable's votes.
func voteDelta(name string, n int) target.Votes {
	switch name {
	case upvoteName:
		return target.Votes{Up: n}
	case downvoteName:
		return target.Votes{Down: n}
	}
	return target.Votes{}
}

func readVotes(tx *store.Tx, typ string, id int64) target.Votes {
	v := awardVotes.Get(tx, countKey(typ, id))
	if len(v) != 16 {
		return target.Votes{}
	}
	return target.Votes{Up: int(binary.BigEndian.Uint64(v[:8])), Down: int(binary.BigEndian.Uint64(v[8:]))}
}

func addVotes(tx *store.Tx, typ string, id int64, d target.Votes) error {
	if d == (target.Votes{}) {
		return nil
	}
	v := readVotes(tx, typ, id)
	v.Up, v.Down = max(v.Up+d.Up, 0), max(v.Down+d.Down, 0)
	k := countKey(typ, id)
	if v == (target.Votes{}) {
		return awardVotes.Delete(tx, k)
	}
	buf := make([]byte, 16)
	binary.BigEndian.PutUint64(buf[:8], uint64(v.Up))
	binary.BigEndian.PutUint64(buf[8:], uint64(v.Down))
	return awardVotes.Put(tx, k, buf)
}

// insertAward stores an award and counts it when it is a vote; a second
// award of the same emoji by the same user on the awardable is
// store.ErrConflict.
func insertAward(tx *store.Tx, a *Award) error {
	if err := awardsTable.Insert(tx, a); err != nil {
		return err
	}
	return addVotes(tx, a.AwardableType, a.AwardableID, voteDelta(a.Name, 1))
}

func deleteAward(tx *store.Tx, a *Award) error {
	if err := awardsTable.Delete(tx, a.ID); err != nil {
		return err
	}
	return addVotes(tx, a.AwardableType, a.AwardableID, voteDelta(a.Name, -1))
}

// deleteAwardsBy deletes the awards an index key names, with their votes.
func deleteAwardsBy(tx *store.Tx, index, key string) error {
	ids, err := awardsTable.IDsBy(tx, index, key)
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := awardsTable.Get(tx, id)
		if err != nil {
			return err
		}
		if err := deleteAward(tx, a); err != nil {
			return err
		}
	}
	return nil
}

// awardsOf lists an awardable's awards in the order they were given.
func awardsOf(tx *store.Tx, typ string, id int64) ([]int64, error) {
	return awardsTable.IDsBy(tx, "awardable", noteableKey(typ, id))
}

func loadAwards(tx *store.Tx, ids []int64) ([]*Award, error) {
	out := make([]*Award, 0, len(ids))
	for _, id := range ids {
		a, err := awardsTable.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Votes implements target.Service.
func (s *Service) Votes(ctx context.Context, noteableType string, ids []int64) (map[int64]target.Votes, error) {
	out := make(map[int64]target.Votes, len(ids))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			if v := readVotes(tx, noteableType, id); v != (target.Votes{}) {
				out[id] = v
			}
		}
		return nil
	})
	return out, err
}

// Tallies implements target.Service: user notes and votes of a page of
// noteables, in one read.
func (s *Service) Tallies(ctx context.Context, noteableType string, ids []int64) (map[int64]target.Tally, error) {
	out := make(map[int64]target.Tally, len(ids))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			out[id] = target.Tally{Notes: userCount(tx, noteableType, id), Votes: readVotes(tx, noteableType, id)}
		}
		return nil
	})
	return out, err
}

// record is the contract's record of an award.
func (a *Award) record() target.Award {
	return target.Award{ID: a.ID, Name: a.Name, UserID: a.UserID, AwardableID: a.AwardableID, AwardableType: a.AwardableType,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

func awardRecords(list []*Award) []target.Award {
	out := make([]target.Award, len(list))
	for i, a := range list {
		out[i] = a.record()
	}
	return out
}

// awardTarget is what a request awards: a noteable, or one of its notes
// (noteID set), read again in each transaction (load).
type awardTarget struct {
	info   projects.ProjectInfo
	kind   target.Kind
	n      target.Noteable
	noteID int64 // 0: the noteable itself
	// Filled by load:
	typ    string
	id     int64
	author int64
}

// awarded resolves the project and the target w names, as the caller
// sees them, and the note noteRef names when it is set.
func (s *Service) awarded(ctx context.Context, w target.Where, noteRef *string) (*awardTarget, error) {
	info, k, n, err := s.locate(ctx, w)
	if err != nil {
		return nil, err
	}
	t := &awardTarget{info: info, kind: k, n: n}
	if noteRef != nil {
		if t.noteID, err = parseNoteID(*noteRef); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// load reads the awarded note in tx (a note of another noteable is no note
// of this one) and fills the awardable's type, id and author.
func (t *awardTarget) load(tx *store.Tx) error {
	if t.noteID == 0 {
		t.typ, t.id, t.author = t.n.Type, t.n.ID, t.n.AuthorID
		return nil
	}
	note, err := noteOf(tx, t.n, t.noteID)
	if err != nil {
		return err
	}
	t.typ, t.id, t.author = noteAwardable, note.ID, note.AuthorID
	return nil
}

// awardOf reads award id of the target; an award of another awardable is
// no award of this one.
func (t *awardTarget) awardOf(tx *store.Tx, id int64) (*Award, error) {
	a, err := awardsTable.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (a.AwardableType != t.typ || a.AwardableID != t.id)) {
		return nil, ErrAwardNotFound
	}
	return a, err
}

// parseAwardID is an award id from the path: not a number is 400, as
// GitLab's Integer parameter; a number that names no award is 404.
func parseAwardID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, target.BadParam("award_id")
	}
	if id <= 0 {
		return 0, ErrAwardNotFound
	}
	return id, nil
}

// Awards implements target.Service: a page of the award emoji of the
// target w names, or of its note noteRef, oldest first, and how many.
func (s *Service) Awards(ctx context.Context, w target.Where, noteRef *string, page target.Page) ([]target.Award, int, error) {
	t, err := s.awarded(ctx, w, noteRef)
	if err != nil {
		return nil, 0, err
	}
	var list []*Award
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		ids, err := awardsOf(tx, t.typ, t.id)
		if err != nil {
			return err
		}
		total = len(ids)
		list, err = loadAwards(tx, store.Window(ids, page.Offset, page.Limit))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return awardRecords(list), total, nil
}

// Award implements target.Service: award awardRef of the target w names,
// or of its note noteRef.
func (s *Service) Award(ctx context.Context, w target.Where, noteRef *string, awardRef string) (target.Award, error) {
	t, err := s.awarded(ctx, w, noteRef)
	if err != nil {
		return target.Award{}, err
	}
	id, err := parseAwardID(awardRef)
	if err != nil {
		return target.Award{}, err
	}
	var a *Award
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		a, err = t.awardOf(tx, id)
		return err
	})
	if err != nil {
		return target.Award{}, err
	}
	return a.record(), nil
}

// The awardable's vote by its own author: nobody votes on what they wrote.
var errAwardRefused = ErrAwardNotFound

// mayAward is GitLab's rule of who may award what: anyone who may comment,
// except that nobody votes (thumbsup, thumbsdown) on what they wrote.
func mayAward(author, user int64, name string) bool {
	return author != user || (name != upvoteName && name != downvoteName)
}

// award gives user's emoji name (normalized) to the target, in tx.
func (s *Service) award(tx *store.Tx, t *awardTarget, user int64, name string) (*Award, error) {
	if err := t.load(tx); err != nil {
		return nil, err
	}
	if !mayAward(t.author, user, name) {
		return nil, errAwardRefused
	}
	if !knownEmojiName(name) {
		return nil, target.ErrUnknownEmoji
	}
	at := s.now().UTC()
	a := &Award{ProjectID: t.n.ProjectID, AwardableType: t.typ, AwardableID: t.id, NoteableType: t.n.Type, NoteableID: t.n.ID,
		UserID: user, Name: name, CreatedAt: at, UpdatedAt: at}
	err := insertAward(tx, a)
	if errors.Is(err, store.ErrConflict) {
		return nil, target.ErrAwardTaken
	}
	return a, err
}

// AddAward implements target.Service: the caller's emoji on the target w
// names, or on its note noteRef. Awarding is commenting's right (a locked
// merge request refuses both), but a refusal is the award API's 404.
func (s *Service) AddAward(ctx context.Context, w target.Where, noteRef *string, rawName string) (target.Award, error) {
	t, err := s.awarded(ctx, w, noteRef)
	if err != nil {
		return target.Award{}, err
	}
	if strings.TrimSpace(rawName) == "" {
		return target.Award{}, target.Missing("name")
	}
	if err := writable(t.info); err != nil {
		return target.Award{}, err
	}
	if t.kind.CanComment != nil {
		if err := t.kind.CanComment(ctx, t.info, t.n); err != nil {
			if errors.Is(err, projects.ErrForbidden) {
				return target.Award{}, ErrAwardNotFound
			}
			return target.Award{}, err
		}
	}
	user := auth.FromContext(ctx).UserID()
	var a *Award
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		a, err = s.award(tx, t, user, normalizeEmoji(rawName))
		return err
	})
	if err != nil {
		return target.Award{}, err
	}
	return a.record(), nil
}

// RemoveAward implements target.Service: by the award's user or an
// administrator.
func (s *Service) RemoveAward(ctx context.Context, w target.Where, noteRef *string, awardRef string) error {
	t, err := s.awarded(ctx, w, noteRef)
	if err != nil {
		return err
	}
	id, err := parseAwardID(awardRef)
	if err != nil {
		return err
	}
	if err := writable(t.info); err != nil {
		return err
	}
	caller := auth.FromContext(ctx)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := t.load(tx); err != nil {
			return err
		}
		a, err := t.awardOf(tx, id)
		if err != nil {
			return err
		}
		// GITLAB-FACTS: 9.x answers unauthorized! (401, not 403) when
		// someone other than the award's user or an administrator takes
		// it back.
		if a.UserID != caller.UserID() && !caller.IsAdmin() {
			return auth.ErrUnauthorized
		}
		return deleteAward(tx, a)
	})
}

// emojiNote awards the emoji name (normalized) to n as a note whose body
// is only the emoji: the award is the answer. Like a comment, it marks the
// caller's todos on n done.
//
// GITLAB-FACTS (GitLab 8.x's Notes::CreateService, which the spec
// describes: "a different object is returned"): a second award of the same
// emoji is 404 {"message":"404 Note {:name=>[\"has already been taken\"]} Not Found"},
// the notes API's wording for a note that was not saved (the adapter's).
func (s *Service) emojiNote(ctx context.Context, info projects.ProjectInfo, n target.Noteable, user int64, name string) (*Award, error) {
	t := &awardTarget{info: info, n: n}
	var a *Award
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if a, err = s.award(tx, t, user, name); err != nil {
			return err
		}
		return s.TodosDone(tx.Context(), n.Target(), user)
	})
	return a, err
}
