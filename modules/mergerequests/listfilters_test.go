package mergerequests_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// filtersFixture is a project (root's) of four merge requests:
//
//	!1 "Fix crash" (segfault in the description), by dev: bug, v1, assigned to dev
//	!2 "Add dark mode" ("ui work"), by dev: bug and ui, no milestone, no assignee
//	!3 "Refactor", by root: no label, v1, assigned to root
//	!4 "Docs", by root: ui, no milestone, no assignee
//
// and a second project whose merge request has the same label names and
// milestone title (a filter never reaches it).
type filtersFixture struct {
	s        *env
	project  *gitlab.Project
	dev      *fennectest.User
	root     int64
	elsewere *gitlab.Project
}

func newFiltersFixture(t *testing.T, opts ...fennectest.Option) *filtersFixture {
	t.Helper()
	s := start(t, opts...)
	c := s.Client
	f := &filtersFixture{s: s}
	f.dev = s.CreateUser(t, "dev")
	me, _, err := c.Users.CurrentUser()
	if err != nil {
		t.Fatal(err)
	}
	f.root = me.ID
	f.project = stocktest.NewProject(t, c, "filtered", "private")
	f.elsewere = stocktest.NewProject(t, c, "elsewhere", "private")
	stocktest.AddMember(t, c, f.project.ID, f.dev.ID, gitlab.DeveloperPermissions)
	for _, p := range []*gitlab.Project{f.project, f.elsewere} {
		if _, _, err := c.RepositoryFiles.CreateFile(p.ID, "README", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
			Content: gitlab.Ptr("x"), CommitMessage: gitlab.Ptr("init")}); err != nil {
			t.Fatal(err)
		}
		for name, color := range map[string]string{"bug": "#ff0000", "ui": "#000080"} {
			if _, _, err := c.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr(name), Color: gitlab.Ptr(color)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	v1, _, err := c.Milestones.CreateMilestone(f.project.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	otherV1, _, err := c.Milestones.CreateMilestone(f.elsewere.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	type mr struct {
		by                 *gitlab.Client
		title, description string
		labels             []string
		milestone          int64
		assignee           int64
	}
	create := func(p int64, n int, m mr) {
		b := fmt.Sprintf("b%d", n)
		if _, _, err := c.Branches.CreateBranch(p, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
		opts := &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr(m.title), Description: gitlab.Ptr(m.description),
			SourceBranch: gitlab.Ptr(b), TargetBranch: gitlab.Ptr("master")}
		if len(m.labels) > 0 {
			l := gitlab.LabelOptions(m.labels)
			opts.Labels = &l
		}
		if m.milestone != 0 {
			opts.MilestoneID = gitlab.Ptr(m.milestone)
		}
		if m.assignee != 0 {
			opts.AssigneeID = gitlab.Ptr(m.assignee)
		}
		if _, _, err := m.by.MergeRequests.CreateMergeRequest(p, opts); err != nil {
			t.Fatal(err)
		}
	}
	for n, m := range []mr{
		{f.dev.Client, "Fix crash", "A segfault in the parser", []string{"bug"}, v1.ID, f.dev.ID},
		{f.dev.Client, "Add dark mode", "ui work", []string{"bug", "ui"}, 0, 0},
		{c, "Refactor", "", nil, v1.ID, f.root},
		{c, "Docs", "", []string{"ui"}, 0, 0},
	} {
		create(f.project.ID, n+1, m)
	}
	create(f.elsewere.ID, 1, mr{c, "Fix crash elsewhere", "ui work", []string{"bug", "ui"}, otherV1.ID, f.root})
	return f
}

// list is GET /projects/:id/merge_requests through client-go: the iids.
func (f *filtersFixture) list(t *testing.T, c *gitlab.Client, opts gitlab.ListProjectMergeRequestsOptions) ([]int64, *gitlab.Response) {
	t.Helper()
	if opts.State == nil {
		opts.State = gitlab.Ptr("all")
	}
	list, resp, err := c.MergeRequests.ListProjectMergeRequests(f.project.ID, &opts)
	if err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	iids := []int64{}
	for _, m := range list {
		iids = append(iids, m.IID)
	}
	return iids, resp
}

func labels(names ...string) *gitlab.LabelOptions {
	l := gitlab.LabelOptions(names)
	return &l
}

// TestListFilters: the labels (all must match; None, Any), milestone
// (None, Any), search (title and description, any case, short and long),
// author_id and assignee_id (None, Any) filters of
// GET /projects/:id/merge_requests, alone and together, with the state,
// the order and the pages; another project's merge requests of the same
// label names never listed; bad values refused.
func TestListFilters(t *testing.T) {
	t.Parallel()
	f := newFiltersFixture(t)
	c, dev, root := f.s.Client, f.dev.ID, f.root
	for name, tc := range map[string]struct {
		opts gitlab.ListProjectMergeRequestsOptions
		want []int64
	}{
		"label bug":             {gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug")}, []int64{2, 1}},
		"labels bug and ui":     {gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug", "ui")}, []int64{2}},
		"label None":            {gitlab.ListProjectMergeRequestsOptions{Labels: labels("None")}, []int64{3}},
		"label Any":             {gitlab.ListProjectMergeRequestsOptions{Labels: labels("Any")}, []int64{4, 2, 1}},
		"label No Label":        {gitlab.ListProjectMergeRequestsOptions{Labels: labels("No Label")}, []int64{3}},
		"unknown label":         {gitlab.ListProjectMergeRequestsOptions{Labels: labels("nosuch")}, []int64{}},
		"label and unknown":     {gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug", "nosuch")}, []int64{}},
		"milestone v1":          {gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("v1")}, []int64{3, 1}},
		"milestone None":        {gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("None")}, []int64{4, 2}},
		"milestone Any":         {gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("Any")}, []int64{3, 1}},
		"unknown milestone":     {gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("v9")}, []int64{}},
		"search title any case": {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("CRASH")}, []int64{1}},
		"search description":    {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("segfault")}, []int64{1}},
		"search two letters":    {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("UI")}, []int64{2}},
		"search nothing":        {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("kangaroo")}, []int64{}},
		"search trigrams apart": {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("crash fix")}, []int64{}},
		"author dev":            {gitlab.ListProjectMergeRequestsOptions{AuthorID: gitlab.Ptr(dev)}, []int64{2, 1}},
		"author root":           {gitlab.ListProjectMergeRequestsOptions{AuthorID: gitlab.Ptr(root)}, []int64{4, 3}},
		"author nobody":         {gitlab.ListProjectMergeRequestsOptions{AuthorID: gitlab.Ptr(int64(9999))}, []int64{}},
		"assignee dev":          {gitlab.ListProjectMergeRequestsOptions{AssigneeID: gitlab.AssigneeID(dev)}, []int64{1}},
		"assignee None":         {gitlab.ListProjectMergeRequestsOptions{AssigneeID: gitlab.AssigneeID(gitlab.UserIDNone)}, []int64{4, 2}},
		"assignee Any":          {gitlab.ListProjectMergeRequestsOptions{AssigneeID: gitlab.AssigneeID(gitlab.UserIDAny)}, []int64{3, 1}},
		"bug by dev, oldest first": {gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug"), AuthorID: gitlab.Ptr(dev),
			Sort: gitlab.Ptr("asc")}, []int64{1, 2}},
		"ui, nobody assigned": {gitlab.ListProjectMergeRequestsOptions{Labels: labels("ui"), AssigneeID: gitlab.AssigneeID(gitlab.UserIDNone)},
			[]int64{4, 2}},
		"v1, no label, by root": {gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("v1"), Labels: labels("None"),
			AuthorID: gitlab.Ptr(root)}, []int64{3}},
		"search with label": {gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("work"), Labels: labels("ui")}, []int64{2}},
		"iids and label": {gitlab.ListProjectMergeRequestsOptions{IIDs: &[]int64{1, 3, 4}, Labels: labels("Any")},
			[]int64{4, 1}},
	} {
		if got, _ := f.list(t, c, tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}

	// The state goes with the filters; the pages count what they keep.
	f.s.Call(t, f.s.RootToken, http.MethodPut, mrPath(f.project.ID, 2), map[string]any{"state_event": "close"}).Expect(t, 200, "")
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug"), State: gitlab.Ptr("closed")}); !slices.Equal(got, []int64{2}) {
		t.Errorf("closed bugs: %v", got)
	}
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Labels: labels("bug"), State: gitlab.Ptr("opened")}); !slices.Equal(got, []int64{1}) {
		t.Errorf("open bugs: %v", got)
	}
	got, resp := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Labels: labels("Any"), ListOptions: gitlab.ListOptions{PerPage: 2, Page: 2}})
	if !slices.Equal(got, []int64{1}) || resp.TotalItems != 3 || resp.TotalPages != 2 {
		t.Errorf("page 2 of labelled: %v, total %d in %d pages", got, resp.TotalItems, resp.TotalPages)
	}
	// A change moves a merge request between the filters' sets.
	f.s.Call(t, f.s.RootToken, http.MethodPut, mrPath(f.project.ID, 4), map[string]any{"labels": "", "assignee_id": dev}).Expect(t, 200, "")
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Labels: labels("None")}); !slices.Equal(got, []int64{4, 3}) {
		t.Errorf("no label after the change: %v", got)
	}
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{AssigneeID: gitlab.AssigneeID(dev)}); !slices.Equal(got, []int64{4, 1}) {
		t.Errorf("assigned to dev after the change: %v", got)
	}
	// A deleted merge request leaves every filter.
	f.s.Call(t, f.s.RootToken, http.MethodDelete, mrPath(f.project.ID, 1), nil).Expect(t, 204, "")
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Search: gitlab.Ptr("crash")}); !slices.Equal(got, []int64{}) {
		t.Errorf("deleted, searched: %v", got)
	}
	if got, _ := f.list(t, c, gitlab.ListProjectMergeRequestsOptions{Milestone: gitlab.Ptr("v1")}); !slices.Equal(got, []int64{3}) {
		t.Errorf("deleted, by milestone: %v", got)
	}

	// Bad values: GitLab's 400; hostile ones answered safely.
	base := fmt.Sprintf("/api/v4/projects/%d/merge_requests", f.project.ID)
	for _, q := range []string{"?assignee_id=abc", "?assignee_id=-3", "?assignee_id=0x10"} {
		f.s.Call(t, f.s.RootToken, http.MethodGet, base+q, nil).Expect(t, 400, `{"error":"assignee_id does not have a valid value"}`)
	}
	f.s.Call(t, f.s.RootToken, http.MethodGet, base+"?author_id=abc", nil).Expect(t, 400, "")
	for _, q := range []string{"?search=" + strings.Repeat("%3Cscript%3E", 1000), "?labels=" + strings.Repeat("a,", 500) + "bug",
		"?milestone=" + strings.Repeat("m", 10_000), "?search=%00%FF"} {
		if got := f.s.Call(t, f.s.RootToken, http.MethodGet, base+q, nil).Expect(t, 200, "").IIDs(t); len(got) != 0 {
			t.Errorf("%.40s: %v", q, got)
		}
	}
	// Thousands of labels: repeated ones count once, unknown ones end
	// the lookup.
	many := make([]string, 20_000)
	for i := range many {
		many[i] = fmt.Sprintf("l%d", i)
	}
	for q, want := range map[string][]int64{
		"?labels=" + strings.Join(many, ","):        {},
		"?labels=" + strings.Repeat("bug,", 20_000): {2},
		"?labels=" + strings.Repeat("none,", 5_000): {4, 3},
	} {
		if got := f.s.Call(t, f.s.RootToken, http.MethodGet, base+q, nil).Expect(t, 200, "").IIDs(t); !slices.Equal(got, want) {
			t.Errorf("%.40s: %v, want %v", q, got, want)
		}
	}
	// Without read access, the filters answer what the list answers.
	stranger := f.s.CreateUser(t, "stranger")
	f.s.Call(t, stranger.Token, http.MethodGet, base+"?labels=bug", nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
}
