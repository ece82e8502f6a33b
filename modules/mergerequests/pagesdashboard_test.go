package mergerequests_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// rowsOf are the merge requests a list page shows, by their anchors
// ("merge_request_3") or, on the dashboard, their links.
func rowsOf(body, project string) []string {
	var out []string
	for _, part := range strings.Split(body, `<a href="/`+project+`/-/merge_requests/`)[1:] {
		if n, _, ok := strings.Cut(part, `"`); ok && !strings.Contains(n, "/") && !strings.Contains(n, "?") {
			out = append(out, n)
		}
	}
	return out
}

// openWithPipeline opens !5 "With CI" from a branch whose head has a
// pipeline (no executor here: it waits, pending).
func (f *filtersFixture) openWithPipeline(t *testing.T) {
	t.Helper()
	c := f.s.Client
	if _, _, err := c.Branches.CreateBranch(f.project.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("ci"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.RepositoryFiles.CreateFile(f.project.ID, ".gitlab-ci.yml", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("ci"),
		Content: gitlab.Ptr("test:\n  script: [\"true\"]\n"), CommitMessage: gitlab.Ptr("ci")}); err != nil {
		t.Fatal(err)
	}
	f.s.Drain(t)
	openMR(t, c, f.project.ID, "ci", "master", "With CI")
}

// TestMergeRequestListPage: the project's list asks the service's filters
// (label, milestone, search, author and assignee by username, with the
// state tabs' counts), shows the head pipeline's status linking to the
// Pipelines tab, the target branch and the labels in their colours, and
// renders hostile filters safely.
func TestMergeRequestListPage(t *testing.T) {
	t.Parallel()
	f := newFiltersFixture(t)
	s := f.s
	f.openWithPipeline(t)
	d := s.SignedIn(t, "dev", f.dev.Password)
	const base = "/root/filtered/-/merge_requests"
	for _, tc := range []struct {
		query string
		want  string
		count string
	}{
		{"?state=all", "5 4 3 2 1", `All <span class="count">5</span>`},
		{"?state=all&label_name=bug", "2 1", `All <span class="count">2</span>`},
		{"?state=all&label_name=None", "5 3", `All <span class="count">2</span>`},
		{"?state=all&milestone_title=v1", "3 1", `Open <span class="count">2</span>`},
		{"?state=all&search=SEGFAULT", "1", `All <span class="count">1</span>`},
		{"?state=all&author_username=root", "5 4 3", `All <span class="count">3</span>`},
		{"?state=all&author_username=dev&sort=created_asc", "1 2", `All <span class="count">2</span>`},
		{"?state=all&assignee_username=dev", "1", `All <span class="count">1</span>`},
		{"?state=all&assignee_username=None", "5 4 2", `All <span class="count">3</span>`},
		{"?state=all&assignee_username=any", "3 1", `All <span class="count">2</span>`},
		{"?state=all&assignee_username=nobody", "", `All <span class="count">0</span>`},
		{"?state=all&author_username=" + url.QueryEscape(strings.Repeat("x", 300)), "", `All <span class="count">0</span>`},
		{"?state=all&label_name=ui&assignee_username=None", "4 2", `All <span class="count">2</span>`},
	} {
		p := d.Get(t, base+tc.query)
		p.Want(t, tc.query, http.StatusOK, tc.count)
		if got := strings.Join(rowsOf(p.Body, "root/filtered"), " "); got != tc.want {
			t.Errorf("%s: rows %q, want %q", tc.query, got, tc.want)
		}
		if tc.want == "" {
			p.Want(t, tc.query, http.StatusOK, `No merge requests match these filters.`)
		}
	}
	// The filters as the page keeps them: in the fields and in the links.
	p := d.Get(t, base+"?state=opened&author_username=dev&assignee_username=None&label_name=ui")
	p.Want(t, "kept filters", http.StatusOK, `name="author_username" value="dev"`, `name="assignee_username" value="None"`,
		`href="/root/filtered/-/merge_requests?assignee_username=None&amp;author_username=dev&amp;label_name=ui&amp;state=all"`)

	// A row: the chips in their colours (red with black text, navy with
	// white), the target branch, the pipeline's status as a link.
	all := d.Get(t, base+"?state=all")
	all.Want(t, "rows", http.StatusOK,
		`<a class="label chip on-light" href="/root/filtered/-/merge_requests?label_name=bug"><svg class="chip-fill" viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect width="1" height="1" fill="#ff0000"/></svg><bdi>bug</bdi></a>`,
		`<a class="label chip on-dark" href="/root/filtered/-/merge_requests?label_name=ui"><svg class="chip-fill" viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect width="1" height="1" fill="#000080"/></svg><bdi>ui</bdi></a>`,
		`<code><bdi>b2</bdi></code> → <code><bdi>master</bdi></code>`,
		`<a class="badge pipeline pipeline-pending" href="/root/filtered/-/pipelines/1"><span aria-hidden="true">○</span> Pipeline: pending</a>`)
	if n := strings.Count(all.Body, `class="badge pipeline `); n != 1 {
		t.Errorf("%d pipeline badges, want the one of !5", n)
	}

	// Hostile filters: escaped, bounded, nothing listed.
	hostile := `<script>alert(1)</script>"` + strings.Repeat("é", 5000)
	p = d.Get(t, base+"?state=all&search="+url.QueryEscape(hostile)+"&label_name="+url.QueryEscape(hostile)+
		"&milestone_title="+url.QueryEscape(hostile)+"&assignee_username="+url.QueryEscape(hostile))
	p.Want(t, "hostile", http.StatusOK, `value="&lt;script&gt;alert(1)&lt;/script&gt;&#34;éé`, `No merge requests match these filters.`)
	p.WantNot(t, "hostile", "<script>alert(1)", strings.Repeat("é", 200))
	if len(p.Body) > 200_000 {
		t.Errorf("the hostile page is %d bytes", len(p.Body))
	}
}

// TestMergeRequestDashboard: /dashboard/merge_requests lists the
// visitor's merge requests across projects, those they opened, those
// assigned to them and all they may read, with each state's count and a
// search; a private project's merge requests never reach another user's
// dashboard, even their own once they lose access; anonymous visitors are
// sent to sign in; it is in the menu after Issues.
func TestMergeRequestDashboard(t *testing.T) {
	t.Parallel()
	f := newFiltersFixture(t)
	s, c := f.s, f.s.Client
	// dev opened one in "elsewhere" and had one assigned there, then lost
	// access to it.
	stocktest.AddMember(t, c, f.elsewere.ID, f.dev.ID, gitlab.DeveloperPermissions)
	for _, b := range []string{"lost1", "lost2"} {
		if _, _, err := c.Branches.CreateBranch(f.elsewere.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	openMR(t, f.dev.Client, f.elsewere.ID, "lost1", "master", "Lost mine")
	if _, _, err := c.MergeRequests.CreateMergeRequest(f.elsewere.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Lost given"),
		SourceBranch: gitlab.Ptr("lost2"), TargetBranch: gitlab.Ptr("master"), AssigneeID: gitlab.Ptr(f.dev.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ProjectMembers.DeleteProjectMember(f.elsewere.ID, f.dev.ID); err != nil {
		t.Fatal(err)
	}
	s.Call(t, s.RootToken, http.MethodPut, mrPath(f.project.ID, 2), map[string]any{"state_event": "close"}).Expect(t, 200, "")
	s.Call(t, s.RootToken, http.MethodPut, mrPath(f.project.ID, 3), map[string]any{"title": `Refactor <img src=x onerror=alert(1)>`}).Expect(t, 200, "")

	const path = "/dashboard/merge_requests"
	s.NewBrowser(t).Get(t, path).WantRedirect(t, "anonymous", http.StatusFound, "/users/sign_in?return_to=%2Fdashboard%2Fmerge_requests")
	d := s.SignedIn(t, "dev", f.dev.Password)
	created := d.Get(t, path)
	created.Want(t, "created", http.StatusOK, `aria-current="page">Created by me</a>`, `Open <span class="count">1</span>`,
		`Closed <span class="count">1</span>`, `All <span class="count">2</span>`,
		`<a href="/root/filtered"><bdi>Administrator / filtered</bdi></a> !1`,
		`<a class="label chip on-light" href="/root/filtered/-/merge_requests?label_name=bug">`)
	created.WantNot(t, "created", "Lost", "Refactor")
	for _, tc := range []struct{ query, project, want string }{
		{"", "root/filtered", "1"},
		{"?state=all", "root/filtered", "2 1"},
		{"?scope=assigned-to-me&state=all", "root/filtered", "1"},
		{"?scope=all&state=all", "root/filtered", "4 3 2 1"},
		{"?scope=all&state=closed", "root/filtered", "2"},
		{"?scope=all&state=all&search=DARK", "root/filtered", "2"},
		{"?scope=all&state=all&search=ui", "root/filtered", "2"},
		{"?scope=all&state=all", "root/elsewhere", ""},
		{"?scope=assigned-to-me&state=all", "root/elsewhere", ""},
		{"?state=all", "root/elsewhere", ""},
	} {
		p := d.Get(t, path+tc.query)
		p.Want(t, tc.query, http.StatusOK)
		if got := strings.Join(rowsOf(p.Body, tc.project), " "); got != tc.want {
			t.Errorf("%s in %s: %q, want %q", tc.query, tc.project, got, tc.want)
		}
	}
	all := d.Get(t, path+"?scope=all&state=all")
	all.Want(t, "all", http.StatusOK, `All <span class="count">4</span>`, `<bdi>Refactor &lt;img src=x onerror=alert(1)&gt;</bdi>`)
	all.WantNot(t, "all", "Lost", "Fix crash elsewhere", "<img src=x")
	// The administrator reads every project.
	root := s.SignedIn(t, "root", s.RootPassword)
	if got := strings.Join(rowsOf(root.Get(t, path+"?scope=all&state=all").Body, "root/elsewhere"), " "); got != "3 2 1" {
		t.Errorf("root's all in elsewhere: %q", got)
	}
	// Hostile searches: escaped and bounded.
	hostile := d.Get(t, path+"?scope=all&state=all&search="+url.QueryEscape(`<script>alert(1)</script>`+strings.Repeat("x", 10_000)))
	hostile.Want(t, "hostile", http.StatusOK, `value="&lt;script&gt;alert(1)&lt;/script&gt;xx`, `No merge requests match this search.`,
		`All <span class="count">0</span>`)
	hostile.WantNot(t, "hostile", "<script>alert(1)", strings.Repeat("x", 300))
	// Unknown scopes and states fall back to the defaults.
	d.Get(t, path+"?scope=bogus&state=bogus").Want(t, "bogus", http.StatusOK, `aria-current="page">Created by me</a>`,
		`aria-current="page">Open <span class="count">1</span>`)
	// In the menu, right after Issues.
	body := created.Body
	issues, mrs, todos := strings.Index(body, `href="/dashboard/issues"`), strings.Index(body, `href="/dashboard/merge_requests"`),
		strings.Index(body, `href="/dashboard/todos"`)
	if issues < 0 || mrs < issues || todos < mrs {
		t.Errorf("menu order: issues %d, merge requests %d, to-dos %d", issues, mrs, todos)
	}
}
