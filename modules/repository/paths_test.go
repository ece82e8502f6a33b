package repository_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
)

// hostilePaths are file paths git refuses to check out (hasDotgit and its
// HFS+ and NTFS disguises), paths with control characters, and traversals.
var hostilePaths = []string{
	".git/config", ".GIT/config", ".Git/hooks/pre-commit", "a/.git/hooks/post-checkout", "a/.git", ".git",
	"git~1/config", "GIT~1/hooks/x", ".git./config", ".git /config", ".git . ./config", "a/.git.",
	".git::$INDEX_ALLOCATION/config", ".git:stream", `a\.git\config`, `.GIT\hooks`, `a\..\b`,
	".g\u200cit/config", "\u200d.git/config", ".git\u200e/config", ".gi\u200ft/x", ".gi\u202at/x", ".gi\u202et/x",
	".gi\u206at/x", ".gi\u206ft/x", "\ufeff.git/x", ".G\u200cIT/x",
	"a\x01b", "a\nb", "a\tb", "x\x7f", "dir/\x1b[31mred",
	"../etc/x", "a/../b", "./a", "a//b",
}

// The commit and files APIs refuse every hostile path, in file_path and in
// a move's previous_path, with a 400 and nothing written; ordinary names
// close to them still work, and the result passes git fsck --strict.
func TestHostilePathsRefused(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	base := "/api/v4/projects/" + store.IDString(w.project.ID) + "/repository"
	send := func(method, path string, body any) (int, string) {
		t.Helper()
		raw, _ := json.Marshal(body)
		r, out := w.s.JSON(t, method, base+path, strings.NewReader(string(raw)), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		var msg struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(out, &msg)
		if msg.Message == "" {
			msg.Message = string(out)
		}
		return r.StatusCode, msg.Message
	}
	before := refsOf(t, w.bare)
	for _, p := range hostilePaths {
		want := "Invalid file path: " + p
		checks := []struct {
			what, method, path string
			body               any
			want               string
		}{
			{"commits create", http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "m",
				"actions": []map[string]string{{"action": "create", "file_path": p, "content": "x"}}}, want},
			{"commits update", http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "m",
				"actions": []map[string]string{{"action": "update", "file_path": p, "content": "x"}}}, want},
			{"commits move to", http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "m",
				"actions": []map[string]string{{"action": "move", "file_path": p, "previous_path": "README.md"}}}, want},
			{"commits move from", http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "m",
				"actions": []map[string]string{{"action": "move", "file_path": "moved.md", "previous_path": p}}}, "Invalid previous path: " + p},
			{"commits, second action", http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "m",
				"actions": []map[string]string{{"action": "create", "file_path": "fine.txt", "content": "x"}, {"action": "create", "file_path": p, "content": "x"}}}, want},
			{"files create", http.MethodPost, "/files/" + url.PathEscape(p), map[string]any{"branch": "master", "commit_message": "m", "content": "x"}, want},
			{"files update", http.MethodPut, "/files/" + url.PathEscape(p), map[string]any{"branch": "master", "commit_message": "m", "content": "x"}, want},
			{"files delete", http.MethodDelete, "/files/" + url.PathEscape(p), map[string]any{"branch": "master", "commit_message": "m"}, want},
		}
		for _, c := range checks {
			if status, msg := send(c.method, c.path, c.body); status != 400 || msg != c.want {
				t.Errorf("%s %q: %d %q, want 400 %q", c.what, p, status, msg, c.want)
			}
		}
	}
	if after := refsOf(t, w.bare); after != before {
		t.Fatalf("refused writes moved refs:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Near misses are ordinary names.
	var actions []map[string]string
	for _, p := range []string{".gitignore", ".github/workflows/x.yml", ".gitmodules.txt", "git~2/x", ".git-x", "a.git/x", ".gitx",
		"gitx", "b/.git-keep", "héllo wörld.txt", "a:b", "é.git/x", ".git~1"} {
		actions = append(actions, map[string]string{"action": "create", "file_path": p, "content": "x"})
	}
	if status, msg := send(http.MethodPost, "/commits", map[string]any{"branch": "master", "commit_message": "near misses", "actions": actions}); status != 201 {
		t.Fatalf("near misses: %d %s", status, msg)
	}
	gitCmd(t, w.bare, "fsck", "--strict")
}

// dotGitCommit builds, with git plumbing in dir, a commit on top of parent
// whose tree holds an entry named name (a directory with a config file in
// it), and returns the commit and that tree.
func dotGitCommit(t *testing.T, c *gitCLI, dir, parent, name string) (commit, tree string) {
	t.Helper()
	run := func(stdin string, args ...string) string {
		t.Helper()
		o, e, err := c.try(t, dir, []byte(stdin), args...)
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, e)
		}
		return strings.TrimSpace(o)
	}
	blob := run("[core]\n\tfsmonitor = touch /tmp/pwned\n", "hash-object", "-w", "--stdin")
	inner := run(fmt.Sprintf("100644 blob %s\tconfig\n", blob), "mktree")
	readme := run("hello\n", "hash-object", "-w", "--stdin")
	tree = run(fmt.Sprintf("040000 tree %s\t%s\n100644 blob %s\tREADME.md\n", inner, name, readme), "mktree")
	args := []string{"commit-tree", tree, "-m", "sneaky " + name}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return run("", args...), tree
}

// receive-pack checks the trees of a push (receive_fsck_objects, on by
// default): a tree with a .git entry, in any disguise, is refused with
// git's fsck message, and its objects are not kept even when no pushed ref
// reaches them. With the setting off, such a push is taken.
func TestPushFsckRefusesDotGit(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	p := g.project(t, "fsck", gitlab.PublicVisibility)
	work := c.newWork(t)
	head := c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master")
	bare := g.bare(p)
	before := refsOf(t, bare)
	for i, name := range []string{".git", ".GIT", "git~1", ".git.", ".git::$INDEX_ALLOCATION", ".g\u200cit", "..", "."} {
		commit, tree := dotGitCommit(t, c, work, head, name)
		if name == "." || name == ".." {
			// git mktree itself may refuse these; skip when it did not make them
			if o, _, err := c.try(t, work, nil, "ls-tree", tree); err != nil || !strings.Contains(o, "\t"+name+"\n") {
				continue
			}
		}
		dst := fmt.Sprintf("refs/heads/evil-%d", i)
		stderr := c.fail(t, work, "push", g.rootURL(p), commit+":"+dst)
		if !strings.Contains(stderr, "[remote rejected]") || !strings.Contains(stderr, "fsck error: ") {
			t.Errorf("push of a tree with %q: git should show [remote rejected] (fsck error: ...):\n%s", name, stderr)
		}
		if name != "." && name != ".." && !strings.Contains(stderr, "hasDotgit") {
			t.Errorf("push of a tree with %q: the refusal does not name hasDotgit:\n%s", name, stderr)
		}
		if exec.Command("git", "-C", bare, "cat-file", "-e", tree).Run() == nil {
			t.Errorf("the refused tree %s (%q) was kept", tree, name)
		}
	}
	if after := refsOf(t, bare); after != before {
		t.Fatalf("refused pushes moved refs:\nbefore\n%s\nafter\n%s", before, after)
	}

	// A bad tree no pushed ref reaches, sent along with a good commit.
	good := c.commit(t, work, "good", map[string]string{"b.txt": "2\n"})
	_, badTree := dotGitCommit(t, c, work, "", ".git")
	objects := c.ok(t, work, "rev-list", "--objects", good, "^"+head)
	var list []string
	for _, l := range strings.Split(objects, "\n") {
		id, _, _ := strings.Cut(l, " ")
		list = append(list, id)
	}
	pack := packObjects(t, c, work, "", strings.Join(append(list, badTree), "\n")+"\n")
	r := g.raw(t, http.MethodPost, "/"+p.PathWithNamespace+".git/git-receive-pack", "root", g.RootToken,
		strings.NewReader(string(receive(pack, zeroSHA+" "+good+" refs/heads/sneaky"))),
		"Content-Type", "application/x-git-receive-pack-request")
	if r.status != 200 || !strings.Contains(string(r.body), "ng refs/heads/sneaky fsck error: hasDotgit: contains '.git'") {
		t.Errorf("a pack with an unreferenced bad tree: %d %q", r.status, clip(r.body))
	}
	if exec.Command("git", "-C", bare, "cat-file", "-e", badTree).Run() == nil || refOf(t, bare, "refs/heads/sneaky") != "" {
		t.Errorf("the pack with a bad tree was kept")
	}
	fsck(t, bare)

	// Turned off, the setting lets such history in (to import it as it is).
	off := startGit(t, fennectest.WithModuleConfig(repository.SectionName, func(c *repository.Config) { c.ReceiveFsckObjects = false }))
	q := off.project(t, "lenient", gitlab.PublicVisibility)
	off.seed(t, q, work, "master")
	commit, _ := dotGitCommit(t, off.cli, work, head, ".git")
	off.cli.ok(t, work, "push", "-q", off.rootURL(q), commit+":refs/heads/taken")
	if got := refOf(t, off.bare(q), "refs/heads/taken"); got != commit {
		t.Fatalf("with receive_fsck_objects off the push was not taken: %q", got)
	}
}
