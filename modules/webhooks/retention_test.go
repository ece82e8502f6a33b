package webhooks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/modules/webhooks"
)

// Attempts older than delivery_log_retention leave the log in the
// background; younger ones stay.
func TestDeliveryLogRetention(t *testing.T) {
	t.Parallel()
	e := start(t, true, fennectest.WithModuleConfig(webhooks.SectionName, func(c *webhooks.Config) {
		// Long enough for the test to read an entry under a loaded -race
		// run before it goes, short enough to see it go.
		c.DeliveryLogRetention = 3 * time.Second
		c.PruneInterval = 20 * time.Millisecond
	}))
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "pruned", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/r", "")
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	first := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1)[0]["id"]
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		log := hookEvents(t, e, alice.Token, p.ID, int64(h.ID))
		if len(log) > 0 && log[0]["id"] != first {
			t.Fatalf("log %v", log)
		}
		return len(log) == 0, fmt.Sprintf("never pruned: %v", log)
	})
	// A new attempt is there right after it is made.
	commitFile(t, alice.Client, p.ID, "master", "a", "2")
	if log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1); len(log) != 1 || log[0]["id"] == first {
		t.Errorf("log %v", log)
	}
}

// A hook's log keeps its latest 200 attempts whatever the traffic: each
// attempt past them removes the oldest, in the attempt's transaction.
func TestDeliveryLogIsBoundedPerHook(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "busy", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/b", "")
	other := addHook(t, alice.Client, p.ID, rcv.URL+"/o", "")
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1)
	waitEvents(t, e, alice.Token, p.ID, int64(other.ID), 1)
	path := fmt.Sprintf("/projects/%d/hooks/%d/test/push_events", p.ID, h.ID)
	for i := 0; i < 205; i++ {
		if st, raw := e.call(t, alice.Token, "POST", path, nil); st != 201 {
			t.Fatalf("test %d: %d %s", i, st, raw)
		}
	}
	total := func(hook int64) string {
		resp := e.Do(t, "GET", fmt.Sprintf("/api/v4/projects/%d/hooks/%d/events?per_page=1", p.ID, hook), nil, "PRIVATE-TOKEN", alice.Token)
		resp.Body.Close()
		return resp.Header.Get("X-Total")
	}
	if got := total(h.ID); got != "200" {
		t.Errorf("the busy hook's log holds %s attempts, want 200", got)
	}
	if got := total(other.ID); got != "1" {
		t.Errorf("the other hook's log holds %s attempts, want 1", got)
	}
	if log := hookEvents(t, e, alice.Token, p.ID, int64(h.ID)); len(log) == 0 || log[0]["trigger"] != "push_events" {
		t.Errorf("newest entry: %v", log[:min(1, len(log))])
	}
}
