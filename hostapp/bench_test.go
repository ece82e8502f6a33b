package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// BenchmarkWritesVsPlain measures the real binary (fsync on, as shipped)
// with 32 keep-alive clients on loopback, per scenario against a plain
// net/http handler that reads the body and answers the same status with
// the same bytes Fennec answered, in the same run: the write endpoints of
// issue 11 (commit statuses, commit comments, project edits, SSH keys) and
// two reads for comparison. Rounds alternate plain and Fennec so machine
// drift hits both alike, each starting once the server is idle; figures
// are medians over the rounds. The access
// log goes to a file, at info, as in production. Run with -benchtime=1x
// (make bench's 3s also runs it once).
func BenchmarkWritesVsPlain(b *testing.B) {
	const (
		workers = 32
		rounds  = 3
		round   = time.Second
	)
	addr, pid := startBenchServer(b, b.TempDir())
	fennec := "http://" + addr + "/api/v4"
	var session struct {
		Token string `json:"private_token"`
	}
	benchJSON(b, http.MethodPost, fennec+"/session", "", `{"login":"root","password":"password-123"}`, http.StatusCreated, &session)
	token := session.Token
	var project struct {
		ID int64 `json:"id"`
	}
	benchJSON(b, http.MethodPost, fennec+"/projects", token, `{"name":"bench"}`, http.StatusCreated, &project)
	var commit struct {
		ID string `json:"id"`
	}
	benchJSON(b, http.MethodPost, fmt.Sprintf("%s/projects/%d/repository/commits", fennec, project.ID), token,
		`{"branch":"master","commit_message":"first","actions":[{"action":"create","file_path":"README.md","content":"bench\n"}]}`,
		http.StatusCreated, &commit)

	// Distinct keys, made before any timing (a key can be added once).
	keys := newKeyPool(b, 40000)
	var seq atomic.Int64 // unique values across all scenarios and targets
	unique := func() string { return fmt.Sprintf("b%d", seq.Add(1)) }
	projectPath := fmt.Sprintf("/projects/%d", project.ID)
	scenarios := []benchScenario{
		{name: "get-user", method: http.MethodGet, want: http.StatusOK, path: func() string { return "/user" }},
		{name: "get-project", method: http.MethodGet, want: http.StatusOK, path: func() string { return projectPath }},
		{name: "post-status", method: http.MethodPost, want: http.StatusCreated,
			path: func() string { return fmt.Sprintf("/projects/%d/statuses/%s", project.ID, commit.ID) },
			body: func(bool) string { return `{"state":"success","name":"` + unique() + `"}` }},
		{name: "post-comment", method: http.MethodPost, want: http.StatusCreated,
			path: func() string {
				return fmt.Sprintf("/projects/%d/repository/commits/%s/comments", project.ID, commit.ID)
			},
			body: func(bool) string { return `{"note":"comment ` + unique() + `"}` }},
		{name: "post-key", method: http.MethodPost, want: http.StatusCreated,
			path: func() string { return "/user/keys" },
			body: func(plain bool) string {
				if plain { // the plain handler does not care whether a key is new
					return `{"title":"plain","key":"` + keys.lines[0] + `"}`
				}
				return `{"title":"` + unique() + `","key":"` + keys.next(b) + `"}`
			}},
		{name: "put-project", method: http.MethodPut, want: http.StatusOK,
			path: func() string { return projectPath },
			body: func(bool) string { return `{"name":"bench","description":"` + unique() + `"}` }},
	}

	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) { sc.run(b, fennec, token, workers, rounds, round, func() { settle(b, pid) }) })
	}
}

// BenchmarkProjectCreation measures project creation on the real binary
// (fsync on, as shipped): 16 keep-alive clients create 3,000 projects
// through POST /projects as the administrator, and it reports projects/s.
// A project's repository is made when it is first used, so creating one is
// a row in the store; after the timing, a sample of the new projects is
// used (their branches listed, which makes each repository) to check that
// every project has a usable repository. Run with -benchtime 1x.
func BenchmarkProjectCreation(b *testing.B) {
	const (
		workers  = 16
		projects = 3000
	)
	addr, _ := startBenchServer(b, b.TempDir())
	base := "http://" + addr + "/api/v4"
	var session struct {
		Token string `json:"private_token"`
	}
	benchJSON(b, http.MethodPost, base+"/session", "", `{"login":"root","password":"password-123"}`, http.StatusCreated, &session)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var made []int64
	var mu sync.Mutex
	for b.Loop() {
		var next atomic.Int64
		var failed atomic.Value
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					n := next.Add(1)
					if n > projects {
						return
					}
					req, _ := http.NewRequest(http.MethodPost, base+"/projects",
						strings.NewReader(fmt.Sprintf(`{"name":"c%d-%d"}`, n, time.Now().UnixNano())))
					req.Header.Set("PRIVATE-TOKEN", session.Token)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						failed.Store(err.Error())
						return
					}
					var p struct {
						ID int64 `json:"id"`
					}
					err = json.NewDecoder(resp.Body).Decode(&p)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated || err != nil {
						failed.Store(fmt.Sprintf("%s %v", resp.Status, err))
						return
					}
					if n%100 == 0 {
						mu.Lock()
						made = append(made, p.ID)
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		if f := failed.Load(); f != nil {
			b.Fatalf("creating projects: %v", f)
		}
		b.ReportMetric(projects/took.Seconds(), "projects/s")
	}
	b.StopTimer()
	for _, id := range made {
		var branches []any
		benchJSON(b, http.MethodGet, fmt.Sprintf("%s/projects/%d/repository/branches", base, id), session.Token, "", http.StatusOK, &branches)
		if len(branches) != 0 {
			b.Fatalf("project %d: branches %v in a new repository", id, branches)
		}
	}
}

type benchScenario struct {
	name   string
	method string
	want   int
	path   func() string
	body   func(plain bool) string // nil for reads
}

// run measures one scenario: a sample request gives the bytes the plain
// handler answers, then rounds alternate plain and Fennec.
func (sc benchScenario) run(b *testing.B, fennec, token string, workers, rounds int, round time.Duration, settle func()) {
	build := func(base string, plain bool) *http.Request {
		var rd io.Reader
		if sc.body != nil {
			rd = strings.NewReader(sc.body(plain))
		}
		req, err := http.NewRequest(sc.method, base+sc.path(), rd)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("PRIVATE-TOKEN", token)
		if sc.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req
	}
	resp, err := http.DefaultClient.Do(build(fennec, false))
	if err != nil {
		b.Fatal(err)
	}
	sample, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != sc.want {
		b.Fatalf("%s: %d %s", sc.name, resp.StatusCode, sample)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(sc.want)
		_, _ = w.Write(sample)
	}))
	defer plain.Close()
	plainBase := plain.URL + "/api/v4"
	// Reads have no body: one request per worker, sent again and again.
	var plainReqs, fennecReqs []*http.Request
	if sc.body == nil {
		for range workers {
			plainReqs = append(plainReqs, build(plainBase, true))
			fennecReqs = append(fennecReqs, build(fennec, false))
		}
	}
	next := func(base string, plain bool, reuse []*http.Request) func(w, i int) *http.Request {
		if reuse != nil {
			return func(w, _ int) *http.Request { return reuse[w] }
		}
		return func(int, int) *http.Request { return build(base, plain) }
	}

	var plainRPS, fennecRPS, ratio, plainP99, fennecP99 []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			settle()
			p, pp99 := fennectest.LoadRequests(b, workers, round, sc.want, next(plainBase, true, plainReqs))
			settle()
			f, fp99 := fennectest.LoadRequests(b, workers, round, sc.want, next(fennec, false, fennecReqs))
			plainRPS, fennecRPS, ratio = append(plainRPS, p), append(fennecRPS, f), append(ratio, f/p)
			plainP99 = append(plainP99, float64(pp99.Microseconds())/1000)
			fennecP99 = append(fennecP99, float64(fp99.Microseconds())/1000)
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(fennecRPS), "req/s")
	b.ReportMetric(fennectest.Median(fennecP99), "p99-ms")
	b.ReportMetric(100*fennectest.Median(ratio), "vs-plain-%")
	b.ReportMetric(fennectest.Median(plainRPS), "plain-req/s")
	b.ReportMetric(fennectest.Median(plainP99), "plain-p99-ms")
}

// keyPool hands out distinct SSH public keys.
type keyPool struct {
	lines []string
	n     atomic.Int64
}

func newKeyPool(b *testing.B, n int) *keyPool {
	p := &keyPool{lines: make([]string, n)}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := g; i < n; i += 2 {
				p.lines[i] = newKeyLine(b, "")
			}
		})
	}
	wg.Wait()
	return p
}

// next is a key never handed out before (lines[0] is left to the plain
// handler's requests); past the pool's end it makes one
// (slower: the pool is sized for well over 10,000 keys a second).
func (p *keyPool) next(b *testing.B) string {
	if i := p.n.Add(1); int(i) < len(p.lines) {
		return p.lines[i]
	}
	return newKeyLine(b, "")
}

// settle waits (10s at most) until the server process is idle: writes leave
// work behind them (the outbox delivers a project edit's event to the
// activity feed after the answer), which must not be billed to the next
// round, least of all to a plain one. Linux only; elsewhere it returns.
func settle(b *testing.B, pid int) {
	cpu := func() (int64, bool) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, false
		}
		// Fields after the command name, which is in parentheses: utime
		// and stime are the 12th and 13th, in clock ticks.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(f) < 13 {
			return 0, false
		}
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		s, err2 := strconv.ParseInt(f[12], 10, 64)
		return u + s, err1 == nil && err2 == nil
	}
	last, ok := cpu()
	for deadline := time.Now().Add(10 * time.Second); ok && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		now, _ := cpu()
		if now-last <= 1 { // at most one tick (10ms at the usual 100 Hz) in 200ms
			return
		}
		last = now
	}
	if ok {
		b.Logf("the server was still busy after 10s")
	}
}

// startBenchServer starts the binary with its log in a file, so that the
// benchmark process does not spend CPU reading it, and returns its address
// and process id.
func startBenchServer(b *testing.B, data string) (string, int) {
	b.Helper()
	logPath := filepath.Join(b.TempDir(), "fennec.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--data", data)
	cmd.Env = append(os.Environ(), "FENNEC_ROOT_PASSWORD=password-123")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(logPath)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "listening" && m.Addr != "" {
				f.Close()
				return m.Addr, cmd.Process.Pid
			}
		}
		f.Close()
	}
	raw, _ := os.ReadFile(logPath)
	b.Fatalf("server did not start:\n%s", raw)
	return "", 0
}

func benchJSON(b testing.TB, method, url, token, body string, want int, out any) {
	b.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want || json.Unmarshal(raw, out) != nil {
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
}
