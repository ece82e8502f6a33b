package projects_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkProjectReads measures project reads at the scale of the projects
// issue: 10,000 private projects owned by 1,000 users (10 each), seeded
// through POST /projects with each owner's token. Over loopback, with 8
// keep-alive clients, it reports requests per second of
//
//   - GET /projects?per_page=20 as an administrator (sees all 10,000),
//   - GET /projects?per_page=20 as a member (owns 10, sees nothing else),
//   - GET /projects/:id of the member's own project,
//
// and how long seeding took. To show that the member's list costs what the
// member can see, not what the store holds, the same run keeps a second
// store of 1,000 projects (100 owners) and measures the member's list in
// both, alternating short rounds so that a noisy machine slows both alike;
// it also times the handler alone (no network) in both. Each endpoint gets
// about 2 s of load in all. Run with -benchtime 1x; the whole run takes
// well under a minute on two cores.
func BenchmarkProjectReads(b *testing.B) {
	const (
		workers = 8
		rounds  = 4
		round   = 500 * time.Millisecond
	)
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	big := benchSeed(b, logger, 1000, 10, workers)
	small := benchSeed(b, logger, 100, 10, workers)
	listPath := "/api/v4/projects?per_page=20"
	getPath := "/api/v4/projects/" + strconv.FormatInt(big.memberProject, 10)

	var admin, member10k, member1k, single, growth []float64
	var adminP99, memberP99, singleP99 time.Duration
	var cost10k, cost1k []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			m1, _ := fennectest.Load(b, small.s.URL+listPath, small.member, workers, round)
			m10, p99 := fennectest.Load(b, big.s.URL+listPath, big.member, workers, round)
			a, ap99 := fennectest.Load(b, big.s.URL+listPath, big.s.RootToken, workers, round)
			g, gp99 := fennectest.Load(b, big.s.URL+getPath, big.member, workers, round)
			member1k, member10k, admin, single = append(member1k, m1), append(member10k, m10), append(admin, a), append(single, g)
			growth = append(growth, m10/m1)
			memberP99, adminP99, singleP99 = max(memberP99, p99), max(adminP99, ap99), max(singleP99, gp99)
			cost1k = append(cost1k, benchHandler(b, small, listPath, 300))
			cost10k = append(cost10k, benchHandler(b, big, listPath, 300))
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(big.usersTook.Seconds(), "seed-users-s")
	b.ReportMetric(big.projectsTook.Seconds(), "seed-projects-s")
	b.ReportMetric(10000/big.projectsTook.Seconds(), "seed-projects/s")
	b.ReportMetric(fennectest.Median(admin), "admin-list-req/s")
	b.ReportMetric(fennectest.Median(single), "get-project-req/s")
	b.ReportMetric(float64(adminP99.Microseconds())/1000, "admin-list-p99-ms")
	b.ReportMetric(float64(memberP99.Microseconds())/1000, "member-list-p99-ms")
	b.ReportMetric(float64(singleP99.Microseconds())/1000, "get-project-p99-ms")
	b.ReportMetric(fennectest.Median(member1k), "member-list-at-1k-req/s")
	b.ReportMetric(fennectest.Median(member10k), "member-list-at-10k-req/s")
	b.ReportMetric(100*fennectest.Median(growth), "member-10k/1k-%")
	b.ReportMetric(fennectest.Median(cost1k), "member-list-at-1k-µs")
	b.ReportMetric(fennectest.Median(cost10k), "member-list-at-10k-µs")
}

// benchStore is a seeded application.
type benchStore struct {
	s             *fennectest.Server
	member        string // token of the first owner
	memberProject int64
	usersTook     time.Duration
	projectsTook  time.Duration
}

// benchSeed starts an application and seeds it with `users` owners of
// perUser private projects each: users (one api token each) through the
// provisioner, projects through POST /projects with the owner's token, then
// waits for the events of seeding to be delivered so reads are measured
// alone.
func benchSeed(b *testing.B, logger *zap.Logger, users, perUser, workers int) *benchStore {
	b.Helper()
	var prov auth.Provisioner
	var bus *events.Bus
	st := &benchStore{s: stocktest.Start(b, fennectest.WithLogger(logger), fennectest.WithExtract(&prov, &bus),
		fennectest.WithConfig(func(c *config.Config) { c.NoSync = true }))} // fast seeding; reads are unaffected
	started := time.Now()
	tokens := benchUsers(b, prov, users)
	st.usersTook = time.Since(started)
	started = time.Now()
	ids := benchProjects(b, st.s.URL, tokens, perUser, workers)
	st.projectsTook = time.Since(started)
	st.member, st.memberProject = tokens[0], ids[0][0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	if got := benchTotal(b, st.s.URL, st.s.RootToken); got != users*perUser {
		b.Fatalf("%d projects seeded, want %d", got, users*perUser)
	}
	if got := benchTotal(b, st.s.URL, st.member); got != perUser {
		b.Fatalf("the member sees %d projects, want %d", got, perUser)
	}
	return st
}

// benchUsers creates users with one api token each through the
// provisioner, two at a time, and returns the tokens in order.
func benchUsers(b *testing.B, prov auth.Provisioner, n int) []string {
	b.Helper()
	ctx := context.Background()
	tokens := make([]string, n)
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 2 {
				u, err := prov.CreateUser(ctx, auth.NewUser{Username: fmt.Sprintf("owner%04d", i),
					Email: fmt.Sprintf("owner%04d@example.com", i), Name: fmt.Sprintf("Owner %d", i), Password: "bench-password"})
				if err == nil {
					tokens[i], err = prov.CreateToken(ctx, u.ID, "bench", []string{auth.ScopeAPI})
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return tokens
}

// benchProjects has each token's user create perUser private projects
// through POST /projects, `workers` requests at a time, and returns the ids
// per user.
func benchProjects(b *testing.B, base string, tokens []string, perUser, workers int) [][]int64 {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers * 2}}
	defer client.CloseIdleConnections()
	ids := make([][]int64, len(tokens))
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tokens) || failed.Load() != nil {
					return
				}
				for j := 0; j < perUser; j++ {
					body := []byte(`{"name":"project ` + strconv.Itoa(j) + `"}`)
					req, _ := http.NewRequest(http.MethodPost, base+"/api/v4/projects", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("PRIVATE-TOKEN", tokens[i])
					resp, err := client.Do(req)
					if err != nil {
						failed.Store(err)
						return
					}
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						failed.Store(fmt.Errorf("create: %d %s", resp.StatusCode, raw))
						return
					}
					ids[i] = append(ids[i], benchID(raw))
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return ids
}

// benchID reads the leading "id" of a project body without decoding it all.
func benchID(raw []byte) int64 {
	const key = `"id":`
	i := bytes.Index(raw, []byte(key))
	if i < 0 {
		return 0
	}
	rest := raw[i+len(key):]
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(rest[:end]), 10, 64)
	return n
}

// benchTotal is X-Total of GET /projects as token.
func benchTotal(b *testing.B, base, token string) int {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v4/projects?per_page=1&simple=true", nil)
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	n, err := strconv.Atoi(resp.Header.Get("X-Total"))
	if resp.StatusCode != http.StatusOK || err != nil {
		b.Fatalf("GET /projects: %d, X-Total %q", resp.StatusCode, resp.Header.Get("X-Total"))
	}
	return n
}

// benchHandler is the server's own cost of one GET as the member, in
// microseconds: the handler called n times in a row, no network.
func benchHandler(b *testing.B, st *benchStore, path string, n int) float64 {
	b.Helper()
	h := st.s.App.Handler()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("PRIVATE-TOKEN", st.member)
	start := time.Now()
	for i := 0; i < n; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, w.Code)
		}
	}
	return float64(time.Since(start).Microseconds()) / float64(n)
}
