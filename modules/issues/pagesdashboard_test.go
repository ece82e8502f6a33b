package issues_test

import (
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestIssuePagesDashboard: /dashboard/issues is GET /issues as a page:
// the issues the visitor created, those assigned to them and all they may
// see, as tabs with each state's count; hostile titles escaped; anonymous
// visitors sent to sign in; a project they cannot see never listed.
func TestIssuePagesDashboard(t *testing.T) {
	t.Parallel()
	s := start(t)
	dev := s.CreateUser(t, "dev")
	mine := stocktest.NewProject(t, s.Client, "mine", "private")
	hidden := stocktest.NewProject(t, s.Client, "hidden", "private")
	stocktest.AddMember(t, s.Client, mine.ID, dev.ID, gitlab.DeveloperPermissions)
	if _, _, err := dev.Client.Issues.CreateIssue(mine.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Mine <b>")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Issues.CreateIssue(mine.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Given"), AssigneeIDs: &[]int64{dev.ID}}); err != nil {
		t.Fatal(err)
	}
	stocktest.NewIssue(t, s.Client, hidden.ID, "Walled")
	wantRedirectTo := "/users/sign_in?return_to=%2Fdashboard%2Fissues"
	if p := s.NewBrowser(t).Get(t, "/dashboard/issues"); p.StatusCode != http.StatusFound || p.Header.Get("Location") != wantRedirectTo {
		t.Errorf("anonymous: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	d := s.SignedIn(t, "dev", dev.Password)
	created := d.Get(t, "/dashboard/issues")
	wantPage(t, "created", created, 200, `<a href="/root/mine/-/issues/1"><bdi>Mine &lt;b&gt;</bdi></a>`,
		`aria-current="page">Created by me</a>`, `Open <span class="count">1</span>`, `<a href="/root/mine"><bdi>Administrator / mine</bdi></a> #1`)
	wantNot(t, "created", created, "Given", "Walled")
	assigned := d.Get(t, "/dashboard/issues?scope=assigned-to-me")
	wantPage(t, "assigned", assigned, 200, `<a href="/root/mine/-/issues/2"><bdi>Given</bdi></a>`)
	wantNot(t, "assigned", assigned, "Mine &lt;b&gt;", "Walled")
	all := d.Get(t, "/dashboard/issues?scope=all&state=all&search=%3Cscript%3E")
	wantPage(t, "all, searched", all, 200, `All <span class="count">0</span>`, `No issues match this search.`, `value="&lt;script&gt;"`)
	all = d.Get(t, "/dashboard/issues?scope=all&state=all")
	wantPage(t, "all", all, 200, `All <span class="count">2</span>`)
	wantNot(t, "all", all, "Walled")
}
