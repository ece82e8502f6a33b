package repository_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestBranchPagesDivergenceAndDelete: the branches page counts each
// branch's commits behind and ahead of the default branch, and offers a
// Delete button exactly where DELETE /repository/branches/:branch would
// succeed (push access; not the default branch, not a protected one).
// The form deletes through the same service; a Reporter's forged post, a
// protected branch's and a missing token's change nothing.
func TestBranchPagesDivergenceAndDelete(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	dev := s.CreateUser(t, "dev")
	rep := s.CreateUser(t, "rep")
	p := stocktest.NewProject(t, s.Client, "forks", "private")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "base", map[string]string{"a": "a\n"})
	for _, b := range []string{"topic", "keep/me"} {
		if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Client.ProtectedBranches.ProtectRepositoryBranches(p.ID, &gitlab.ProtectRepositoryBranchesOptions{Name: gitlab.Ptr("keep/*")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, s.Client, p.ID, "topic", "t1", map[string]string{"t": "1\n"})
	stocktest.CommitFiles(t, s.Client, p.ID, "topic", "t2", map[string]string{"t": "2\n"})
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "m1", map[string]string{"m": "1\n"})

	d := s.SignedIn(t, "dev", dev.Password)
	page := d.Get(t, "/root/forks/-/branches")
	wantPage(t, "developer's branches", page, 200, `<span class="divergence">1 behind · 2 ahead</span>`,
		`<span class="divergence">1 behind · 0 ahead</span>`, `<input type="hidden" name="branch" value="topic">`,
		`aria-label="Delete branch topic"`)
	for _, f := range []string{`aria-label="Delete branch master"`, `aria-label="Delete branch keep/me"`} {
		if strings.Contains(page.Body, f) {
			t.Errorf("developer's branches offer %s", f)
		}
	}
	r := s.SignedIn(t, "rep", rep.Password)
	rp := r.Get(t, "/root/forks/-/branches")
	if strings.Contains(rp.Body, "Delete branch") {
		t.Error("a Reporter is offered Delete")
	}
	wantPage(t, "reporter's forged delete", r.Post(t, "/root/forks/-/branches", url.Values{"authenticity_token": {rp.CSRF()}, "branch": {"topic"}}), 403)
	wantPage(t, "protected", d.Post(t, "/root/forks/-/branches", url.Values{"authenticity_token": {page.CSRF()}, "branch": {"keep/me"}}), 403,
		"Protected branch cant be removed.")
	wantPage(t, "default", d.Post(t, "/root/forks/-/branches", url.Values{"authenticity_token": {page.CSRF()}, "branch": {"master"}}), 403,
		"Cannot remove HEAD branch.")
	wantPage(t, "no token", d.Post(t, "/root/forks/-/branches", url.Values{"branch": {"topic"}}), 403)
	wantPage(t, "missing", d.Post(t, "/root/forks/-/branches", url.Values{"authenticity_token": {page.CSRF()}, "branch": {"nope"}}), 404)
	if bs, _, _ := s.Client.Branches.ListBranches(p.ID, nil); len(bs) != 3 {
		t.Fatalf("refused deletes removed a branch: %d left", len(bs))
	}
	done := d.Post(t, "/root/forks/-/branches", url.Values{"authenticity_token": {page.CSRF()}, "branch": {"topic"}})
	if done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != "/root/forks/-/branches" {
		t.Fatalf("delete: %d %q", done.StatusCode, done.Header.Get("Location"))
	}
	if _, resp, _ := s.Client.Branches.GetBranch(p.ID, "topic"); resp == nil || resp.StatusCode != 404 {
		t.Fatal("the branch is still there")
	}
}
