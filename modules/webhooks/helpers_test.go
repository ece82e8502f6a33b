package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/modules/webhooks"
)

// delivery is one request the receiver got.
type delivery struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
	User   string
	Pass   string
	HasBA  bool
	Status int // what the receiver answered
	At     time.Time
}

// receiver is a real HTTP server on 127.0.0.1 that records what it gets.
// answer, when set, chooses the status of each request (n counts from 1).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	answer func(n int, d delivery) int
	// hang, when it says so for request n, holds the answer until the
	// client gives up.
	hang func(n int) bool
}

func newReceiver(t testing.TB) *receiver { return newReceiverOn(t, nil) }

// newReceiverOn serves on l (a new port on 127.0.0.1 when nil).
func newReceiverOn(t testing.TB, l net.Listener) *receiver { return startReceiver(t, l, false) }

// newTLSReceiver serves HTTPS with a certificate no one trusts.
func newTLSReceiver(t testing.TB) *receiver { return startReceiver(t, nil, true) }

func startReceiver(t testing.TB, l net.Listener, tlsOn bool) *receiver {
	r := &receiver{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		raw, _ := io.ReadAll(req.Body)
		d := delivery{Path: req.URL.Path, Header: req.Header.Clone(), Raw: raw, At: time.Now()}
		d.User, d.Pass, d.HasBA = req.BasicAuth()
		_ = json.Unmarshal(raw, &d.Body)
		r.mu.Lock()
		n := len(r.got) + 1
		answer, hang := r.answer, r.hang
		r.mu.Unlock()
		if hang != nil && hang(n) {
			r.mu.Lock()
			r.got = append(r.got, d)
			r.mu.Unlock()
			<-req.Context().Done()
			return
		}
		status := http.StatusOK
		if answer != nil {
			status = answer(n, d)
		}
		d.Status = status
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.Header().Set("X-Receiver", "yes")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("received " + strconv.Itoa(n)))
	}))
	if l != nil {
		r.Server.Listener.Close()
		r.Server.Listener = l
	}
	if tlsOn {
		r.Server.StartTLS()
	} else {
		r.Server.Start()
	}
	t.Cleanup(r.Close)
	return r
}

// all is a copy of what was received so far.
func (r *receiver) all() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// waitFor polls until the receiver holds at least n requests to path
// ("" for any path) and returns them.
func (r *receiver) waitFor(t testing.TB, path string, n int) []delivery {
	t.Helper()
	var out []delivery
	// Generous: under a loaded -race run a restart's backlog once took
	// over 20 s to come through; the wait ends as soon as n arrive.
	fennectest.Poll(t, 60*time.Second, func() (bool, string) {
		out = nil
		for _, d := range r.all() {
			if path == "" || d.Path == path {
				out = append(out, d)
			}
		}
		return len(out) >= n, fmt.Sprintf("receiver: %d requests to %q, want %d", len(out), path, n)
	})
	return out
}

// env is a running stock application set up for webhooks tests.
type env struct {
	*fennectest.Server
	bus *events.Bus
}

// fast makes retries quick enough for tests.
func fast(c *webhooks.Config) {
	c.RetryBackoff = 20 * time.Millisecond
	c.MaxBackoff = 100 * time.Millisecond
	c.MaxAttempts = 4
}

// start runs the stock app; allowLocal lets hooks reach the test's
// receiver on 127.0.0.1.
func start(t testing.TB, allowLocal bool, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{}
	all := []fennectest.Option{
		fennectest.WithExtract(&e.bus),
		fennectest.WithConfig(func(c *config.Config) { c.AllowLocalRequests = allowLocal }),
		fennectest.WithModuleConfig(webhooks.SectionName, fast),
	}
	e.Server = stocktest.Start(t, append(all, opts...)...)
	return e
}

// addHook adds a project hook to url with every trigger on.
func addHook(t testing.TB, c *gitlab.Client, project int64, url string, token string) *gitlab.ProjectHook {
	t.Helper()
	opt := &gitlab.AddProjectHookOptions{URL: gitlab.Ptr(url), PushEvents: gitlab.Ptr(true), TagPushEvents: gitlab.Ptr(true),
		IssuesEvents: gitlab.Ptr(true), NoteEvents: gitlab.Ptr(true), MergeRequestsEvents: gitlab.Ptr(true),
		JobEvents: gitlab.Ptr(true), PipelineEvents: gitlab.Ptr(true)}
	if token != "" {
		opt.Token = gitlab.Ptr(token)
	}
	h, _, err := c.Projects.AddProjectHook(project, opt)
	if err != nil {
		t.Fatalf("add hook: %v", err)
	}
	return h
}

// commitFile writes file on branch through the commits API (a push).
func commitFile(t testing.TB, c *gitlab.Client, project int64, branch, file, content string) *gitlab.Commit {
	t.Helper()
	action := gitlab.FileCreate
	if _, _, err := c.RepositoryFiles.GetFile(project, file, &gitlab.GetFileOptions{Ref: gitlab.Ptr(branch)}); err == nil {
		action = gitlab.FileUpdate
	}
	cm, _, err := c.Commits.CreateCommit(project, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch),
		CommitMessage: gitlab.Ptr("change " + file), Actions: []*gitlab.CommitActionOptions{{
			Action: gitlab.Ptr(action), FilePath: gitlab.Ptr(file), Content: gitlab.Ptr(content)}}})
	if err != nil {
		t.Fatalf("commit %s: %v", file, err)
	}
	return cm
}

// call sends a raw API request as token and decodes the JSON answer.
func (e *env) call(t testing.TB, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	resp := e.Do(t, method, "/api/v4"+path, rd, "PRIVATE-TOKEN", token, "Content-Type", "application/json")
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(raw)
}

func obj(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func list(t testing.TB, raw []byte) []map[string]any {
	t.Helper()
	var m []map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// wantFields checks m's fields one by one against want; a value of
// anyValue only checks that the key is present.
func wantFields(t testing.TB, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("%s: no field %q in %v", what, k, keys(m))
			continue
		}
		if w == anyValue {
			continue
		}
		if !equal(got, w) {
			t.Errorf("%s.%s = %#v, want %#v", what, k, got, w)
		}
	}
}

type anyMarker struct{}

var anyValue = anyMarker{}

// equal compares got (decoded JSON) with want, where anyValue matches
// anything at any depth.
func equal(got, want any) bool {
	switch w := want.(type) {
	case anyMarker:
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !equal(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equal(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	return bytes.Equal(gj, wj)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func stringsReader(s string) io.Reader { return bytes.NewReader([]byte(s)) }

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSpace(raw))
}

// wantExact is wantFields, and m has no other field.
func wantExact(t testing.TB, what string, m map[string]any, want map[string]any) {
	t.Helper()
	wantFields(t, what, m, want)
	for k := range m {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected field %q", what, k)
		}
	}
}
