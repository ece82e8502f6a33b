package internal

import (
	"context"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// SeedNote is one note for Seed.
type SeedNote struct {
	Noteable target.Noteable
	AuthorID int64
	Body     string
	System   bool
	At       time.Time
}

// Seed writes notes straight to the store, many to a transaction, without
// mentions, todos, feed entries or events: for benchmarks that need a
// million notes in seconds. The API never calls it.
func Seed(ctx context.Context, db *store.DB, list []SeedNote) error {
	return db.UpdateAlone(ctx, func(tx *store.Tx) error {
		for _, s := range list {
			if err := insertNote(tx, noteFor(s.Noteable, s.AuthorID, s.Body, s.System, s.At)); err != nil {
				return err
			}
		}
		return nil
	})
}
