package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/stock"
)

var scaleSizes = flag.String("scale", "1000,10000", "BenchmarkScale: the numbers of projects to seed, comma-separated (100000 takes minutes)")

var scaleEnv = flag.String("scale-env", "", "BenchmarkScale: KEY=VALUE pairs, space-separated, added to the server's environment (e.g. 'GOGC=400 FENNEC_MEMORY_LIMIT=0')")

const scaleRootPassword = "password-123"

// BenchmarkScale measures the costs of issue 33 that must not grow with the
// instance, at each size of -scale (projects; a tenth as many users, each
// owning projects in turn, one in ten public; as many issues as projects, in
// the first project). Each instance is seeded in process through the
// modules' own services (so every index and counter is the one the API
// keeps), many rows to a transaction and without fsync; then the real
// binary is started on it, as shipped (fsync on, memory_limit default), and
// the benchmark reports, per size (the metric's prefix: 1k, 10k, 100k):
//
//   - ready-ms: from the process start until GET /-/readiness answers 200,
//   - rss-mb, anon-mb, db-mapped-mb: the process's resident memory once
//     idle after the start (all of it, its anonymous part, the store's
//     mapped pages; the rest is the binary's own), and heap-live-mb, the
//     live heap after the last collection (GODEBUG=gctrace=1),
//   - the median time, in ms, of GET /projects page 1 and a page half-way
//     down (as root, who sees every project), `search` on projects, users
//     and the big project's issues, GET /projects/:id, and an
//     administrator's GET /namespaces page 1 and search,
//
// and, between consecutive sizes, the growth exponent of each
// (log(t2/t1)/log(n2/n1): 0 for a flat cost, 1 for a linear one).
// The sizes' seeding is not timed. Run with -benchtime 1x:
//
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x ./hostapp/
//	go test -run '^$' -bench BenchmarkScale -benchtime 1x ./hostapp/ -args -scale 1000,10000,100000
//
// -scale-env adds to the server's environment, to compare settings.
func BenchmarkScale(b *testing.B) {
	var sizes []int
	for _, f := range strings.Split(*scaleSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 20 {
			b.Fatalf("-scale %q: sizes are numbers of projects, at least 20", *scaleSizes)
		}
		sizes = append(sizes, n)
	}
	dirs := make([]string, len(sizes))
	for i, n := range sizes {
		dirs[i] = b.TempDir()
		started := time.Now()
		seedScale(b, dirs[i], n)
		b.Logf("seeded %d projects, %d users, %d issues in %v", n, n/10, n, time.Since(started).Round(time.Millisecond))
	}
	// Seeding writes without fsync: without this, the kernel would still be
	// writing a 100k instance's 1.2 GB back while its server starts, and
	// that, not the data, doubled the time to ready (250-310 ms, against
	// 99-122 ms once written, the same as a small directory's).
	syscall.Sync()
	results := make([]map[string]float64, len(sizes))
	b.ResetTimer()
	for b.Loop() {
		for i, n := range sizes {
			results[i] = measureScale(b, dirs[i], n)
		}
	}
	b.ReportMetric(0, "ns/op")
	for i, n := range sizes {
		for name, v := range results[i] {
			b.ReportMetric(v, sizeLabel(n)+"-"+name)
		}
		if i == 0 {
			continue
		}
		for name, v := range results[i] {
			if !strings.HasSuffix(name, "-ms") {
				continue
			}
			prev := results[i-1][name]
			if prev <= 0 || v <= 0 {
				continue
			}
			exp := math.Log(v/prev) / math.Log(float64(n)/float64(sizes[i-1]))
			b.ReportMetric(exp, "exp-"+strings.TrimSuffix(name, "-ms")+"-"+sizeLabel(sizes[i-1])+"-"+sizeLabel(n))
		}
	}
}

func sizeLabel(n int) string {
	if n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// seedScale fills dir with n projects (scale-0000001 ...), n/10 users
// (user000001 ...) and n issues in the first project ("issue 0000001"
// ...), through the services, 500 to a transaction, fsync off, and
// waits for every event to be delivered before the app stops.
func seedScale(b *testing.B, dir string, n int) {
	b.Helper()
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = dir
	cfg.NoSync = true
	cfg.SetModule("identity", "root_password", scaleRootPassword)
	cfg.SetModule("identity", "password_cost", 4)
	var (
		db       *store.DB
		bus      *events.Bus
		prov     auth.Provisioner
		lookup   auth.UserLookup
		projects project.Service
		issues   issue.Service
	)
	// Without the notifications module: mail about 100,000 seeded issues
	// would still be rendered and written by the measured server, which
	// would then be neither idle nor reading only what a start needs.
	var modules []fennec.Module
	for _, m := range stock.Modules() {
		if m.Name() != "notifications" {
			modules = append(modules, m)
		}
	}
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(modules...), fennec.WithLogger(zap.NewNop()),
		fennec.WithExtract(&db, &bus, &prov, &lookup, &projects, &issues))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := app.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := app.Stop(stop); err != nil {
			b.Fatal(err)
		}
	}()
	const batch = 500
	inBatches := func(ctx context.Context, count int, one func(ctx context.Context, k int) error) {
		for from := 0; from < count; from += batch {
			if err := db.UpdateAlone(ctx, func(tx *store.Tx) error {
				for k := from; k < min(from+batch, count); k++ {
					if err := one(tx.Context(), k); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
	users := make([]int64, n/10)
	inBatches(ctx, len(users), func(ctx context.Context, k int) error {
		u, err := prov.CreateUser(ctx, auth.NewUser{Username: fmt.Sprintf("user%06d", k+1), Email: fmt.Sprintf("user%06d@example.com", k+1),
			Name: fmt.Sprintf("User %d", k+1), Password: "seeded-password"})
		if err == nil {
			users[k] = u.ID
		}
		return err
	})
	system := auth.WithPrincipal(ctx, auth.System())
	var first int64
	inBatches(system, n, func(ctx context.Context, k int) error {
		visibility := "private"
		if k%10 == 0 {
			visibility = "public"
		}
		name := fmt.Sprintf("scale-%07d", k+1)
		p, err := projects.CreateProjectFor(ctx, users[k%len(users)], project.Fields{Name: &name, Visibility: &visibility,
			Description: ptr("a project seeded for the scaling benchmark")})
		if k == 0 {
			first = p.ID
		}
		return err
	})
	owner := fennectest.AsUser(b, lookup, users[0])
	ref := strconv.FormatInt(first, 10)
	inBatches(owner, n, func(ctx context.Context, k int) error {
		title := fmt.Sprintf("issue %07d", k+1)
		_, err := issues.Create(ctx, ref, issue.Fields{Title: &title, Description: ptr("seeded for the scaling benchmark")})
		return err
	})
	drain, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := bus.Drain(drain); err != nil {
		b.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// measureScale starts the real binary on a seeded directory and measures
// it (see BenchmarkScale); the process is stopped before it returns.
func measureScale(b *testing.B, dir string, n int) map[string]float64 {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(b.TempDir(), "fennec.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(binary, "serve", "--listen", addr, "--data", dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The collector's trace gives the live heap after each collection.
	cmd.Env = append(append(os.Environ(), "GODEBUG=gctrace=1"), strings.Fields(*scaleEnv)...)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	base := "http://" + addr
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}, Timeout: time.Minute}
	var ready time.Duration
	for deadline := started.Add(time.Minute); ; time.Sleep(time.Millisecond) {
		resp, err := client.Get(base + "/-/readiness")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ready = time.Since(started)
				break
			}
		}
		if time.Now().After(deadline) {
			raw, _ := os.ReadFile(logFile.Name())
			b.Fatalf("not ready after a minute:\n%s", raw)
		}
	}
	m := map[string]float64{"ready-ms": float64(ready.Microseconds()) / 1000}
	settle(b, cmd.Process.Pid)
	rss, anon, db := memory(b, cmd.Process.Pid)
	m["rss-mb"], m["anon-mb"], m["db-mapped-mb"] = rss/(1<<20), anon/(1<<20), db/(1<<20)
	if live := liveHeap(logFile.Name()); live > 0 {
		m["heap-live-mb"] = live
	}

	var session struct {
		Token string `json:"private_token"`
	}
	benchJSON(b, http.MethodPost, base+"/api/v4/session", "", `{"login":"root","password":"`+scaleRootPassword+`"}`, http.StatusCreated, &session)
	var big []struct {
		ID int64 `json:"id"`
	}
	benchJSON(b, http.MethodGet, base+"/api/v4/projects?search=scale-0000001&per_page=1", session.Token, "", http.StatusOK, &big)
	if len(big) != 1 {
		b.Fatalf("the first project: %v", big)
	}
	median := func(path string, want int) float64 {
		var ms []float64
		for range 21 {
			req, _ := http.NewRequest(http.MethodGet, base+"/api/v4"+path, nil)
			req.Header.Set("PRIVATE-TOKEN", session.Token)
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var got []json.RawMessage
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("%s: %d %.300s", path, resp.StatusCode, raw)
			}
			if want >= 0 {
				if err := json.Unmarshal(raw, &got); err != nil || len(got) != want {
					b.Fatalf("%s: %d results, want %d: %.300s", path, len(got), want, raw)
				}
			}
		}
		return fennectest.Median(ms)
	}
	m["list-page1-ms"] = median("/projects?per_page=20", 20)
	m["list-deep-ms"] = median(fmt.Sprintf("/projects?per_page=20&page=%d", n/40), 20)
	m["search-projects-ms"] = median(fmt.Sprintf("/projects?search=scale-%07d", n/2+7), 1)
	m["search-users-ms"] = median(fmt.Sprintf("/users?search=user%06d", n/20+3), 1)
	m["search-issues-ms"] = median(fmt.Sprintf("/projects/%d/issues?search=issue+%07d", big[0].ID, n/2+5), 1)
	m["get-project-ms"] = median(fmt.Sprintf("/projects/%d", big[0].ID), -1)
	// The users' namespaces (each owns projects) and root's.
	m["namespaces-page1-ms"] = median("/namespaces?per_page=20", min(20, n/10+1))
	m["search-namespaces-ms"] = median(fmt.Sprintf("/namespaces?search=user%06d", n/20+3), 1)
	return m
}

// memory is a process's resident memory: all of it, its anonymous part
// (the Go heap and stacks, the runtime's own) and the part mapped from the
// store's file, in bytes. The rest is the binary's own pages.
func memory(b *testing.B, pid int) (rss, anon, db float64) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	inDB := false
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			inDB = len(f) >= 6 && strings.HasSuffix(f[len(f)-1], "fennec.db")
		case len(f) == 3 && f[0] == "Rss:":
			kb, _ := strconv.ParseFloat(f[1], 64)
			rss += kb * 1024
			if inDB {
				db += kb * 1024
			}
		case len(f) == 3 && f[0] == "Anonymous:":
			kb, _ := strconv.ParseFloat(f[1], 64)
			anon += kb * 1024
		}
	}
	return rss, anon, db
}

// liveHeap is the heap left after the last collection in a gctrace log
// ("gc 12 @0.5s 1%: ... 9->9->4 MB, 10 MB goal, ..."), in MB; 0 if none.
func liveHeap(path string) float64 {
	raw, _ := os.ReadFile(path)
	live := 0.0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "gc ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if p := strings.Split(f, "->"); len(p) == 3 {
				if v, err := strconv.ParseFloat(p[2], 64); err == nil {
					live = v
				}
			}
		}
	}
	return live
}
