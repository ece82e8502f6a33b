package issues_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

func TestListFilters(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "lists", "public")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.ReporterPermissions)
	m, _, err := alice.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1.0")})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	// Five issues with distinct, backdated creation times (the owner may),
	// and distinct updated_at (the time of each write, to the millisecond:
	// each write waits for the clock to move, so updated_at has no ties).
	mk := func(n int, title string, f func(*gitlab.CreateIssueOptions)) {
		newIssue(t, alice.Client, p.ID, title, func(o *gitlab.CreateIssueOptions) {
			o.CreatedAt = gitlab.Ptr(base.Add(time.Duration(n) * time.Hour))
			if f != nil {
				f(o)
			}
		})
		fennectest.NextMillisecond()
	}
	mk(1, "alpha crash", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"bug", "p1"} })
	mk(2, "beta", func(o *gitlab.CreateIssueOptions) {
		o.Labels = &gitlab.LabelOptions{"bug"}
		o.MilestoneID = gitlab.Ptr(m.ID)
		o.Description = gitlab.Ptr("a CRASH in the description")
	})
	mk(3, "gamma", func(o *gitlab.CreateIssueOptions) { o.AssigneeIDs = &[]int64{bob.ID} })
	mk(4, "delta", nil)
	mk(5, "epsilon", nil)
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 4, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	fennectest.NextMillisecond()
	// Touch issue 1 last, so updated_at order differs from created_at.
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 1, &gitlab.UpdateIssueOptions{Description: gitlab.Ptr("touched")}); err != nil {
		t.Fatal(err)
	}
	list := func(query string) []int64 {
		t.Helper()
		return s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues"+query), nil).Expect(t, 200, "").IIDs(t)
	}
	cases := []struct {
		query string
		want  []int64
	}{
		{"", []int64{5, 4, 3, 2, 1}},
		{"?state=all", []int64{5, 4, 3, 2, 1}},
		{"?state=opened", []int64{5, 3, 2, 1}},
		{"?state=closed", []int64{4}},
		{"?sort=asc", []int64{1, 2, 3, 4, 5}},
		{"?order_by=updated_at", []int64{1, 4, 5, 3, 2}},
		{"?order_by=updated_at&sort=asc", []int64{2, 3, 5, 4, 1}},
		{"?labels=bug", []int64{2, 1}},
		{"?labels=bug,p1", []int64{1}},
		{"?labels=bug,nope", []int64{}},
		{"?labels=" + q("No Label"), []int64{5, 4, 3}},
		{"?milestone=v1.0", []int64{2}},
		{"?milestone=" + q("No Milestone"), []int64{5, 4, 3, 1}},
		{"?milestone=" + q("Any Milestone"), []int64{2}},
		{"?milestone=v2", []int64{}},
		{"?iids[]=1&iids[]=3&iids[]=99", []int64{3, 1}},
		{"?search=crash", []int64{2, 1}},
		{"?search=crash&labels=p1", []int64{1}},
		{"?search=CRASH&state=closed", []int64{}},
	}
	for _, c := range cases {
		if got := list(c.query); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.query, got, c.want)
		}
	}
	for _, bad := range []string{"?state=open", "?order_by=title", "?sort=up"} {
		name := strings.SplitN(strings.TrimPrefix(bad, "?"), "=", 2)[0]
		s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues"+bad), nil).
			Expect(t, 400, `{"error":"`+name+` does not have a valid value"}`)
	}

	t.Run("client-go filters", func(t *testing.T) {
		got, _, err := alice.Client.Issues.ListProjectIssues(p.ID, &gitlab.ListProjectIssuesOptions{
			Labels: &gitlab.LabelOptions{"bug"}, State: gitlab.Ptr("opened"), IIDs: &[]int64{1, 2}})
		if err != nil || len(got) != 2 || got[0].IID != 2 {
			t.Fatalf("%v %v", got, err)
		}
	})

	t.Run("pagination headers", func(t *testing.T) {
		r := s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues?per_page=2&page=2"), nil).Expect(t, 200, "")
		fennectest.CheckPages(t, "page 2", r.Header, 5, 3, 2, 2, "3", "1")
		if got := r.IIDs(t); !slices.Equal(got, []int64{3, 2}) {
			t.Fatalf("page 2 %v", got)
		}
		if link := r.Header.Get("Link"); !strings.Contains(link, `page=3&per_page=2>; rel="next"`) || !strings.Contains(link, `rel="last"`) {
			t.Fatalf("Link %s", link)
		}
		r = s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues?per_page=2&page=9"), nil).Expect(t, 200, "[]")
		fennectest.CheckPages(t, "past the end", r.Header, 5, 3, 2, 9, "", "3")
		r = s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues?labels=bug&per_page=1"), nil).Expect(t, 200, "")
		fennectest.CheckPages(t, "filtered", r.Header, 2, 2, 1, 1, "2", "")
	})

	t.Run("GET /issues scopes", func(t *testing.T) {
		s.Call(t, "", http.MethodGet, "/api/v4/issues", nil).Expect(t, 401, `{"message":"401 Unauthorized"}`)
		mine := s.Call(t, alice.Token, http.MethodGet, "/api/v4/issues", nil).Expect(t, 200, "")
		if got := mine.IIDs(t); !slices.Equal(got, []int64{5, 4, 3, 2, 1}) {
			t.Fatalf("created-by-me %v", got)
		}
		fennectest.CheckPages(t, "mine", mine.Header, 5, 1, 20, 1, "", "")
		if got := s.Call(t, bob.Token, http.MethodGet, "/api/v4/issues", nil).IIDs(t); len(got) != 0 {
			t.Fatalf("bob created none: %v", got)
		}
		if got := s.Call(t, bob.Token, http.MethodGet, "/api/v4/issues?scope=assigned-to-me", nil).IIDs(t); !slices.Equal(got, []int64{3}) {
			t.Fatalf("assigned-to-me %v", got)
		}
		if got := s.Call(t, bob.Token, http.MethodGet, "/api/v4/issues?scope=all&state=closed", nil).IIDs(t); !slices.Equal(got, []int64{4}) {
			t.Fatalf("all closed %v", got)
		}
		if got := s.Call(t, bob.Token, http.MethodGet, "/api/v4/issues?scope=all&labels=bug&sort=asc", nil).IIDs(t); !slices.Equal(got, []int64{1, 2}) {
			t.Fatalf("all bug %v", got)
		}
		s.Call(t, bob.Token, http.MethodGet, "/api/v4/issues?scope=mine", nil).Expect(t, 400, `{"error":"scope does not have a valid value"}`)
		got, _, err := alice.Client.Issues.ListIssues(&gitlab.ListIssuesOptions{Scope: gitlab.Ptr("created_by_me"), Milestone: gitlab.Ptr("v1.0")})
		if err != nil || len(got) != 1 || got[0].IID != 2 {
			t.Fatalf("client-go ListIssues %v %v", got, err)
		}
	})
}

// TestConcurrentIIDs: 20 creates at once get iids 1..20, no gap, no repeat.
func TestConcurrentIIDs(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "busy", "private")
	const n = 20
	var wg sync.WaitGroup
	iids := make(chan int64, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			is, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("race")})
			if err != nil {
				errs <- err
				return
			}
			iids <- is.IID
		}()
	}
	wg.Wait()
	close(iids)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var got []int64
	for iid := range iids {
		got = append(got, iid)
	}
	slices.Sort(got)
	for i, iid := range got {
		if iid != int64(i+1) {
			t.Fatalf("iids %v: want 1..%d without gaps or repeats", got, n)
		}
	}
	if len(got) != n {
		t.Fatalf("%d issues", len(got))
	}
	r := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues?per_page=100"), nil)
	fennectest.CheckPages(t, "all", r.Header, n, 1, 100, 1, "", "")
}
