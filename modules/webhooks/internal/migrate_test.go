package internal

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
)

// TestMigrationMovesTheOldQueue writes deliveries as a version before the
// deliveries queue kept them (webhooks.queue and its order index), runs
// the module's migrations, and finds them in the deliveries queue: each
// hook's line in order, attempts and next try kept, the old buckets gone.
func TestMigrationMovesTheOldQueue(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.EnsureBuckets(append(oldQueue.Buckets(), oldQueueOrder)); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	retry := created.Add(time.Minute)
	old := []oldDelivery{
		{Delivery: Delivery{Hook: "p7", HookID: 7, ProjectID: 3, Trigger: "push_events", Event: "Push Hook",
			Body: json.RawMessage(`{"n":1}`), CreatedAt: created}, Attempts: 2, NextTry: retry},
		{Delivery: Delivery{Hook: "s1", HookID: 1, System: true, Trigger: "push_events", Event: "System Hook",
			Body: json.RawMessage(`{"n":2}`), CreatedAt: created}, NextTry: created},
		{Delivery: Delivery{Hook: "p7", HookID: 7, ProjectID: 3, Trigger: "issues_events", Event: "Issue Hook",
			Body: json.RawMessage(`{"n":3}`), CreatedAt: created}, NextTry: created},
	}
	err = db.Update(context.Background(), func(tx *store.Tx) error {
		for i := range old {
			d := old[i] // Insert sets the id: a copy per run of this function
			if err := oldQueue.Insert(tx, &d); err != nil {
				return err
			}
			k := append(append([]byte(d.Hook), 0), store.Key(d.ID)...)
			if err := store.Keys(oldQueueOrder).Put(tx, k, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), Migrations()); err != nil {
		t.Fatal(err)
	}
	q := workqueue.New(db, deliveriesQueue, backoff.Policy{}, func(context.Context, *workqueue.Job) error { return nil })
	check := func(hook string, want ...oldDelivery) {
		t.Helper()
		items, err := q.Items(context.Background(), hook)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != len(want) {
			t.Fatalf("hook %s: %d queued, want %d", hook, len(items), len(want))
		}
		for i, it := range items {
			var d Delivery
			if err := json.Unmarshal(it.Payload, &d); err != nil {
				t.Fatal(err)
			}
			w := want[i]
			if d.Hook != w.Hook || d.HookID != w.HookID || d.System != w.System || d.ProjectID != w.ProjectID ||
				d.Trigger != w.Trigger || d.Event != w.Event || string(d.Body) != string(w.Body) || !d.CreatedAt.Equal(w.CreatedAt) {
				t.Errorf("hook %s #%d: %+v, want %+v", hook, i, d, w.Delivery)
			}
			if it.Key != hook || it.Attempts != w.Attempts || !it.NextTry.Equal(w.NextTry) || !it.EnqueuedAt.Equal(w.CreatedAt) {
				t.Errorf("hook %s #%d: item %+v, want attempts %d, next try %s", hook, i, it, w.Attempts, w.NextTry)
			}
		}
	}
	check("p7", old[0], old[2])
	check("s1", old[1])
	err = db.View(context.Background(), func(tx *store.Tx) error {
		for _, name := range append(oldQueue.Buckets(), oldQueueOrder) {
			if store.Keys(name).Exists(tx) {
				t.Errorf("bucket %s is still there", name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrationOnAFreshStore: nothing to move, nothing refused.
func TestMigrationOnAFreshStore(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background(), Migrations()); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.SchemaVersion("webhooks"); v != 1 {
		t.Errorf("schema version %d, want 1", v)
	}
}
