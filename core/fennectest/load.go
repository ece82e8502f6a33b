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
	// A request without a body can be sent again: one per worker, built once.
	reqs := make([]*http.Request, workers)
	for w := range reqs {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if token != "" {
			req.Header.Set("PRIVATE-TOKEN", token)
		}
		reqs[w] = req
	}
	return LoadRequests(tb, workers, d, http.StatusOK, func(w, _ int) *http.Request { return reqs[w] })
}

// LoadRequests sends, from workers keep-alive clients for d, the requests
// next builds (the i-th of worker w; a request with a body must be new each
// time), and returns the requests per second and the 99th percentile
// latency. Building a request is not part of its latency. Any failed
// request, or an answer other than want, fails the benchmark. next is
// called from the workers' goroutines concurrently.
func LoadRequests(tb testing.TB, workers int, d time.Duration, want int, next func(w, i int) *http.Request) (rps float64, p99 time.Duration) {
	tb.Helper()
	tr := &http.Transport{MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var done, failed atomic.Int64
	var firstFailure atomic.Pointer[string]
	fail := func(s string) {
		failed.Add(1)
		firstFailure.CompareAndSwap(nil, &s)
	}
	lat := make([][]time.Duration, workers)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				req := next(w, i)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					fail(err.Error())
					continue
				}
				if resp.StatusCode != want {
					body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
					resp.Body.Close()
					fail(req.Method + " " + req.URL.Path + ": " + resp.Status + " " + string(body))
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		tb.Fatalf("fennectest: %d requests failed; the first: %s", n, *firstFailure.Load())
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
