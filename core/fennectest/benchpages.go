package fennectest

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchPageAndAPI measures a page next to the API calls that give the
// same data, in the same run (the machine is shared and noisy, so only
// their ratio means much): two sub-benchmarks, name/page (a GET of page
// with client, whose cookie jar, or none, says who visits) and name/api
// (the GETs of api in turn, as one op, with token as PRIVATE-TOKEN when
// given). Each reports its CPU time per op, the bytes sent (gzip-encoded
// when the server compresses) and the uncompressed bytes; name/api adds
// the ratios page/api of ns/op and of CPU time.
func BenchPageAndAPI(b *testing.B, baseURL string, client *http.Client, token, name, page string, api ...string) {
	b.Helper()
	get := func(b *testing.B, path string, gzip bool) int {
		req, err := http.NewRequest(http.MethodGet, baseURL+path, nil)
		if err != nil {
			b.Fatal(err)
		}
		if token != "" && strings.HasPrefix(path, "/api/") {
			req.Header.Set("PRIVATE-TOKEN", token)
		}
		if gzip {
			// Set by hand, the body is left compressed: its size is
			// what was sent.
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
		}
		return len(body)
	}
	var pageNs, pageCPU float64
	b.Run(name+"/page", func(b *testing.B) {
		wire := 0
		cpu0 := CPUTime(b)
		for i := 0; i < b.N; i++ {
			wire = get(b, page, true)
		}
		pageCPU = float64(CPUTime(b)-cpu0) / float64(b.N)
		pageNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(pageCPU, "cpu-ns/op")
		b.ReportMetric(float64(wire), "wire-bytes")
		b.ReportMetric(float64(get(b, page, false)), "html-bytes")
	})
	b.Run(name+"/api", func(b *testing.B) {
		wire := 0
		cpu0 := CPUTime(b)
		for i := 0; i < b.N; i++ {
			wire = 0
			for _, path := range api {
				wire += get(b, path, true)
			}
		}
		apiCPU := float64(CPUTime(b)-cpu0) / float64(b.N)
		apiNs := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(apiCPU, "cpu-ns/op")
		raw := 0
		for _, path := range api {
			raw += get(b, path, false)
		}
		b.ReportMetric(float64(wire), "wire-bytes")
		b.ReportMetric(float64(raw), "json-bytes")
		if apiNs > 0 && apiCPU > 0 {
			b.ReportMetric(pageNs/apiNs, "page/api")
			b.ReportMetric(pageCPU/apiCPU, "cpu-page/api")
		}
	})
}

// CPUTime is the process's CPU time so far, user and system: steadier
// than wall time on a loaded machine.
func CPUTime(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
