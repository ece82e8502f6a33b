package webhooks_test

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/modules/webhooks"
)

// hookEvents reads a hook's delivery log as the project's owner.
func hookEvents(t testing.TB, e *env, token string, project, hook int64) []map[string]any {
	t.Helper()
	st, raw := e.call(t, token, "GET", "/projects/"+store.IDString(project)+"/hooks/"+store.IDString(hook)+"/events?per_page=100", nil)
	if st != http.StatusOK {
		t.Fatalf("events: %d %s", st, raw)
	}
	return list(t, raw)
}

// waitEvents polls the log until it holds n attempts (newest first).
func waitEvents(t testing.TB, e *env, token string, project, hook int64, n int) []map[string]any {
	t.Helper()
	var got []map[string]any
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		got = hookEvents(t, e, token, project, hook)
		return len(got) >= n, fmt.Sprintf("delivery log: %d entries, want %d: %v", len(got), n, got)
	})
	return got
}

// A receiver that answers 500 twice gets the same payload a third time,
// and the log shows the three attempts.
func TestRetryAfterServerError(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "flaky", "private")
	rcv := newReceiver(t)
	rcv.answer = func(n int, _ delivery) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	}
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/h", "")
	c := commitFile(t, alice.Client, p.ID, "master", "a", "a")
	got := rcv.waitFor(t, "/h", 3)
	for i, d := range got {
		if d.Body["after"] != c.ID {
			t.Errorf("request %d: after = %v", i+1, d.Body["after"])
		}
	}
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 3)
	for i, want := range []struct {
		attempt int
		status  int
		outcome string
	}{{3, 200, "delivered"}, {2, 500, "retrying"}, {1, 500, "retrying"}} {
		wantFields(t, "event["+strconv.Itoa(i)+"]", log[i], map[string]any{
			"attempt": want.attempt, "response_status": want.status, "outcome": want.outcome, "trigger": "push_events",
			"hook_id": h.ID, "url": rcv.URL + "/h",
		})
	}
	if len(rcv.all()) != 3 {
		t.Errorf("received %d requests, want 3", len(rcv.all()))
	}
}

// A receiver that is not listening yet: the delivery is retried until it
// is, then arrives once.
func TestRetryAfterRefusedConnection(t *testing.T) {
	t.Parallel()
	e := start(t, true, fennectest.WithModuleConfig(webhooks.SectionName, func(c *webhooks.Config) { c.MaxAttempts = 1000 }))
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "down", "private")
	// Take a free port, then close it: connections are refused there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := addHook(t, alice.Client, p.ID, "http://"+addr+"/late", "")
	c := commitFile(t, alice.Client, p.ID, "master", "a", "a")
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 2)
	wantFields(t, "refused attempt", log[0], map[string]any{"outcome": "retrying", "response_status": nil,
		"internal_error_message": anyValue})
	if msg, _ := log[0]["internal_error_message"].(string); msg == "" {
		t.Errorf("no error message: %v", log[0])
	}
	// Now listen there.
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	rcv := newReceiverOn(t, l)
	var got []map[string]any
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		got = hookEvents(t, e, alice.Token, p.ID, int64(h.ID))
		return got[0]["outcome"] == "delivered", fmt.Sprintf("never delivered: %v", got[0])
	})
	wantFields(t, "delivered", got[0], map[string]any{"response_status": 200})
	if b := got[0]["request_data"].(map[string]any); b["after"] != c.ID {
		t.Errorf("delivered %v", b["after"])
	}
	if n := len(rcv.all()); n != 1 {
		t.Errorf("the receiver got %d requests, want 1", n)
	}
}

// Deliveries to one hook arrive in the order of their events, even when
// one of them has to be retried; a second hook is not held up by it.
func TestDeliveriesInOrderPerHook(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "ordered", "private")
	slow := newReceiver(t)
	slow.answer = func(n int, _ delivery) int {
		if n == 2 || n == 3 {
			return http.StatusBadGateway
		}
		return http.StatusOK
	}
	fastRcv := newReceiver(t)
	addHook(t, alice.Client, p.ID, slow.URL+"/slow", "")
	addHook(t, alice.Client, p.ID, fastRcv.URL+"/fast", "")
	const n = 12
	var shas []string
	for i := range n {
		shas = append(shas, commitFile(t, alice.Client, p.ID, "master", "f", strconv.Itoa(i)).ID)
	}
	for r, want := range map[*receiver]int{slow: n + 2, fastRcv: n} {
		got := r.waitFor(t, "", want)
		var order []string
		for _, d := range got {
			after := d.Body["after"].(string)
			if len(order) == 0 || order[len(order)-1] != after {
				order = append(order, after)
			}
		}
		if len(order) != n {
			t.Fatalf("%d distinct deliveries in a row, want %d", len(order), n)
		}
		for i := range shas {
			if order[i] != shas[i] {
				t.Fatalf("delivery %d is %s, want %s (order %v)", i, order[i], shas[i], order)
			}
		}
	}
	if got := len(slow.all()); got != n+2 {
		t.Errorf("slow receiver got %d requests, want %d (two retries)", got, n+2)
	}
}

// By default a hook cannot reach the server's own network: 127.0.0.1 is
// refused when the hook is saved (nothing stored), and a name that
// resolves to it when a delivery connects. The attempt is logged with the
// reason and not retried.
func TestLocalDestinationsRefusedByDefault(t *testing.T) {
	t.Parallel()
	e := start(t, false)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "guarded", "private")
	rcv := newReceiver(t)
	port := rcv.Listener.Addr().(*net.TCPAddr).Port
	st, raw := e.call(t, alice.Token, "POST", "/projects/"+store.IDString(p.ID)+"/hooks", map[string]any{"url": rcv.URL + "/ip", "push_events": true})
	if st != 422 || string(raw) != `{"error":"Invalid url given"}` {
		t.Errorf("a hook on 127.0.0.1: %d %s", st, raw)
	}
	if hooks, _, err := alice.Client.Projects.ListProjectHooks(p.ID, nil); err != nil || len(hooks) != 0 {
		t.Fatalf("a refused hook was stored: %v %v", hooks, err)
	}
	byName := addHook(t, alice.Client, p.ID, "http://localhost:"+strconv.Itoa(port)+"/name", "")
	other := addHook(t, alice.Client, p.ID, "http://localhost:"+strconv.Itoa(port)+"/other", "")
	commitFile(t, alice.Client, p.ID, "master", "a", "a")
	for _, h := range []int64{int64(byName.ID), int64(other.ID)} {
		log := waitEvents(t, e, alice.Token, p.ID, h, 1)
		wantFields(t, "refused", log[0], map[string]any{"outcome": "refused", "attempt": 1, "response_status": nil,
			"internal_error_message": "Requests to localhost are not allowed"})
	}
	// A second event: still refused, and the first was not retried.
	commitFile(t, alice.Client, p.ID, "master", "a", "b")
	for _, h := range []int64{int64(byName.ID), int64(other.ID)} {
		log := waitEvents(t, e, alice.Token, p.ID, h, 2)
		if len(log) != 2 || log[1]["attempt"] != float64(1) || log[0]["attempt"] != float64(1) {
			t.Errorf("hook %d log: %v", h, log)
		}
	}
	if got := rcv.all(); len(got) != 0 {
		t.Errorf("the receiver was reached %d times", len(got))
	}
}

// allow_local_requests lets a hook reach a name that resolves to the
// loopback.
func TestLocalDestinationsAllowedByConfig(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "allowed", "private")
	rcv := newReceiver(t)
	port := rcv.Listener.Addr().(*net.TCPAddr).Port
	h := addHook(t, alice.Client, p.ID, "http://localhost:"+strconv.Itoa(port)+"/name", "")
	c := commitFile(t, alice.Client, p.ID, "master", "a", "a")
	if d := rcv.waitFor(t, "/name", 1)[0]; d.Body["after"] != c.ID {
		t.Errorf("delivered %v", d.Body["after"])
	}
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1)
	wantFields(t, "delivered", log[0], map[string]any{"outcome": "delivered", "response_status": 200,
		"url": "http://localhost:" + strconv.Itoa(port) + "/name"})
}

// enable_ssl_verification: on, a receiver with an untrusted certificate is
// not delivered to (the TLS error is logged); off, it is.
func TestSSLVerification(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tls", "private")
	rcv := newTLSReceiver(t)
	verified := addHook(t, alice.Client, p.ID, rcv.URL+"/verified", "")
	unverified := addHook(t, alice.Client, p.ID, rcv.URL+"/unverified", "")
	if _, _, err := alice.Client.Projects.EditProjectHook(p.ID, unverified.ID, &gitlab.EditProjectHookOptions{
		URL: gitlab.Ptr(rcv.URL + "/unverified"), EnableSSLVerification: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	c := commitFile(t, alice.Client, p.ID, "master", "a", "a")
	if d := rcv.waitFor(t, "/unverified", 1)[0]; d.Body["after"] != c.ID {
		t.Errorf("delivered %v", d.Body["after"])
	}
	log := waitEvents(t, e, alice.Token, p.ID, int64(verified.ID), 1)
	if msg, _ := log[len(log)-1]["internal_error_message"].(string); !strings.Contains(msg, "certificate") {
		t.Errorf("verified hook: %v", log[len(log)-1])
	}
	if got := rcv.all(); len(got) != 1 {
		t.Errorf("the receiver got %d requests, want only the unverified hook's", len(got))
	}
}

// A receiver slower than the timeout: the attempt is abandoned, logged,
// and retried.
func TestTimeoutRetried(t *testing.T) {
	t.Parallel()
	// One second: the first attempt hangs until then; the retry, answered
	// at once, must fit in it even on a loaded machine.
	e := start(t, true, fennectest.WithModuleConfig(webhooks.SectionName, func(c *webhooks.Config) { c.Timeout = time.Second }))
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "slow", "private")
	rcv := newReceiver(t)
	rcv.hang = func(n int) bool { return n == 1 }
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/slow", "")
	c := commitFile(t, alice.Client, p.ID, "master", "a", "a")
	got := rcv.waitFor(t, "/slow", 2)
	if got[1].Body["after"] != c.ID || got[1].Status != 200 {
		t.Errorf("second request: %d %v", got[1].Status, got[1].Body["after"])
	}
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 2)
	// The log is newest first; the first attempt is its last entry.
	first := log[len(log)-1]
	wantFields(t, "timed out", first, map[string]any{"outcome": "retrying", "attempt": 1, "response_status": nil})
	if msg, _ := first["internal_error_message"].(string); !strings.Contains(strings.ToLower(msg), "timeout") && !strings.Contains(msg, "deadline") {
		t.Errorf("timeout error: %q", msg)
	}
	if d := first["execution_duration"].(float64); d < 1 || d > 10 {
		t.Errorf("execution_duration %v", d)
	}
}
