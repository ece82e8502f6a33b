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
