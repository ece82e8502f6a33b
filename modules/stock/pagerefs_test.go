package stock_test

import (
	"fmt"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestPagesLinkReferencesTheViewerMaySee: the references in a README
// (#12, !3, $4, @name, group/project#12, a commit id) are answered by the
// modules that own them, with the API's permissions for the visitor: what
// the visitor may see is a link titled as the API would show it, anything
// else (a confidential issue, a private project's issue, an unknown user
// or number) stays text and leaks no title.
func TestPagesLinkReferencesTheViewerMaySee(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	pub := stocktest.NewProject(t, s.Client, "notes", "public")
	priv := stocktest.NewProject(t, s.Client, "secret", "private")
	stocktest.NewIssue(t, s.Client, int64(pub.ID), `Visible "issue" <b>`)
	if _, _, err := s.Client.Issues.CreateIssue(pub.ID, &gitlab.CreateIssueOptions{
		Title: gitlab.Ptr("Secret plan"), Confidential: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	stocktest.NewIssue(t, s.Client, int64(priv.ID), "Private matter")
	base := stocktest.CommitFiles(t, s.Client, int64(pub.ID), "master", "start", map[string]string{"a.txt": "a\n"})
	if _, _, err := s.Client.Branches.CreateBranch(pub.ID, &gitlab.CreateBranchOptions{
		Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, s.Client, int64(pub.ID), "feature", "more", map[string]string{"b.txt": "b\n"})
	stocktest.OpenMergeRequest(t, s.Client, int64(pub.ID), "feature", "master", "Add b")
	if _, _, err := s.Client.ProjectSnippets.CreateSnippet(pub.ID, &gitlab.CreateProjectSnippetOptions{
		Title: gitlab.Ptr("Handy"), FileName: gitlab.Ptr("h.sh"), Content: gitlab.Ptr("echo\n"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)}); err != nil {
		t.Fatal(err)
	}
	short := base.ID[:8]
	stocktest.CommitFiles(t, s.Client, int64(pub.ID), "master", "readme", map[string]string{
		"README.md": fmt.Sprintf("See #1, #2, #99, !1, $1, @alice, @nobody, root/secret#1 and %s.\n", short)})

	link := func(href, title, text, class string) string {
		return fmt.Sprintf(`<a href="%s%s" title="%s" class="gfm gfm-%s" rel="nofollow noreferrer">%s</a>`, s.URL, href, title, class, text)
	}
	always := []string{
		link("/root/notes/-/issues/1", "Visible &#34;issue&#34; &lt;b&gt;", "#1", "issue"),
		link("/root/notes/-/merge_requests/1", "Add b", "!1", "merge_request"),
		link("/root/notes/-/snippets/1", "Handy", "$1", "snippet"),
		link("/alice", "User "+alice.Username, "@alice", "project_member"),
		link("/root/notes/-/commit/"+short, "start", short, "commit"),
	}
	forRoot := []string{
		link("/root/notes/-/issues/2", "Secret plan", "#2", "issue"),
		link("/root/secret/-/issues/1", "Private matter", "root/secret#1", "issue"),
	}

	anon := s.NewBrowser(t).Get(t, "/root/notes")
	if anon.StatusCode != 200 {
		t.Fatalf("anonymous: %d", anon.StatusCode)
	}
	for _, f := range always {
		if !strings.Contains(anon.Body, f) {
			t.Errorf("anonymous: lacks %s", f)
		}
	}
	for _, leak := range []string{"Secret plan", "Private matter", `/issues/99"`, `href="` + s.URL + `/nobody"`, "/root/secret/"} {
		if strings.Contains(anon.Body, leak) {
			t.Errorf("anonymous: the page shows %q", leak)
		}
	}
	if !strings.Contains(anon.Body, "#2, #99, ") || !strings.Contains(anon.Body, "@nobody, root/secret#1 and") {
		t.Errorf("anonymous: the hidden references are not kept as text")
	}

	root := s.SignedIn(t, "root", s.RootPassword).Get(t, "/root/notes")
	for _, f := range append(always, forRoot...) {
		if !strings.Contains(root.Body, f) {
			t.Errorf("root: lacks %s", f)
		}
	}
}
