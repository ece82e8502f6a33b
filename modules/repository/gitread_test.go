package repository_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestGitRead drives the public read surface the modules above use, on a
// repository written through the API, as the system and as users.
func TestGitRead(t *testing.T) {
	t.Parallel()
	var rd gitread.Reader
	var users auth.UserLookup
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&rd, &users, &repos))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("src"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	for i, files := range [][]*gitlab.CommitActionOptions{
		{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("README.md"), Content: gitlab.Ptr("hello\n")},
			{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("docs/a.txt"), Content: gitlab.Ptr("a")}},
		{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("docs/b.txt"), Content: gitlab.Ptr(strings.Repeat("b", 100))}},
		{{Action: gitlab.Ptr(gitlab.FileUpdate), FilePath: gitlab.Ptr("README.md"), Content: gitlab.Ptr("hello again\n")}},
	} {
		c, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("main"),
			CommitMessage: gitlab.Ptr("step " + strconv.Itoa(i) + "\n\nbody"), Actions: files})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, c.ID)
	}
	if _, _, err := s.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr(shas[1]), Message: gitlab.Ptr("first release")}); err != nil {
		t.Fatal(err)
	}
	id := int64(p.ID)
	sys := auth.WithPrincipal(context.Background(), auth.System())

	t.Run("resolve and commit", func(t *testing.T) {
		for rev, want := range map[string]string{"": shas[2], "main": shas[2], "v1": shas[1], shas[0][:8]: shas[0], "refs/heads/main": shas[2]} {
			if got, err := rd.Resolve(sys, id, rev); err != nil || got != want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", rev, got, err, want)
			}
		}
		c, err := rd.Commit(sys, id, "main")
		if err != nil || c.Title() != "step 2" || c.Message != "step 2\n\nbody" || len(c.ParentIDs) != 1 || c.ParentIDs[0] != shas[1] || c.Author.Email == "" || c.Committer.When.IsZero() {
			t.Fatalf("Commit %+v %v", c, err)
		}
		for _, rev := range []string{"nope", "0000000000000000000000000000000000000000", "..", "main~1"} {
			if _, err := rd.Resolve(sys, id, rev); !errors.Is(err, gitread.ErrRevisionNotFound) {
				t.Errorf("Resolve(%q): %v, want ErrRevisionNotFound", rev, err)
			}
		}
	})

	t.Run("file", func(t *testing.T) {
		if b, err := rd.File(sys, id, "v1", "README.md", 0); err != nil || string(b) != "hello\n" {
			t.Fatalf("README at v1: %q %v", b, err)
		}
		if b, err := rd.File(sys, id, "", "/docs/b.txt", 100); err != nil || len(b) != 100 {
			t.Fatalf("b.txt at its limit: %d %v", len(b), err)
		}
		if _, err := rd.File(sys, id, "", "docs/b.txt", 99); !errors.Is(err, gitread.ErrTooLarge) {
			t.Fatalf("over the limit: %v", err)
		}
		for _, bad := range []string{"", "docs", "missing", "../README.md", "docs/../README.md", "docs//a.txt"} {
			if _, err := rd.File(sys, id, "", bad, 0); !errors.Is(err, gitread.ErrPathNotFound) {
				t.Errorf("File(%q): %v, want ErrPathNotFound", bad, err)
			}
		}
	})

	t.Run("tree", func(t *testing.T) {
		root, err := rd.Tree(sys, id, "", "", 0, 0)
		if err != nil || len(root) != 2 || root[0] != (gitread.TreeEntry{ID: root[0].ID, Name: "README.md", Path: "README.md", Type: gitread.Blob, Mode: "100644"}) ||
			root[1].Name != "docs" || root[1].Type != gitread.Tree || root[1].Mode != "040000" {
			t.Fatalf("root %+v %v", root, err)
		}
		page, err := rd.Tree(sys, id, "", "docs", 1, 1)
		if err != nil || len(page) != 1 || page[0].Path != "docs/b.txt" {
			t.Fatalf("second page of docs %+v %v", page, err)
		}
		if page, err := rd.Tree(sys, id, "", "docs", 5, 1); err != nil || len(page) != 0 {
			t.Fatalf("past the end %+v %v", page, err)
		}
		if _, err := rd.Tree(sys, id, "", "README.md", 0, 0); !errors.Is(err, gitread.ErrPathNotFound) {
			t.Fatalf("a file as a tree: %v", err)
		}
	})

	t.Run("log", func(t *testing.T) {
		var got []string
		err := rd.Log(sys, id, gitread.LogQuery{From: []string{shas[2]}, Stop: []string{shas[0]}}, func(c gitread.Commit) bool {
			got = append(got, c.ID)
			return true
		})
		if err != nil || strings.Join(got, ",") != shas[2]+","+shas[1] {
			t.Fatalf("log %v %v", got, err)
		}
		got = nil
		err = rd.Log(sys, id, gitread.LogQuery{From: []string{shas[2]}, Limit: 2}, func(c gitread.Commit) bool { got = append(got, c.ID); return true })
		if err != nil || len(got) != 2 {
			t.Fatalf("limited log %v %v", got, err)
		}
		got = nil
		err = rd.Log(sys, id, gitread.LogQuery{From: []string{shas[2]}}, func(c gitread.Commit) bool { got = append(got, c.ID); return false })
		if err != nil || len(got) != 1 {
			t.Fatalf("stopped log %v %v", got, err)
		}
		if err := rd.Log(sys, id, gitread.LogQuery{From: []string{"main"}}, func(gitread.Commit) bool { return true }); !errors.Is(err, gitread.ErrRevisionNotFound) {
			t.Fatalf("log from a name: %v", err)
		}
	})

	t.Run("annotated tag", func(t *testing.T) {
		// The tag object's id, as the repository on disk has it.
		out, err := exec.Command("git", "--git-dir="+repos.Path(id), "rev-parse", "refs/tags/v1").Output()
		tagObject := strings.TrimSpace(string(out))
		if err != nil || tagObject == shas[1] {
			t.Fatalf("rev-parse v1: %q %v", out, err)
		}
		got, err := rd.AnnotatedTag(sys, id, tagObject)
		if err != nil || got.Name != "v1" || got.Message != "first release\n" || got.CommitID != shas[1] {
			t.Fatalf("AnnotatedTag %+v %v", got, err)
		}
		if _, err := rd.AnnotatedTag(sys, id, shas[1]); !errors.Is(err, gitread.ErrNotAnnotatedTag) {
			t.Fatalf("a commit as a tag: %v", err)
		}
	})

	t.Run("permissions", func(t *testing.T) {
		guest := s.CreateUser(t, "")
		if _, _, err := s.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: guest.ID, AccessLevel: gitlab.Ptr(gitlab.GuestPermissions)}); err != nil {
			t.Fatal(err)
		}
		stranger := s.CreateUser(t, "")
		as := func(uid int64) context.Context {
			u, err := users.LookupUser(context.Background(), strconv.FormatInt(uid, 10))
			if err != nil {
				t.Fatal(err)
			}
			pr, err := auth.ForUser(u)
			if err != nil {
				t.Fatal(err)
			}
			return auth.WithPrincipal(context.Background(), pr)
		}
		if _, err := rd.Commit(as(guest.ID), id, "main"); !errors.Is(err, projects.ErrForbidden) {
			t.Fatalf("a Guest reads a private project's code: %v", err)
		}
		if _, err := rd.File(as(stranger.ID), id, "main", "README.md", 0); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("a stranger: %v", err)
		}
		if _, err := rd.Commit(context.Background(), id, "main"); !errors.Is(err, projects.ErrNotFound) {
			t.Fatalf("anonymous: %v", err)
		}
	})
}
