package events_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// TestAwaits: an event is awaited by a subscriber until that subscriber
// has handled it, whatever the others did; match sees its payload.
func TestAwaits(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	good := newRecorder[pushed]()
	flaky := newRecorder[pushed]()
	flaky.failures = 1_000_000
	bus := newBus(t, db, good.sub("good"), flaky.sub("flaky"))
	awaits := func(name string, project int64) bool {
		t.Helper()
		var found bool
		err := db.View(context.Background(), func(tx *store.Tx) error {
			var err error
			found, err = bus.Awaits(tx, name, func(payload json.RawMessage) bool {
				var ev pushed
				return json.Unmarshal(payload, &ev) == nil && ev.Project == project
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	publish(t, db, bus, pushed{Project: 1}, deleted{Project: 2})
	if !awaits("good", 1) || !awaits("flaky", 1) {
		t.Fatal("an undelivered event is not awaited")
	}
	if awaits("good", 2) || awaits("nobody", 1) {
		t.Fatal("awaited: another payload, or a subscriber that does not exist")
	}
	bus.Start()
	recv(t, good.got, "good's event")
	recv(t, flaky.tried, "flaky's attempt")
	for i := 0; i < 500 && awaits("good", 1); i++ {
		recv(t, flaky.tried, "flaky's retry")
	}
	if awaits("good", 1) {
		t.Fatal("an event its subscriber handled is still awaited")
	}
	if !awaits("flaky", 1) {
		t.Fatal("an event its subscriber failed is not awaited")
	}
}
