package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
)

// RefChangePending says whether a change of ref (full name) of project to
// sha is under way: journaled, so its ref has moved or is about to, and its
// PushEvent not yet published. Read with a transaction in ctx, together
// with the outbox, it tells a module whether a push it has not seen yet
// will still reach it (see moveRefs: the entry is committed before the ref
// moves and removed in the transaction that publishes the event).
//
// The journal holds only the changes in flight, so the scan is short.
func (w *Writer) RefChangePending(ctx context.Context, projectID int64, ref, sha string) (bool, error) {
	found := false
	err := w.db.View(ctx, func(tx *store.Tx) error {
		return refJournal.Scan(tx, false, 0, func(c *refChange) (bool, error) {
			found = c.ProjectID == projectID && c.Ref == ref && c.New == sha
			return !found, nil
		})
	})
	return found, err
}
