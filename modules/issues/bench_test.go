package issues_test

// The issues figures of issue 14. Each benchmark does its whole
// measurement once per b.N iteration and reports its own metrics (ns/op is
// left at 0); run with -run '^$' -bench . -benchtime 1x.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkListHundredThousand: GET /projects/:id/issues?per_page=20, page
// 1 and page 100, on a project of 100,000 issues, the median of 300
// requests each (30 for the search), as the owner and as an anonymous reader. The issues are
// seeded straight into the store through the service (Seed: 2,000 per
// transaction, with fsync: the app runs with its normal durability).
func BenchmarkListHundredThousand(b *testing.B) {
	const n = 100_000
	var svc *internal.Service
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "big", "public")
	seeding := time.Now()
	if err := svc.Seed(context.Background(), p.ID, alice.ID, n); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d issues in %v", n, time.Since(seeding))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	median := func(query, token string, samples int) float64 {
		url := fmt.Sprintf("%s/api/v4/projects/%d/issues?%s", s.URL, p.ID, query)
		var ms []float64
		for k := 0; k < samples; k++ {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if token != "" {
				req.Header.Set("PRIVATE-TOKEN", token)
			}
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
			if resp.StatusCode != 200 || !strings.HasPrefix(string(body), `[{"id":`) {
				b.Fatalf("%s: %d %.200s", query, resp.StatusCode, body)
			}
		}
		return fennectest.Median(ms)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.ReportMetric(median("per_page=20", alice.Token, 300), "page1-median-ms")
		b.ReportMetric(median("per_page=20&page=100", alice.Token, 300), "page100-median-ms")
		b.ReportMetric(median("per_page=20", "", 300), "page1-anon-median-ms")
		b.ReportMetric(median("per_page=20&page=100", "", 300), "page100-anon-median-ms")
		b.ReportMetric(median("per_page=20&page=100&order_by=updated_at&sort=asc&state=opened", alice.Token, 300), "page100-updated-asc-median-ms")
		// A filter that must look into every issue: the slow path.
		b.ReportMetric(median("per_page=20&search=seed+99999", alice.Token, 30), "search-median-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCreateConcurrent: POST /projects/:id/issues from 32 concurrent
// clients for 5 s, through HTTP with fsync (the store's group commit).
func BenchmarkCreateConcurrent(b *testing.B) {
	s := start(b, fennectest.WithLogger(zap.NewNop()))
	alice := s.CreateUser(b, "alice")
	p := stocktest.NewProject(b, alice.Client, "busy", "private")
	url := fmt.Sprintf("%s/api/v4/projects/%d/issues", s.URL, p.ID)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rps, p99 := fennectest.LoadRequests(b, 32, 5*time.Second, http.StatusCreated, func(w, k int) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"title":"issue %d-%d","description":"load"}`, w, k)))
			req.Header.Set("PRIVATE-TOKEN", alice.Token)
			req.Header.Set("Content-Type", "application/json")
			return req
		})
		b.ReportMetric(rps, "issues/s")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkListMineScaling: GET /issues (Service.ListMine, page 1 of 20)
// at 10,000 and then 100,000 issues of the instance, against ListMineScan
// (the decode-everything path it replaced) in the same run: for a user
// with 20 issues (created-by-me, and scope=all, which also walks the
// issues of a private project the user may not read), and for the author
// of all the others (created-by-me). The issues are seeded at store level
// (Seed); each figure is the median of 50 calls, in microseconds, and
// x100k/x10k is the growth between the sizes (1 is flat).
func BenchmarkListMineScaling(b *testing.B) {
	var svc *internal.Service
	var lookup auth.UserLookup
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc, &lookup))
	alice := s.CreateUser(b, "alice")
	bob := s.CreateUser(b, "bob")
	small := stocktest.NewProject(b, alice.Client, "small", "private")
	big := stocktest.NewProject(b, bob.Client, "big", "private")
	ctx := context.Background()
	if err := svc.Seed(ctx, small.ID, alice.ID, 20); err != nil {
		b.Fatal(err)
	}
	asAlice, asBob := fennectest.AsUser(b, lookup, alice.ID), fennectest.AsUser(b, lookup, bob.ID)
	type list func(context.Context, issue.ListQuery) ([]issue.Issue, int, error)
	median := func(fn list, ctx context.Context, scope string, samples int) float64 {
		var us []float64
		for k := 0; k < samples; k++ {
			t0 := time.Now()
			page, _, err := fn(ctx, issue.ListQuery{Scope: scope, Limit: 20})
			us = append(us, float64(time.Since(t0).Nanoseconds())/1000)
			if err != nil || len(page) != 20 {
				b.Fatalf("%s: %d issues, %v", scope, len(page), err)
			}
		}
		return fennectest.Median(us)
	}
	cases := []struct {
		name  string
		ctx   context.Context
		scope string
	}{{"few", asAlice, "created-by-me"}, {"few-all", asAlice, "all"}, {"many", asBob, "created-by-me"}}
	seeded := 20
	figures := map[string][2]float64{}
	for n, size := range []int{10_000, 100_000} {
		if err := svc.Seed(ctx, big.ID, bob.ID, size-seeded); err != nil {
			b.Fatal(err)
		}
		seeded = size
		for _, c := range cases {
			fast, scan := median(svc.ListMine, c.ctx, c.scope, 50), median(svc.ListMineScan, c.ctx, c.scope, 5)
			f := figures[c.name]
			f[n] = fast
			figures[c.name] = f
			b.ReportMetric(fast, fmt.Sprintf("%s-%dk-us", c.name, size/1000))
			b.ReportMetric(scan, fmt.Sprintf("%s-%dk-scan-us", c.name, size/1000))
		}
	}
	for _, c := range cases {
		b.ReportMetric(figures[c.name][1]/figures[c.name][0], c.name+"-x100k/x10k")
	}
	b.ReportMetric(0, "ns/op")
}
