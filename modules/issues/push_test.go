package issues_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// git runs the git CLI in dir with a clean environment of its own.
func git(t *testing.T, home, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=T",
		"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "NO_PROXY=*", "no_proxy=*")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestClosingByCommits(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "closer", "public")
	other := stocktest.NewProject(t, alice.Client, "other", "public")
	hidden := stocktest.NewProject(t, alice.Client, "hidden", "private")
	third := stocktest.NewProject(t, alice.Client, "third", "public")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, other.ID, bob.ID, gitlab.ReporterPermissions)
	for i := 1; i <= 6; i++ {
		newIssue(t, alice.Client, p.ID, "issue")
	}
	newIssue(t, alice.Client, other.ID, "elsewhere")
	newIssue(t, alice.Client, hidden.ID, "private one")
	newIssue(t, alice.Client, third.ID, "bob may read but not close it")
	state := func(project, iid int64) string {
		t.Helper()
		return s.Call(t, s.RootToken, http.MethodGet, issuePath(project, iid), nil).Expect(t, 200, "").Object(t)["state"].(string)
	}

	// A multi-file commit through the API creates master (the default
	// branch) and closes #1.
	_, _, err := alice.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("Add two files\n\nFixes #1"), Actions: []*gitlab.CommitActionOptions{
			{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("a")},
			{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("b/c.txt"), Content: gitlab.Ptr("c")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	if got := state(p.ID, 1); got != "closed" {
		t.Fatalf("#1 is %s after a commit that fixes it", got)
	}

	// bob pushes with the git CLI: one commit closes #2, #3 and another
	// project's issue, references #4, and names a private project's issue
	// he cannot see; a commit on a feature branch says it fixes #5.
	home := t.TempDir()
	u, _ := url.Parse(s.URL)
	remote := "http://bob:" + bob.Token + "@" + u.Host + "/alice/closer.git"
	work := filepath.Join(t.TempDir(), "w")
	git(t, home, t.TempDir(), "clone", "-q", remote, work)
	if err := os.WriteFile(filepath.Join(work, "d.txt"), []byte("d"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, home, work, "add", ".")
	git(t, home, work, "commit", "-q", "-m", "Work\n\ncloses #2 and #3, Resolves alice/other#1, third#1 and alice/hidden#1; see #4")
	sha := git(t, home, work, "rev-parse", "HEAD")
	git(t, home, work, "checkout", "-q", "-b", "feature")
	git(t, home, work, "commit", "-q", "--allow-empty", "-m", "fixes #5")
	git(t, home, work, "push", "-q", "origin", "master", "feature")
	s.Drain(t)
	for iid, want := range map[int64]string{2: "closed", 3: "closed", 4: "opened", 5: "opened", 6: "opened"} {
		if got := state(p.ID, iid); got != want {
			t.Errorf("#%d is %s, want %s", iid, got, want)
		}
	}
	if got := state(other.ID, 1); got != "closed" {
		t.Errorf("alice/other#1 is %s, want closed", got)
	}
	if got := state(third.ID, 1); got != "opened" {
		t.Errorf("alice/third#1 (the pusher may not update it) is %s, want opened", got)
	}
	if got := state(hidden.ID, 1); got != "opened" {
		t.Errorf("alice/hidden#1 (the pusher cannot see it) is %s, want opened", got)
	}

	t.Run("system notes name the commit", func(t *testing.T) {
		system, _ := notesOf(t, alice.Client, p.ID, 3)
		if len(system) != 1 || system[0] != "closed via commit "+sha {
			t.Fatalf("#3 notes %q", system)
		}
		system, _ = notesOf(t, alice.Client, p.ID, 4)
		if len(system) != 1 || system[0] != "mentioned in commit "+sha[:8] {
			t.Fatalf("#4 notes %q", system)
		}
		system, _ = notesOf(t, alice.Client, other.ID, 1)
		if len(system) != 1 || system[0] != "closed via commit alice/closer@"+sha {
			t.Fatalf("other#1 notes %q", system)
		}
	})

	t.Run("a redelivered push closes nothing twice", func(t *testing.T) {
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 2, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen")}); err != nil {
			t.Fatal(err)
		}
		ev := repository.PushEvent{ObjectKind: repository.BranchPush, ProjectID: p.ID, UserID: bob.ID, Ref: "refs/heads/master",
			Before: strings.Repeat("1", 40), After: sha, Commits: []repository.PushCommit{{ID: sha, Message: "closes #2 and #3"}}}
		if err := s.db.Update(context.Background(), func(tx *store.Tx) error { return s.bus.Publish(tx, ev) }); err != nil {
			t.Fatal(err)
		}
		s.Drain(t)
		if got := state(p.ID, 2); got != "reopened" {
			t.Fatalf("#2 is %s after the same commit came again", got)
		}
	})

	t.Run("merging the feature branch into the default branch closes #5", func(t *testing.T) {
		git(t, home, work, "checkout", "-q", "master")
		git(t, home, work, "merge", "-q", "--ff-only", "feature")
		git(t, home, work, "push", "-q", "origin", "master")
		s.Drain(t)
		if got := state(p.ID, 5); got != "closed" {
			t.Fatalf("#5 is %s", got)
		}
	})

	t.Run("a push of 25 commits: the oldest, beyond the event's 20, closes too", func(t *testing.T) {
		git(t, home, work, "commit", "-q", "--allow-empty", "-m", "Resolving #6")
		for k := 0; k < 24; k++ {
			git(t, home, work, "commit", "-q", "--allow-empty", "-m", "filler")
		}
		git(t, home, work, "push", "-q", "origin", "master")
		s.Drain(t)
		if got := state(p.ID, 6); got != "closed" {
			t.Fatalf("#6 is %s", got)
		}
	})
}
