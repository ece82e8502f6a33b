package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
)

// SetAfterMove sets the hook that runs right after refs moved and before
// their push events are published (nil removes it); an error stops there
// as a crash would. Set it before the requests it should see.
func SetAfterMove(w *Writer, hook func(reqCtx context.Context) error) { w.afterMove = hook }

// PendingRefChanges counts the ref journal's entries.
func PendingRefChanges(db *store.DB) (int, error) {
	n := 0
	err := db.View(context.Background(), func(tx *store.Tx) error {
		n = refJournal.Count(tx)
		return nil
	})
	return n, err
}
