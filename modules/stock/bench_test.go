package stock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// load runs `workers` keep-alive clients against url for d and returns the
// requests per second and the 99th percentile latency.
func load(b *testing.B, url, token string, workers int, d time.Duration) (float64, time.Duration) {
	b.Helper()
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var done atomic.Int64
	var failed atomic.Int64
	lat := make([][]time.Duration, workers)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if token != "" {
				req.Header.Set("PRIVATE-TOKEN", token)
			}
			for time.Now().Before(deadline) {
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(start))
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed against %s", n, url)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	p99 := time.Duration(0)
	if len(all) > 0 {
		p99 = all[len(all)*99/100]
	}
	return float64(done.Load()) / d.Seconds(), p99
}

// BenchmarkGetUserFullStackVsPlain measures token-authenticated GET
// /api/v4/user through the whole Fennec stack (access log as JSON at info,
// metrics, auth with a SHA-256 token index lookup, Huma, JSON) against a
// plain net/http handler that writes the same bytes, in the same run, over
// loopback with 32 keep-alive connections. Rounds alternate so drift hits
// both sides alike. Run with -benchtime=1x (make bench does).
func BenchmarkGetUserFullStackVsPlain(b *testing.B) {
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s := stocktest.Start(b, fennectest.WithLogger(logger))
	u := s.CreateUser(b, "bench")
	resp, body := s.JSON(b, http.MethodGet, "/api/v4/user", nil, nil, "PRIVATE-TOKEN", u.Token)
	if resp.StatusCode != 200 {
		b.Fatalf("GET /user: %d %s", resp.StatusCode, body)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer plain.Close()

	const workers = 32
	round := 2 * time.Second
	var plainRPS, fullRPS float64
	var fullP99 time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < 2; r++ {
			p, _ := load(b, plain.URL+"/api/v4/user", "", workers, round)
			f, p99 := load(b, s.URL+"/api/v4/user", u.Token, workers, round)
			plainRPS += p
			fullRPS += f
			if p99 > fullP99 {
				fullP99 = p99
			}
		}
	}
	plainRPS /= float64(2 * b.N)
	fullRPS /= float64(2 * b.N)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(plainRPS, "plain-req/s")
	b.ReportMetric(fullRPS, "fennec-req/s")
	b.ReportMetric(100*fullRPS/plainRPS, "fennec/plain-%")
	b.ReportMetric(float64(fullP99.Microseconds())/1000, "fennec-p99-ms")
}

// BenchmarkGetUserHandler is the server's own cost of GET /api/v4/user, with
// no network and no client: the handler called directly.
func BenchmarkGetUserHandler(b *testing.B) {
	logger, err := flog.New(flog.Options{Level: "info", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s := stocktest.Start(b, fennectest.WithLogger(logger))
	u := s.CreateUser(b, "bench")
	h := s.App.Handler()
	req := httptest.NewRequest(http.MethodGet, "/api/v4/user", nil)
	req.Header.Set("PRIVATE-TOKEN", u.Token)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
