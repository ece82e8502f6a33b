package fennectest

import (
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Load sends GET url (with token as PRIVATE-TOKEN when not empty) from
// workers keep-alive clients for d, and returns the requests per second and
// the 99th percentile latency. Any failed request or non-200 answer fails
// the benchmark. For benchmarks only: the clients share the machine with the
// server, so compare figures taken in the same run.
func Load(tb testing.TB, url, token string, workers int, d time.Duration) (rps float64, p99 time.Duration) {
	tb.Helper()
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var done, failed atomic.Int64
	lat := make([][]time.Duration, workers)
	start := time.Now()
	deadline := start.Add(d)
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
				t0 := time.Now()
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
				lat[w] = append(lat[w], time.Since(t0))
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		tb.Fatalf("fennectest: %d requests failed against %s", n, url)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) > 0 {
		p99 = all[len(all)*99/100]
	}
	return float64(done.Load()) / elapsed.Seconds(), p99
}

// Median of v (the upper one for an even count).
func Median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
