package internal

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// ErrAwardNotFound: no such award emoji on the awardable, or the caller may
// not award it; answered 404 Award Emoji Not Found.
var ErrAwardNotFound = errors.New("notes: award emoji not found")

// The awardable type of an award on a note; the others are the noteable
// types (an award on an issue is an award on the "Issue" noteable).
const noteAwardable = "Note"

// Award is one award emoji: a user's emoji on a noteable or on one of its
// notes. Ids grow with time, so an awardable's awards in id order are in
// the order they were given (GitLab lists them so).
type Award struct {
	ID            uint64 `json:"id"`
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

func (a *Award) RecordID() uint64      { return a.ID }
func (a *Award) SetRecordID(id uint64) { a.ID = id }

// awardKey is what makes an award unique: a user gives an emoji once per
// awardable.
func awardKey(typ string, id, user int64, name string) string {
	return noteableKey(typ, id) + ":" + i64(user) + ":" + name
}

var awardsTable = store.NewTable[Award]("notes.awards",
	store.Index[Award]{Name: "key", Unique: true, Keys: func(a *Award) []string {
		return []string{awardKey(a.AwardableType, a.AwardableID, a.UserID, a.Name)}
	}},
	store.Index[Award]{Name: "awardable", Keys: func(a *Award) []string { return []string{noteableKey(a.AwardableType, a.AwardableID)} }},
	store.Index[Award]{Name: "noteable", Keys: func(a *Award) []string { return []string{noteableKey(a.NoteableType, a.NoteableID)} }},
	store.Index[Award]{Name: "project", Keys: func(a *Award) []string { return []string{i64(a.ProjectID)} }},
)

// awardVotes maps awardable type ++ 0 ++ id (8 bytes) to its upvotes and
// downvotes (8 bytes each), kept with every award written or deleted, so a
// page of issues reads its upvotes and downvotes without reading awards.
var awardVotes = []byte("notes.award_votes")

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
	v := tx.Bucket(awardVotes).Get(countKey(typ, id))
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
		return tx.Bucket(awardVotes).Delete(k)
	}
	buf := make([]byte, 16)
	binary.BigEndian.PutUint64(buf[:8], uint64(v.Up))
	binary.BigEndian.PutUint64(buf[8:], uint64(v.Down))
	return tx.Bucket(awardVotes).Put(k, buf)
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
func awardsOf(tx *store.Tx, typ string, id int64) ([]uint64, error) {
	return awardsTable.IDsBy(tx, "awardable", noteableKey(typ, id))
}

func loadAwards(tx *store.Tx, ids []uint64) ([]*Award, error) {
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
