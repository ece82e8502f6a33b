package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMultiNodeFigures measures, in one run on this machine, API writes
// (POST /projects/:id/issues) and reads (GET /projects/:id) with 32
// keep-alive clients for three setups: one node on bbolt, one node on
// PostgreSQL, and three nodes on PostgreSQL with the clients spread over
// them. Fsync is on throughout (bbolt as shipped, PostgreSQL durable). It
// prints a table; it runs only with FENNEC_MULTINODE_FIGURES=1, since it
// takes a minute and its figures say nothing without a quiet machine:
//
//	FENNEC_MULTINODE_FIGURES=1 go test ./hostapp/ -count=1 -v -run TestMultiNodeFigures
func TestMultiNodeFigures(t *testing.T) {
	if os.Getenv("FENNEC_MULTINODE_FIGURES") != "1" {
		t.Skip("set FENNEC_MULTINODE_FIGURES=1 to measure")
	}
	const (
		clients = 32
		span    = 8 * time.Second
	)
	type setup struct {
		name  string
		bases func(t *testing.T) ([]string, string) // API bases, root's token
	}
	setups := []setup{
		{"1 node, bbolt", func(t *testing.T) ([]string, string) {
			s := startServer(t, t.TempDir(), "FENNEC_ROOT_PASSWORD="+multiNodePassword, "FENNEC_LOG_FORMAT=json")
			return []string{s.url("/api/v4")}, signIn(t, s.url(""))
		}},
		{"1 node, PostgreSQL", func(t *testing.T) ([]string, string) {
			c := startNodeCluster(t, 1)
			return []string{c.nodes[0].url("/api/v4")}, c.token
		}},
		{"3 nodes, PostgreSQL", func(t *testing.T) ([]string, string) {
			c := startNodeCluster(t, 3)
			var bases []string
			for _, n := range c.nodes {
				bases = append(bases, n.url("/api/v4"))
			}
			return bases, c.token
		}},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-22s %12s %14s %12s %14s %10s\n", "setup", "writes/s", "write p99 ms", "reads/s", "read p99 ms", "503s")
	for _, s := range setups {
		t.Run(strings.NewReplacer(" ", "_", ",", "").Replace(s.name), func(t *testing.T) {
			bases, token := s.bases(t)
			project := createFigureProject(t, bases[0], token)
			var seq atomic.Int64
			write := measureLoad(t, bases, token, clients, span, func(base string) (string, string, []byte, int) {
				return http.MethodPost, fmt.Sprintf("%s/projects/%d/issues", base, project),
					[]byte(fmt.Sprintf(`{"title":"figure %d"}`, seq.Add(1))), http.StatusCreated
			})
			read := measureLoad(t, bases, token, clients, span, func(base string) (string, string, []byte, int) {
				return http.MethodGet, fmt.Sprintf("%s/projects/%d", base, project), nil, http.StatusOK
			})
			fmt.Fprintf(&table, "%-22s %12.0f %14.1f %12.0f %14.1f %10d\n", s.name, write.perSecond, ms(write.p99), read.perSecond, ms(read.p99),
				write.shed+read.shed)
		})
	}
	t.Logf("%d clients, %v per measurement, fsync on:\n%s", clients, span, table.String())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func createFigureProject(t *testing.T, base, token string) int64 {
	t.Helper()
	var p struct {
		ID int64 `json:"id"`
	}
	benchJSON(t, http.MethodPost, base+"/projects", token, `{"name":"figures"}`, http.StatusCreated, &p)
	return p.ID
}

type loadResult struct {
	perSecond float64
	p99       time.Duration
	// shed counts requests answered 503 with Retry-After (the engine gave
	// up on colliding writers; nothing was written): reported, not failed.
	shed int64
}

// measureLoad runs clients workers for span, worker w on base w mod
// len(bases), each sending the request next gives and checking its
// status; it returns the completed requests per second and the 99th
// percentile latency.
func measureLoad(t *testing.T, bases []string, token string, clients int, span time.Duration,
	next func(base string) (method, url string, body []byte, want int)) loadResult {
	t.Helper()
	tr := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		wg        sync.WaitGroup
		failed    atomic.Int64
		shed      atomic.Int64 // 503 with Retry-After: writers collided past the engine's retries
		whyMu     sync.Mutex
		why       = map[string]int{} // a failure's status and body's start, counted
	)
	record := func(reason string) {
		failed.Add(1)
		whyMu.Lock()
		why[reason]++
		whyMu.Unlock()
	}
	end := time.Now().Add(span)
	began := time.Now()
	for w := range clients {
		wg.Go(func() {
			var mine []time.Duration
			base := bases[w%len(bases)]
			for time.Now().Before(end) {
				method, url, body, want := next(base)
				req, err := http.NewRequest(method, url, bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("PRIVATE-TOKEN", token)
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					record(err.Error())
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
					shed.Add(1) // refused, nothing written: a client retries it
					continue
				}
				if resp.StatusCode != want {
					record(fmt.Sprintf("%d %.120s", resp.StatusCode, got))
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			latencies = append(latencies, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	if n := failed.Load(); n > 0 {
		t.Errorf("%d requests failed: %v", n, why)
	}
	if len(latencies) == 0 {
		t.Fatal("no request completed")
	}
	slices.Sort(latencies)
	return loadResult{
		perSecond: float64(len(latencies)) / elapsed.Seconds(),
		p99:       latencies[len(latencies)*99/100],
		shed:      shed.Load(),
	}
}
