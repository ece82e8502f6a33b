package mergerequests_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/mergerequests/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// medianPage is the median time of samples page loads of path by a
// signed-in browser, which must answer 200 with want in the page.
func medianPage(b *testing.B, br *fennectest.Browser, path, want string, samples int) float64 {
	var ms []float64
	for k := 0; k < samples; k++ {
		t0 := time.Now()
		p := br.Get(b, path)
		ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		if p.StatusCode != http.StatusOK || !strings.Contains(p.Body, want) {
			b.Fatalf("%s: %d, no %q in %.300s", path, p.StatusCode, want, p.Body)
		}
	}
	return fennectest.Median(ms)
}

// BenchmarkListFiltersAndDashboard: the merge request lists of issue 29
// next to the API calls that list the same merge requests, in one run, on
// a project of 10,000 merge requests (alice's and bob's, four labels, a
// few with "needle") beside a private project of 10,000 that alice may
// not read: the list page filtered by a label and by a search against
// GET /projects/:id/merge_requests with the same filter; the dashboard
// (alice's open ones; every one she may read) against the API's list of
// her open ones in the project; and the filtered API calls against the
// unfiltered first page. Medians of 30 loads each. Run with
// -run '^$' -bench ListFiltersAndDashboard -benchtime 1x.
func BenchmarkListFiltersAndDashboard(b *testing.B) {
	const n = 10_000
	var svc *internal.Service
	s := start(b, fennectest.WithLogger(zap.NewNop()), fennectest.WithExtract(&svc))
	alice, bob, carol := s.CreateUser(b, "alice"), s.CreateUser(b, "bob"), s.CreateUser(b, "carol")
	p := stocktest.NewProject(b, alice.Client, "big", "private")
	walled := stocktest.NewProject(b, carol.Client, "walled", "private")
	stocktest.AddMember(b, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	var labelIDs []int64
	for _, name := range []string{"bug", "ui", "docs", "perf"} {
		l, _, err := alice.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr(name), Color: gitlab.Ptr("#428bca")})
		if err != nil {
			b.Fatal(err)
		}
		labelIDs = append(labelIDs, l.ID)
	}
	sha := strings.Repeat("a", 40)
	ctx := context.Background()
	if err := svc.SeedVaried(ctx, p.ID, []int64{alice.ID, bob.ID}, labelIDs, n, sha); err != nil {
		b.Fatal(err)
	}
	if err := svc.SeedVaried(ctx, walled.ID, []int64{carol.ID, alice.ID}, nil, n, sha); err != nil {
		b.Fatal(err)
	}
	// alice once read "walled" (her merge requests there are in her
	// keys); she may not now.
	br := s.SignedIn(b, "alice", alice.Password)
	api := fmt.Sprintf("/api/v4/projects/%d/merge_requests", p.ID)
	const page = "/alice/big/-/merge_requests"
	const samples = 30
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain := medianGet(b, s, api+"?per_page=20", alice.Token, samples)
		apiLabel := medianGet(b, s, api+"?labels=bug&state=opened&per_page=20", alice.Token, samples)
		pageLabel := medianPage(b, br, page+"?label_name=bug", `id="merge_request_`, samples)
		apiSearch := medianGet(b, s, api+"?search=needle&state=all&per_page=20", alice.Token, samples)
		pageSearch := medianPage(b, br, page+"?state=all&search=needle", `All <span class="count">10</span>`, samples)
		apiPeople := medianGet(b, s, fmt.Sprintf("%s?author_id=%d&assignee_id=%d&per_page=20", api, bob.ID, alice.ID), alice.Token, samples)
		apiMine := medianGet(b, s, fmt.Sprintf("%s?author_id=%d&state=opened&per_page=20", api, alice.ID), alice.Token, samples)
		dashboard := medianPage(b, br, "/dashboard/merge_requests", `Open <span class="count">2500</span>`, samples)
		dashboardAll := medianPage(b, br, "/dashboard/merge_requests?scope=all", `Open <span class="count">2500</span>`, samples)
		b.ReportMetric(plain, "api-page1-ms")
		b.ReportMetric(apiLabel, "api-label-ms")
		b.ReportMetric(pageLabel, "page-label-ms")
		b.ReportMetric(apiSearch, "api-search-ms")
		b.ReportMetric(pageSearch, "page-search-ms")
		b.ReportMetric(apiPeople, "api-author+assignee-ms")
		b.ReportMetric(apiMine, "api-mine-ms")
		b.ReportMetric(dashboard, "dashboard-ms")
		b.ReportMetric(dashboardAll, "dashboard-all-ms")
		b.ReportMetric(apiLabel/plain, "api-label/api-page1")
		b.ReportMetric(pageLabel/apiLabel, "page-label/api-label")
		b.ReportMetric(pageSearch/apiSearch, "page-search/api-search")
		b.ReportMetric(dashboard/apiMine, "dashboard/api-mine")
	}
	b.ReportMetric(0, "ns/op")
}
