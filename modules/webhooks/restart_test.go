package webhooks_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/modules/webhooks"
)

// The server stops with a backlog of deliveries (the receiver accepted the
// first three, then answers 503) and starts again on the same data: every
// push is accepted exactly once, in order.
func TestRestartInTheMiddleOfABacklog(t *testing.T) {
	t.Parallel()
	dir, password := t.TempDir(), "root-restart-8412"
	patient := fennectest.WithModuleConfig(webhooks.SectionName, func(c *webhooks.Config) { c.MaxAttempts = 100000 })
	rcv := newReceiver(t)
	var accepted atomic.Int32
	var down atomic.Bool
	rcv.answer = func(int, delivery) int {
		if !down.Load() && accepted.Add(1) <= 3 {
			return http.StatusOK
		}
		down.Store(true)
		return http.StatusServiceUnavailable
	}
	const n = 10
	var shas []string
	var project int64
	var token string
	t.Run("first run", func(t *testing.T) {
		e := start(t, true, fennectest.WithDataDir(dir, password), patient)
		alice := e.CreateUser(t, "alice")
		token = alice.Token
		p := stocktest.NewProject(t, alice.Client, "restarted", "private")
		project = p.ID
		addHook(t, alice.Client, p.ID, rcv.URL+"/backlog", "")
		for i := range n {
			shas = append(shas, commitFile(t, alice.Client, p.ID, "master", "f", strconv.Itoa(i)).ID)
		}
		rcv.waitFor(t, "/backlog", 5) // three accepted, then refusals: a backlog
		// Every push is in the hook's queue before the stop: what this test
		// restarts is a backlog of deliveries, not of outbox events.
		e.Drain(t)
	})
	// Stopped. Whatever was sent was recorded; the rest waits in the store.
	down.Store(false)
	accepted.Store(-1 << 20)
	e := start(t, true, fennectest.WithDataDir(dir, password), patient)
	// Count what was accepted before waiting for more (poll looks first):
	// the whole backlog may already have come through while start returned.
	accepted200 := func() (ok []string) {
		for _, d := range rcv.all() {
			if d.Path == "/backlog" && d.Status == http.StatusOK {
				ok = append(ok, d.Body["after"].(string))
			}
		}
		return ok
	}
	var ok []string
	fennectest.Poll(t, 60*time.Second, func() (bool, string) {
		ok = accepted200()
		return len(ok) >= n, fmt.Sprintf("%d accepted deliveries after the restart, want %d", len(ok), n)
	})
	if len(ok) != n {
		t.Fatalf("%d accepted deliveries, want %d", len(ok), n)
	}
	for i := range shas {
		if ok[i] != shas[i] {
			t.Fatalf("accepted delivery %d is %s, want %s", i, ok[i], shas[i])
		}
	}
	e.Drain(t)
	// Nothing more comes: the log's last attempt of the project's hook is
	// the tenth push, delivered.
	hooks, _, err := e.NewClient(t, token).Projects.ListProjectHooks(project, nil)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks: %v %v", hooks, err)
	}
	// The attempt is recorded just after the receiver answered it: poll.
	var log []map[string]any
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		log = hookEvents(t, e, token, project, int64(hooks[0].ID))
		b := log[0]["request_data"].(map[string]any)
		return b["after"] == shas[n-1], fmt.Sprintf("the last attempt is %v, want the delivery of %s", log[0], shas[n-1])
	})
	wantFields(t, "last attempt", log[0], map[string]any{"outcome": "delivered", "response_status": 200})
	// The queue is empty now (it sends in order and the tenth went last):
	// count again, for a duplicate that came after the first count.
	accepts := 0
	for _, d := range rcv.all() {
		if d.Status == http.StatusOK {
			accepts++
		}
	}
	if accepts != n {
		t.Errorf("%d accepted deliveries in the end, want %d", accepts, n)
	}
}
