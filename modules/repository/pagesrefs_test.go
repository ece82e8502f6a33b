package repository_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestReleasePagesTagNotesPagedAndPrivate: GitLab 9.x's releases are a
// tag's release notes (POST /repository/tags/:tag/release, or the tag's
// release_description): those are what the page lists, 20 a page with a
// pager, while a tag without notes is no release. On a private project a
// non-member gets the 404 page and a Reporter the notes.
func TestReleasePagesTagNotesPagedAndPrivate(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "notes", "private")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "first", map[string]string{"a": "a\n"})
	tags := fmt.Sprintf("/api/v4/projects/%d/repository/tags", p.ID)
	for i := 1; i <= 21; i++ {
		s.Call(t, s.RootToken, "POST", tags, map[string]string{"tag_name": fmt.Sprintf("v1.%02d", i), "ref": "master",
			"release_description": fmt.Sprintf("Notes of *1.%02d*", i)}).Expect(t, 201, "")
	}
	s.Call(t, s.RootToken, "POST", tags, map[string]string{"tag_name": "bare<b>", "ref": "master"}).Expect(t, 201, "")
	s.Call(t, s.RootToken, "POST", tags, map[string]string{"tag_name": "late", "ref": "master"}).Expect(t, 201, "")
	s.Call(t, s.RootToken, "POST", tags+"/late/release", map[string]string{"description": "Added **later**"}).Expect(t, 201, "")

	rep := s.CreateUser(t, "rep")
	stranger := s.CreateUser(t, "stranger")
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	b := s.SignedIn(t, "rep", rep.Password)
	one := b.Get(t, "/root/notes/-/releases")
	wantPage(t, "page 1", one, 200, `<p>Added <strong>later</strong></p>`, `<p>Notes of <em>1.21</em></p>`,
		`<a href="/root/notes/-/tree/late"><bdi>late</bdi></a>`,
		`<a href="/root/notes/-/releases?page=2" rel="next">Next</a>`, `<span>Page 1 of 2</span>`)
	if n := strings.Count(one.Body, `<article class="box release"`); n != 20 {
		t.Errorf("page 1 has %d releases, want 20", n)
	}
	if strings.Contains(one.Body, "bare") {
		t.Error("a tag without notes is listed as a release")
	}
	two := b.Get(t, "/root/notes/-/releases?page=2")
	wantPage(t, "page 2", two, 200, `<a href="/root/notes/-/releases?page=1" rel="prev">Previous</a>`, `<span>Page 2 of 2</span>`)
	if n := strings.Count(two.Body, `<article class="box release"`); n != 2 {
		t.Errorf("page 2 has %d releases, want 2 (22 in all)", n)
	}
	wantPage(t, "one tag's notes", b.Get(t, "/root/notes/-/releases/late"), 200, `<h1 id="release-1"><bdi>late</bdi></h1>`)
	wantPage(t, "a tag without notes", b.Get(t, "/root/notes/-/releases/bare%3Cb%3E"), 404)

	for _, path := range []string{"/root/notes/-/releases", "/root/notes/-/releases/late"} {
		page := s.SignedIn(t, "stranger", stranger.Password).Get(t, path)
		wantPage(t, "non-member "+path, page, 404)
		if strings.Contains(page.Body, "later") {
			t.Errorf("a non-member sees the notes of %s", path)
		}
	}
}

// TestBranchPagesOutsiders: a non-member of a private project gets the
// 404 page for the branches and for a delete (the branch stays); an
// anonymous visitor is sent to sign in; on a public project a signed-in
// non-member sees the branches without Delete, and a post of the form
// with his own valid token is refused with the 403 page, changing nothing.
func TestBranchPagesOutsiders(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	stranger := s.CreateUser(t, "stranger")
	for _, vis := range []string{"private", "public"} {
		p := stocktest.NewProject(t, s.Client, vis, vis)
		stocktest.CommitFiles(t, s.Client, p.ID, "master", "base", map[string]string{"a": "a\n"})
		if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	b := s.SignedIn(t, "stranger", stranger.Password)
	token := b.Get(t, "/").CSRF() // the visitor's own, valid token
	if token == "" {
		t.Fatal("no CSRF token on the dashboard")
	}
	wantPage(t, "non-member's private branches", b.Get(t, "/root/private/-/branches"), 404)
	wantPage(t, "non-member's private delete", b.Post(t, "/root/private/-/branches", url.Values{"authenticity_token": {token}, "branch": {"topic"}}), 404)

	anon := s.NewBrowser(t)
	a := anon.Get(t, "/root/private/-/branches")
	if a.StatusCode != http.StatusFound || !strings.HasPrefix(a.Header.Get("Location"), "/users/sign_in") {
		t.Errorf("anonymous private branches: %d %q", a.StatusCode, a.Header.Get("Location"))
	}

	pub := b.Get(t, "/root/public/-/branches")
	wantPage(t, "non-member's public branches", pub, 200, `<bdi>topic</bdi>`)
	if strings.Contains(pub.Body, "Delete branch") {
		t.Error("a non-member is offered Delete")
	}
	wantPage(t, "non-member's public delete", b.Post(t, "/root/public/-/branches", url.Values{"authenticity_token": {pub.CSRF()}, "branch": {"topic"}}), 403)
	wantPage(t, "anonymous delete", anon.Post(t, "/root/public/-/branches", url.Values{"branch": {"topic"}}), 403)
	for _, path := range []string{"private", "public"} {
		if _, resp, err := s.Client.Branches.GetBranch("root/"+path, "topic"); err != nil || resp.StatusCode != 200 {
			t.Errorf("root/%s's topic was deleted by an outsider", path)
		}
	}
}
