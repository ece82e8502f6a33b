package internal

import (
	"context"
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
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

// SetRetryGrace sets how long a ref change's retry job waits before it
// runs; a test that simulates a crash makes it longer than the test.
func SetRetryGrace(w *Writer, d time.Duration) { w.retryGrace = d }

// RetryJobs counts the live jobs of the push events' retry queue.
func RetryJobs(w *Writer) (int, error) {
	var keys []string
	if err := w.db.View(context.Background(), func(tx *store.Tx) error {
		var err error
		keys, err = workqueue.KeysIn(tx, pushEventsQueue)
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		items, err := w.retries.Items(context.Background(), k)
		if err != nil {
			return 0, err
		}
		n += len(items)
	}
	return n, nil
}

// SetFailPublish has fn called in each transaction that publishes push
// events; an error it returns fails that transaction (nil removes it).
func SetFailPublish(w *Writer, fn func() error) { w.failPublish = fn }

// ReplayJournal runs the replay a node runs when it starts or takes the
// lead (Writer.Provision).
func ReplayJournal(ctx context.Context, w *Writer) error { return w.replayJournal(ctx) }
