package snippets_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkProjectSnippets seeds one public project with 10,000 snippets
// (every other one private) through POST /projects/:id/snippets from 32
// concurrent writers, with fsync on (the store's group commit), and reports
// that rate; then, over loopback with 8 keep-alive clients, the requests
// per second and p99 of
//
//   - the list's first page and page 100 (per_page=20) as the owner, who
//     sees all 10,000,
//   - the first page as a signed-in reader of the public project, who sees
//     the 5,000 public ones (the union of index ranges, not a scan),
//   - one snippet, and its raw content.
//
// Run with -run '^$' -bench ProjectSnippets -benchtime 1x.
func BenchmarkProjectSnippets(b *testing.B) {
	const (
		total   = 10000
		writers = 32
		workers = 8
		round   = 2 * time.Second
	)
	logger, err := flog.New(flog.Options{Level: "warn", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	s := stocktest.Start(b, fennectest.WithLogger(logger))
	owner, reader := s.CreateUser(b, "owner"), s.CreateUser(b, "reader")
	p := newBenchProject(b, s, owner.Token)
	base := s.URL + "/api/v4/projects/" + strconv.FormatInt(p, 10) + "/snippets"

	started := time.Now()
	var wg sync.WaitGroup
	var firstID int64
	var once sync.Once
	for w := range writers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < total; i += writers {
				vis := "public"
				if i%2 == 1 {
					vis = "private"
				}
				body, _ := json.Marshal(map[string]string{"title": "snippet " + strconv.Itoa(i), "file_name": "s.go",
					"code": "package main\n\nfunc main() { println(" + strconv.Itoa(i) + ") }\n", "visibility": vis})
				req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
				req.Header.Set("PRIVATE-TOKEN", owner.Token)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					b.Errorf("create: %d %s", res.StatusCode, raw)
					return
				}
				once.Do(func() {
					var v struct{ ID int64 }
					_ = json.Unmarshal(raw, &v)
					firstID = v.ID
				})
			}
		}(w)
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	createRate := total / time.Since(started).Seconds()

	one := base + "/" + strconv.FormatInt(firstID, 10)
	b.ResetTimer()
	var first, page100, readerFirst, get, raw float64
	var firstP99, page100P99, readerP99, getP99, rawP99 time.Duration
	for i := 0; i < b.N; i++ {
		first, firstP99 = fennectest.Load(b, base+"?per_page=20", owner.Token, workers, round)
		page100, page100P99 = fennectest.Load(b, base+"?per_page=20&page=100", owner.Token, workers, round)
		readerFirst, readerP99 = fennectest.Load(b, base+"?per_page=20", reader.Token, workers, round)
		get, getP99 = fennectest.Load(b, one, owner.Token, workers, round)
		raw, rawP99 = fennectest.Load(b, one+"/raw", owner.Token, workers, round)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(createRate, "creates/s@32")
	b.ReportMetric(first, "list-p1-req/s")
	b.ReportMetric(ms(firstP99), "list-p1-p99-ms")
	b.ReportMetric(page100, "list-p100-req/s")
	b.ReportMetric(ms(page100P99), "list-p100-p99-ms")
	b.ReportMetric(readerFirst, "reader-list-req/s")
	b.ReportMetric(ms(readerP99), "reader-list-p99-ms")
	b.ReportMetric(get, "get-req/s")
	b.ReportMetric(ms(getP99), "get-p99-ms")
	b.ReportMetric(raw, "raw-req/s")
	b.ReportMetric(ms(rawP99), "raw-p99-ms")
}

func newBenchProject(b *testing.B, s *fennectest.Server, token string) int64 {
	b.Helper()
	body := bytes.NewReader([]byte(`{"name":"bench","visibility":"public"}`))
	var v struct{ ID int64 }
	res, raw := s.JSON(b, http.MethodPost, "/api/v4/projects", body, &v, "PRIVATE-TOKEN", token, "Content-Type", "application/json")
	if res.StatusCode != http.StatusCreated {
		b.Fatalf("project: %d %s", res.StatusCode, raw)
	}
	return v.ID
}
