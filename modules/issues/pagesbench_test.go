package issues_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkIssuePages: the server time of the issue list page on a
// project of 10,000 issues and of an issue page with 500 comments, each
// next to the API calls that return the same data (the list; the issue
// and its notes, 100 a page as clients read them), requests interleaved
// in one run, as an anonymous reader of a public project. It reports the
// median and p99 of each and the page/API ratios, and the pages' sizes.
// Run: go test -run '^$' -bench BenchmarkIssuePages -benchtime 1x ./modules/issues/
func BenchmarkIssuePages(b *testing.B) {
	var svc *internal.Service
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "big", "public")
	if err := svc.Seed(context.Background(), p.ID, alice.ID, 10_000); err != nil {
		b.Fatal(err)
	}
	// 500 comments on issue 1, posted concurrently through the API.
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				body := fmt.Sprintf("Comment %d with **Markdown**, a `code span` and a [link](https://example.com/%d).", k, k)
				if _, _, err := alice.Client.Notes.CreateIssueNote(p.ID, 1, &gitlab.CreateIssueNoteOptions{Body: &body}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for k := 0; k < 500; k++ {
		work <- k
	}
	close(work)
	wg.Wait()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(path string) (time.Duration, int) {
		b.Helper()
		t0 := time.Now()
		resp, err := client.Get(s.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
		}
		return took, len(body)
	}
	type pair struct {
		name string
		page string
		api  []string // the calls that give the page's data
	}
	pairs := []pair{
		{"list", "/alice/big/-/issues", []string{fmt.Sprintf("/api/v4/projects/%d/issues?state=opened&per_page=20", p.ID)}},
		{"issue", "/alice/big/-/issues/1", []string{fmt.Sprintf("/api/v4/projects/%d/issues/1", p.ID),
			fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=1", p.ID), fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=2", p.ID),
			fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=3", p.ID), fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=4", p.ID),
			fmt.Sprintf("/api/v4/projects/%d/issues/1/notes?per_page=100&page=5", p.ID)}},
	}
	quantile := func(d []time.Duration, q float64) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	const samples = 60
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, pr := range pairs {
			var pages, apis []time.Duration
			size := 0
			for k := 0; k < samples; k++ {
				d, n := fetch(pr.page)
				pages, size = append(pages, d), n
				var sum time.Duration
				for _, call := range pr.api {
					d, _ := fetch(call)
					sum += d
				}
				apis = append(apis, sum)
			}
			pm, pp, am, ap := quantile(pages, .5), quantile(pages, .99), quantile(apis, .5), quantile(apis, .99)
			b.ReportMetric(pm, pr.name+"-page-p50-ms")
			b.ReportMetric(pp, pr.name+"-page-p99-ms")
			b.ReportMetric(am, pr.name+"-api-p50-ms")
			b.ReportMetric(ap, pr.name+"-api-p99-ms")
			b.ReportMetric(pm/am, pr.name+"-p50-ratio")
			b.ReportMetric(float64(size)/1024, pr.name+"-page-kb")
			b.Logf("%s: page %.1f/%.1f ms (p50/p99), API %.1f/%.1f ms, %d KB", pr.name, pm, pp, am, ap, size/1024)
		}
	}
	b.ReportMetric(0, "ns/op")
}
