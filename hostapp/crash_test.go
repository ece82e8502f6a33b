package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/store"
)

// TestKill9KeepsAcknowledgedWrites checks the store's write contract (issue
// 11) on the real binary: 32 writers hammer five write endpoints, the server
// is killed with SIGKILL at a random moment and restarted on the same data,
// several rounds in a row. After each restart:
//
//   - every write answered 2xx is there exactly once, with the id it was
//     answered with;
//   - a write whose request failed (in flight at the kill) is there at most
//     once, and stays as it was first seen in later rounds; one refused
//     before it reached the server is absent;
//   - nothing is half applied: each listed project is readable by id and by
//     path, each key by id with its owner, list totals match the rows, and
//     unknown-outcome creates that did not land can be made again (no
//     orphaned unique index entry);
//   - the project's description is the value of a write that was not
//     superseded by a later acknowledged one;
//   - the outbox delivered what was pending at the kill: every project has
//     exactly one "created" entry in its feed.
//
// A kill -9 loses what the process had not written to the kernel, not what
// the kernel had not flushed, so this proves acknowledging only after commit,
// atomic commits and outbox redelivery; the fsync itself is the store's
// (NoSync stays off here).
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	const (
		rounds  = 4
		writers = 32
		env     = "FENNEC_ROOT_PASSWORD=password-123"
	)
	began := time.Now()
	data := t.TempDir()
	s := startServer(t, data, env)
	c := newCrashClient(s, "")
	status, _, raw, err := c.do(http.MethodPost, "/session", map[string]string{"login": "root", "password": "password-123"})
	var session struct {
		Token string `json:"private_token"`
	}
	if err != nil || status != http.StatusCreated || json.Unmarshal(raw, &session) != nil {
		t.Fatalf("sign in: %d %v %s", status, err, raw)
	}
	c.token = session.Token

	var project struct {
		ID int64 `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]string{"name": "crash"}, http.StatusCreated, &project)
	var commit struct {
		ID string `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/repository/commits", project.ID), map[string]any{
		"branch": "master", "commit_message": "first",
		"actions": []map[string]string{{"action": "create", "file_path": "README.md", "content": "crash test\n"}},
	}, http.StatusCreated, &commit)
	if len(commit.ID) != 40 {
		t.Fatalf("commit sha %q", commit.ID)
	}
	target := crashTarget{project: project.ID, sha: commit.ID}

	l := newCrashLedger()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := 1; round <= rounds; round++ {
		delay := 300*time.Millisecond + time.Duration(rng.Int64N(int64(1200*time.Millisecond)))
		atts, killAt := hammer(t, s, c, target, round, writers, delay)
		c.close()
		if err := store.Verify(filepath.Join(data, "fennec.db")); err != nil {
			t.Fatalf("round %d: store after kill -9: %v", round, err)
		}
		s = startServer(t, data, env)
		c = newCrashClient(s, c.token)
		counts := l.record(t, atts, killAt)
		l.verify(t, c, target, round)
		t.Logf("round %d: killed after %v; %s; %v so far", round, delay.Round(time.Millisecond), counts, time.Since(began).Round(time.Millisecond))
		if t.Failed() {
			break
		}
	}
	if !t.Failed() {
		// A redelivery after any of the crashes would show as a second entry.
		l.checkFeeds(t, c, l.projects.present(), true)
	}
	c.close()
	landed, vanished := 0, 0
	for _, cs := range []*crashSet{l.statuses, l.comments, l.keys, l.projects} {
		landed, vanished = landed+cs.landed, vanished+cs.vanished
	}
	t.Logf("%d rounds in %v; of the creates in flight at a kill, %d had landed and %d had not",
		rounds, time.Since(began).Round(time.Millisecond), landed, vanished)
}

type crashOp int

const (
	opStatus crashOp = iota
	opComment
	opDescription
	opKey
	opProject
	numCrashOps
)

func (o crashOp) String() string {
	return [...]string{"status", "comment", "description", "key", "project"}[o]
}

type crashTarget struct {
	project int64
	sha     string
}

// crashAttempt is one write request and what became of it.
type crashAttempt struct {
	op         crashOp
	value      string // the status name, comment note, description, key title or project name
	key        string // opKey: the authorized_keys line sent
	start, end time.Time
	status     int
	err        error
	id         int64 // from a 2xx answer (statuses, keys, projects)
}

func (a *crashAttempt) acked() bool { return a.err == nil && a.status/100 == 2 }

// refused: the connection was refused, so the server was already gone and
// the request never reached it.
func (a *crashAttempt) refused() bool { return a.err != nil && errors.Is(a.err, syscall.ECONNREFUSED) }

func (a *crashAttempt) request(tg crashTarget) (method, path string, body any) {
	switch a.op {
	case opStatus:
		return http.MethodPost, fmt.Sprintf("/projects/%d/statuses/%s", tg.project, tg.sha), map[string]string{"state": "success", "name": a.value}
	case opComment:
		return http.MethodPost, fmt.Sprintf("/projects/%d/repository/commits/%s/comments", tg.project, tg.sha), map[string]string{"note": a.value}
	case opDescription:
		return http.MethodPut, fmt.Sprintf("/projects/%d", tg.project), map[string]string{"name": "crash", "description": a.value}
	case opKey:
		return http.MethodPost, "/user/keys", map[string]string{"title": a.value, "key": a.key}
	default:
		return http.MethodPost, "/projects", map[string]string{"name": a.value}
	}
}

// newKeyLine is a fresh ed25519 public key in authorized_keys form, with
// comment when there is one, as the server normalizes it.
func newKeyLine(t testing.TB, comment string) string {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Error(err)
		return ""
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Error(err)
		return ""
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
	if comment == "" {
		return line
	}
	return line + " " + comment
}

// hammer runs writers until delay has passed, kills the server with SIGKILL
// and returns every attempt once all writers have stopped.
func hammer(t *testing.T, s *server, c *crashClient, tg crashTarget, round, writers int, delay time.Duration) ([]*crashAttempt, time.Time) {
	t.Helper()
	var (
		mu      sync.Mutex
		atts    []*crashAttempt
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for i := 0; !stopped.Load(); i++ {
				a := &crashAttempt{op: crashOp((w + i) % int(numCrashOps)), value: fmt.Sprintf("r%d-w%02d-%05d", round, w, i)}
				if a.op == opKey {
					a.key = newKeyLine(t, a.value)
				}
				method, path, body := a.request(tg)
				// Recorded before it is sent: whatever reached the server is known.
				mu.Lock()
				atts = append(atts, a)
				mu.Unlock()
				a.start = time.Now()
				var raw []byte
				a.status, _, raw, a.err = c.do(method, path, body)
				a.end = time.Now()
				if a.err == nil && a.status/100 == 2 && a.op != opComment && a.op != opDescription {
					var v struct {
						ID int64 `json:"id"`
					}
					if err := json.Unmarshal(raw, &v); err != nil || v.ID == 0 {
						t.Errorf("%s %s answered %d without an id: %.200s", method, path, a.status, raw)
					}
					a.id = v.ID
				} else if a.err == nil && a.status/100 != 2 {
					t.Errorf("%s %s: %d %.300s", method, path, a.status, raw)
				}
			}
		})
	}
	time.Sleep(delay)
	killAt := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stopped.Store(true)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed server did not exit")
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("writers did not stop after the kill")
	}
	return atts, killAt
}

// crashSet tracks one kind of created row across rounds.
type crashSet struct {
	kind     string
	want     map[string]bool  // true: must be listed once; false: must stay absent
	maybe    map[string]bool  // this round's unknown outcomes
	ids      map[string]int64 // ids answered or seen
	verified map[string]bool  // present rows already read one by one
	landed   int              // unknown outcomes found present, all rounds
	vanished int              // unknown outcomes found absent, all rounds
}

func newCrashSet(kind string) *crashSet {
	return &crashSet{kind: kind, want: map[string]bool{}, maybe: map[string]bool{}, ids: map[string]int64{}, verified: map[string]bool{}}
}

// unverified lists the present rows not yet read one by one.
func (cs *crashSet) unverified() []string {
	var out []string
	for _, v := range cs.present() {
		if !cs.verified[v] {
			out = append(out, v)
		}
	}
	return out
}

func (cs *crashSet) markVerified(values []string) {
	for _, v := range values {
		cs.verified[v] = true
	}
}

func (cs *crashSet) present() []string {
	var out []string
	for v, ok := range cs.want {
		if ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

type listedRow struct {
	n  int
	id int64
}

// check compares a listing (value -> rows) with what must, may and must not
// be there, and settles this round's unknown outcomes: listed ones must stay,
// the others must stay away. It returns the unknown ones that are absent.
func (cs *crashSet) check(t *testing.T, round int, listed map[string]listedRow) (absent []string) {
	t.Helper()
	for v, r := range listed {
		if r.n != 1 {
			t.Errorf("round %d: %s %q listed %d times", round, cs.kind, v, r.n)
		}
		if must, known := cs.want[v]; known {
			if !must {
				t.Errorf("round %d: %s %q appeared after an earlier restart showed it absent", round, cs.kind, v)
			}
			if id, ok := cs.ids[v]; ok && r.id != 0 && id != r.id {
				t.Errorf("round %d: %s %q has id %d, answered %d", round, cs.kind, v, r.id, id)
			}
			continue
		}
		if cs.maybe[v] {
			cs.want[v] = true
			cs.ids[v] = r.id
			cs.landed++
			continue
		}
		t.Errorf("round %d: %s %q listed but never sent", round, cs.kind, v)
	}
	for v, must := range cs.want {
		if must && listed[v].n == 0 {
			t.Errorf("round %d: acknowledged %s %q is missing after kill -9", round, cs.kind, v)
		}
	}
	for v := range cs.maybe {
		if listed[v].n == 0 {
			cs.want[v] = false
			cs.vanished++
			absent = append(absent, v)
		}
	}
	clear(cs.maybe)
	slices.Sort(absent)
	return absent
}

// crashLedger is everything the writers were told, across rounds.
type crashLedger struct {
	statuses, comments, keys, projects *crashSet
	keyLines                           map[string]string // title -> key line
	description                        string            // the value found after the last restart
	roundDescriptions                  []*crashAttempt   // this round's description writes that may have landed
}

func newCrashLedger() *crashLedger {
	return &crashLedger{statuses: newCrashSet("status"), comments: newCrashSet("comment"), keys: newCrashSet("key"),
		projects: newCrashSet("project"), keyLines: map[string]string{}}
}

func (l *crashLedger) set(op crashOp) *crashSet {
	switch op {
	case opStatus:
		return l.statuses
	case opComment:
		return l.comments
	case opKey:
		return l.keys
	case opProject:
		return l.projects
	}
	return nil
}

// record sorts a round's attempts into acknowledged, refused before
// reaching the server (must be absent) and unknown.
func (l *crashLedger) record(t *testing.T, atts []*crashAttempt, killAt time.Time) string {
	t.Helper()
	l.roundDescriptions = l.roundDescriptions[:0]
	var acked, unknown, refused int
	for _, a := range atts {
		if a.op == opKey {
			l.keyLines[a.value] = a.key
		}
		switch {
		case a.acked():
			acked++
		case a.refused():
			refused++
		case a.err != nil && a.end.Before(killAt):
			t.Errorf("%s %q failed before the kill: %v", a.op, a.value, a.err)
			unknown++
		default:
			unknown++
		}
		if a.op == opDescription {
			if !a.refused() {
				l.roundDescriptions = append(l.roundDescriptions, a)
			}
			continue
		}
		cs := l.set(a.op)
		switch {
		case a.acked():
			cs.want[a.value] = true
			cs.ids[a.value] = a.id
		case a.refused():
			cs.want[a.value] = false
		default:
			cs.maybe[a.value] = true
		}
	}
	if acked == 0 {
		t.Errorf("no write was acknowledged before the kill: the round proves nothing")
	}
	return fmt.Sprintf("%d writes acknowledged, %d unknown, %d refused", acked, unknown, refused)
}

// verify checks the restarted server against the ledger.
func (l *crashLedger) verify(t *testing.T, c *crashClient, tg crashTarget, round int) {
	t.Helper()

	// Statuses: one row per name, with the answered id.
	rows, total := c.pages(t, fmt.Sprintf("/projects/%d/repository/commits/%s/statuses", tg.project, tg.sha))
	listed := map[string]listedRow{}
	for _, raw := range rows {
		var v struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &v)
		r := listed[v.Name]
		listed[v.Name] = listedRow{n: r.n + 1, id: v.ID}
	}
	if total != len(rows) {
		t.Errorf("round %d: statuses X-Total %d, %d listed", round, total, len(rows))
	}
	l.statuses.check(t, round, listed)

	// Comments (their view has no id).
	rows, total = c.pages(t, fmt.Sprintf("/projects/%d/repository/commits/%s/comments", tg.project, tg.sha))
	listed = map[string]listedRow{}
	for _, raw := range rows {
		var v struct {
			Note string `json:"note"`
		}
		_ = json.Unmarshal(raw, &v)
		listed[v.Note] = listedRow{n: listed[v.Note].n + 1}
	}
	if total != len(rows) {
		t.Errorf("round %d: comments X-Total %d, %d listed", round, total, len(rows))
	}
	l.comments.check(t, round, listed)

	l.verifyKeys(t, c, round)
	l.verifyProjects(t, c, round)
	l.verifyDescription(t, c, tg, round)
}

func (l *crashLedger) verifyKeys(t *testing.T, c *crashClient, round int) {
	t.Helper()
	rows, total := c.pages(t, "/user/keys")
	listed := map[string]listedRow{}
	text := map[string]string{}
	for _, raw := range rows {
		var v struct {
			ID    int64  `json:"id"`
			Title string `json:"title"`
			Key   string `json:"key"`
		}
		_ = json.Unmarshal(raw, &v)
		listed[v.Title] = listedRow{n: listed[v.Title].n + 1, id: v.ID}
		text[v.Title] = v.Key
	}
	if total != len(rows) {
		t.Errorf("round %d: keys X-Total %d, %d listed", round, total, len(rows))
	}
	for title, key := range text {
		if want, ok := l.keyLines[title]; ok && key != want {
			t.Errorf("round %d: key %q is %q, sent %q", round, title, key, want)
		}
	}
	absent := l.keys.check(t, round, listed)
	// Each new key is readable by id with its owner (a missing one is
	// reported above).
	var fresh []string
	for _, title := range l.keys.unverified() {
		if listed[title].n > 0 {
			fresh = append(fresh, title)
		}
	}
	parallel(fresh, 8, func(title string) {
		var v struct {
			Key  string `json:"key"`
			User struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		id := listed[title].id
		if status, _, raw, err := c.do(http.MethodGet, fmt.Sprintf("/keys/%d", id), nil); err != nil || status != 200 || json.Unmarshal(raw, &v) != nil ||
			v.Key != l.keyLines[title] || v.User.Username != "root" {
			t.Errorf("round %d: GET /keys/%d (%q): %d %v %.200s", round, id, title, status, err, raw)
		}
	})
	l.keys.markVerified(fresh)
	// The fingerprint index agrees with the rows: a listed key cannot be
	// added again, an unknown one that did not land can.
	present := l.keys.present()
	for _, title := range present[:min(3, len(present))] {
		if status, _, raw, err := c.do(http.MethodPost, "/user/keys", map[string]string{"title": title + "-again", "key": l.keyLines[title]}); err != nil ||
			status != http.StatusBadRequest || !strings.Contains(string(raw), "taken") {
			t.Errorf("round %d: adding listed key %q again: %d %v %.200s", round, title, status, err, raw)
		}
	}
	for _, title := range absent {
		var v struct {
			ID int64 `json:"id"`
		}
		if status, _, raw, err := c.do(http.MethodPost, "/user/keys", map[string]string{"title": title, "key": l.keyLines[title]}); err != nil ||
			status != http.StatusCreated || json.Unmarshal(raw, &v) != nil {
			t.Errorf("round %d: re-adding key %q that did not land: %d %v %.200s", round, title, status, err, raw)
			continue
		}
		l.keys.want[title], l.keys.ids[title] = true, v.ID
	}
}

func (l *crashLedger) verifyProjects(t *testing.T, c *crashClient, round int) {
	t.Helper()
	rows, total := c.pages(t, "/projects?owned=true&simple=true&order_by=id")
	listed := map[string]listedRow{}
	paths := map[string]string{}
	for _, raw := range rows {
		var v struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Path string `json:"path_with_namespace"`
		}
		_ = json.Unmarshal(raw, &v)
		if v.Name == "crash" {
			continue
		}
		listed[v.Name] = listedRow{n: listed[v.Name].n + 1, id: v.ID}
		paths[v.Name] = v.Path
	}
	if total != len(rows) {
		t.Errorf("round %d: projects X-Total %d, %d listed", round, total, len(rows))
	}
	absent := l.projects.check(t, round, listed)
	var fresh []string
	for _, name := range l.projects.unverified() {
		if listed[name].n > 0 {
			fresh = append(fresh, name)
		}
	}
	// A listed project is whole: readable by id and by its full path (the
	// namespace and path index entries came with it).
	parallel(fresh, 8, func(name string) {
		id := listed[name].id
		for _, ref := range []string{strconv.FormatInt(id, 10), url.PathEscape(paths[name])} {
			var v struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			}
			if status, _, raw, err := c.do(http.MethodGet, "/projects/"+ref, nil); err != nil || status != 200 ||
				json.Unmarshal(raw, &v) != nil || v.ID != id || v.Name != name {
				t.Errorf("round %d: GET /projects/%s (%q): %d %v %.200s", round, ref, name, status, err, raw)
			}
		}
	})
	// An unknown create that did not land left no path or name behind.
	for _, name := range absent {
		var v struct {
			ID int64 `json:"id"`
		}
		if status, _, raw, err := c.do(http.MethodPost, "/projects", map[string]string{"name": name}); err != nil ||
			status != http.StatusCreated || json.Unmarshal(raw, &v) != nil {
			t.Errorf("round %d: re-creating project %q that did not land: %d %v %.200s", round, name, status, err, raw)
			continue
		}
		l.projects.want[name], l.projects.ids[name] = true, v.ID
		fresh = append(fresh, name)
	}
	// The outbox hands the created events pending at the kill to the
	// activity module after the restart.
	l.checkFeeds(t, c, fresh, false)
	l.projects.markVerified(fresh)
}

// checkFeeds waits (20s at most) until each project's feed has its "created"
// entry, and checks there is exactly one.
func (l *crashLedger) checkFeeds(t *testing.T, c *crashClient, names []string, final bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	parallel(names, 8, func(name string) {
		id := l.projects.ids[name]
		for {
			status, _, raw, err := c.do(http.MethodGet, fmt.Sprintf("/projects/%d/events?per_page=100", id), nil)
			var evs []struct {
				Action string `json:"action_name"`
			}
			if err != nil || status != 200 || json.Unmarshal(raw, &evs) != nil {
				t.Errorf("GET /projects/%d/events: %d %v %.200s", id, status, err, raw)
				return
			}
			n := 0
			for _, e := range evs {
				if e.Action == "created" {
					n++
				}
			}
			switch {
			case n == 1:
				return
			case n > 1:
				t.Errorf("project %q (%d) has %d created entries (final check %v)", name, id, n, final)
				return
			case time.Now().After(deadline):
				t.Errorf("project %q (%d): no created entry in its feed after 20s", name, id)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// verifyDescription: the description is the value of some write of the
// round that was sent (or the previous value if none was acknowledged), and
// no acknowledged write started after that write was answered: that one
// would have to come later in any serial order.
func (l *crashLedger) verifyDescription(t *testing.T, c *crashClient, tg crashTarget, round int) {
	t.Helper()
	var v struct {
		Description *string `json:"description"`
	}
	c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d", tg.project), nil, 200, &v)
	got := ""
	if v.Description != nil {
		got = *v.Description
	}
	defer func() { l.description = got }()
	var writer *crashAttempt
	for _, a := range l.roundDescriptions {
		if a.value == got {
			writer = a
		}
	}
	if writer == nil {
		if got != l.description {
			t.Errorf("round %d: description %q was never sent", round, got)
			return
		}
		for _, a := range l.roundDescriptions {
			if a.acked() {
				t.Errorf("round %d: description is still %q from before the round, but %q was acknowledged", round, got, a.value)
				return
			}
		}
		return
	}
	if !writer.acked() {
		return // in flight at the kill: it may be ordered after any other
	}
	for _, a := range l.roundDescriptions {
		if a.acked() && a.start.After(writer.end) {
			t.Errorf("round %d: description is %q, but %q was sent %v after that write was answered, and acknowledged: a lost update",
				round, got, a.value, a.start.Sub(writer.end))
			return
		}
	}
}

// parallel runs fn over items with n goroutines.
func parallel[T any](items []T, n int, fn func(T)) {
	ch := make(chan T)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for it := range ch {
				fn(it)
			}
		})
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}

// crashClient talks to one server process with keep-alive connections.
type crashClient struct {
	tr    *http.Transport
	http  *http.Client
	base  string
	token string
}

func newCrashClient(s *server, token string) *crashClient {
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128, DisableCompression: true}
	// The timeout only turns a hung server into a failure instead of a
	// stuck test; a kill ends connections at once.
	return &crashClient{tr: tr, http: &http.Client{Transport: tr, Timeout: 20 * time.Second}, base: s.url("/api/v4"), token: token}
}

func (c *crashClient) close() { c.tr.CloseIdleConnections() }

func (c *crashClient) do(method, path string, body any) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if c.token != "" {
		req.Header.Set("PRIVATE-TOKEN", c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, err
}

func (c *crashClient) mustJSON(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	status, _, raw, err := c.do(method, path, body)
	if err != nil || status != want {
		t.Fatalf("%s %s: %d %v %.300s", method, path, status, err, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

// pages GETs every page of a list and returns its rows and X-Total.
func (c *crashClient) pages(t *testing.T, path string) ([]json.RawMessage, int) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var all []json.RawMessage
	total := -1
	for page := 1; ; page++ {
		status, h, raw, err := c.do(http.MethodGet, fmt.Sprintf("%s%sper_page=100&page=%d", path, sep, page), nil)
		var rows []json.RawMessage
		if err != nil || status != 200 || json.Unmarshal(raw, &rows) != nil {
			t.Fatalf("GET %s page %d: %d %v %.300s", path, page, status, err, raw)
		}
		all = append(all, rows...)
		if page == 1 {
			total, _ = strconv.Atoi(h.Get("X-Total"))
		}
		if h.Get("X-Next-Page") == "" {
			return all, total
		}
	}
}
