package internal

// Clean-up after a project is deleted: its hooks and its uploads go when the
// "deleted" ProjectEvent is delivered (after the deleting transaction
// committed, retried by the outbox until it succeeds).

import (
	"context"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
)

// CleanupDeps are what the clean-up subscribers are built from.
type CleanupDeps struct {
	fennec.In
	DB    *store.DB
	Blobs blob.Store
}

// CleanupSubscribers remove what a deleted project leaves.
func CleanupSubscribers(d CleanupDeps) []events.Subscriber {
	db := d.DB
	deleted := func(ev event.ProjectEvent) bool { return ev.Action == event.ProjectDeleted }
	return []events.Subscriber{
		events.Only(events.Subscribe("projects.hooks-cleanup", func(ctx context.Context, ev event.ProjectEvent) error {
			if ev.Action != event.ProjectDeleted || ev.ProjectID <= 0 {
				return nil
			}
			return db.Update(ctx, func(tx *store.Tx) error {
				_, err := hooks.DeleteBy(tx, "project", store.IDString(ev.ProjectID))
				return err
			})
		}), deleted),
		events.Only(events.Subscribe("projects.uploads-cleanup", func(ctx context.Context, ev event.ProjectEvent) error {
			if ev.Action != event.ProjectDeleted || ev.ProjectID <= 0 {
				return nil
			}
			return d.Blobs.DeletePrefix(ctx, "uploads/"+store.IDString(ev.ProjectID))
		}), deleted),
	}
}
