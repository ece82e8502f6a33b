package gitserve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// richRepo builds a bare repository with merges, a gitlink, a symlink,
// an executable, an orphan branch, commits whose dates go backwards
// (clock skew), annotated and lightweight tags, and a tag of a blob.
func richRepo(t *testing.T, c *gitClient) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	c.run(filepath.Dir(work), "init", "-q", "-b", "main", work)
	date := 1500000000
	commit := func(msg string, files map[string]string) {
		t.Helper()
		for name, content := range files {
			p := filepath.Join(work, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c.run(work, "add", "-A")
		cmd := c.cmd(work, "commit", "-q", "--allow-empty", "-m", msg)
		d := fmt.Sprintf("@%d +0000", date)
		cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("commit: %v\n%s", err, out)
		}
		date += 3600
	}
	for i := 0; i < 12; i++ {
		commit(fmt.Sprintf("main %d", i), map[string]string{
			fmt.Sprintf("dir%d/file.txt", i%3): fmt.Sprintf("main %d\n", i),
			"top.txt":                          fmt.Sprintf("top %d\n", i),
		})
	}
	// A gitlink, a symlink, an executable.
	c.run(work, "update-index", "--add", "--cacheinfo", "160000,0123456789abcdef0123456789abcdef01234567,vendor/sub")
	if err := os.Symlink("top.txt", filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit("special entries", nil)
	// Two branches that fork and merge, twice.
	for round := 0; round < 2; round++ {
		c.run(work, "checkout", "-q", "-b", fmt.Sprintf("feature%d", round))
		for i := 0; i < 6; i++ {
			commit(fmt.Sprintf("feature %d.%d", round, i), map[string]string{fmt.Sprintf("feature%d/f%d.txt", round, i): "x\n"})
		}
		c.run(work, "checkout", "-q", "main")
		for i := 0; i < 4; i++ {
			commit(fmt.Sprintf("main after %d.%d", round, i), map[string]string{"dir1/file.txt": fmt.Sprintf("after %d %d\n", round, i)})
		}
		cmd := c.cmd(work, "merge", "-q", "--no-ff", "-m", "merge", fmt.Sprintf("feature%d", round))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("merge: %v\n%s", err, out)
		}
	}
	// Clock skew: commits dated before their parents.
	date -= 200 * 3600
	for i := 0; i < 5; i++ {
		commit(fmt.Sprintf("skewed %d", i), map[string]string{"skew.txt": fmt.Sprint(i)})
	}
	date += 400 * 3600
	commit("after skew", map[string]string{"top.txt": "final\n"})
	// An orphan branch.
	c.run(work, "checkout", "-q", "--orphan", "pages")
	c.run(work, "rm", "-rq", "--cached", ".")
	commit("pages", map[string]string{"index.html": "<p>hi</p>\n"})
	c.run(work, "checkout", "-q", "-f", "main")
	c.run(work, "tag", "-a", "-m", "v1", "v1", "main~8")
	c.run(work, "tag", "light", "feature0")
	blob := strings.TrimSpace(c.run(work, "rev-parse", "main:top.txt"))
	c.run(work, "tag", "-a", "-m", "a blob", "blob-tag", blob)
	dir := filepath.Join(t.TempDir(), "rich.git")
	c.run(filepath.Dir(dir), "clone", "-q", "--bare", work, dir)
	return dir
}

func TestRichRepo(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := copyRepo(t, readOnlyRichRepo(t)) // the test pushes to it
			checkEnumerate(t, c, dir)
			srv := newTestServer(t, dir)
			srv.record = true
			cgitURL := cgitServerWith(t, dir, p.v2, nil)
			work := t.TempDir()

			mirror := filepath.Join(work, "mirror.git")
			c.run(work, "clone", "--mirror", srv.url, mirror)
			if got, want := refsOf(t, c, mirror), refsOf(t, c, dir); got != want {
				t.Errorf("refs:\n%s\nwant\n%s", got, want)
			}
			c.run(mirror, "fsck", "--strict", "--no-dangling")
			if got, want := srv.lastPack(t), objectsBetween(t, c, dir, "--all"); got != want {
				t.Errorf("pack of %d objects, want %d", got, want)
			}

			// Shallow clones across merges, as C git does them.
			for _, args := range [][]string{
				{"--depth", "3"},
				{"--depth", "9", "--no-single-branch"},
				{"--shallow-exclude=feature0"},
				{"--shallow-since=@1500030000"},
			} {
				name := strings.Join(args, " ")
				ours, theirs := filepath.Join(work, "o"+name), filepath.Join(work, "t"+name)
				c.run(work, append(append([]string{"clone", "-q"}, args...), srv.url, ours)...)
				c.run(work, append(append([]string{"clone", "-q"}, args...), cgitURL, theirs)...)
				compareStates(t, name, stateOf(t, c, ours), stateOf(t, c, theirs))
				for _, step := range [][]string{{"fetch", "-q", "--deepen", "2"}, {"fetch", "-q", "--unshallow"}} {
					_, errOurs, err1 := c.try(ours, step...)
					_, errTheirs, err2 := c.try(theirs, step...)
					if (err1 == nil) != (err2 == nil) {
						t.Errorf("%s then %v: ours %v %s, C git %v %s", name, step, err1, errOurs, err2, errTheirs)
						continue
					}
					if err1 != nil {
						// The git client fails the same way with both
						// servers (2.39 cannot parse an unshallowed commit
						// at the edge of a --shallow-exclude clone).
						t.Logf("%s then %v: both fail: %s", name, step, strings.TrimSpace(errOurs))
						continue
					}
					compareStates(t, name+" then "+step[2], stateOf(t, c, ours), stateOf(t, c, theirs))
				}
			}

			// A fetch of a merge of an old branch into one the client has.
			clone := filepath.Join(work, "clone")
			c.run(work, "clone", "-q", srv.url, clone)
			scratch := filepath.Join(work, "scratch")
			c.run(work, "clone", "-q", dir, scratch)
			c.run(scratch, "checkout", "-q", "-b", "late", "main~10")
			if err := os.WriteFile(filepath.Join(scratch, "late.txt"), []byte("late\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.run(scratch, "add", "late.txt")
			c.run(scratch, "commit", "-q", "-m", "late")
			c.run(scratch, "checkout", "-q", "main")
			c.run(scratch, "merge", "-q", "--no-ff", "-m", "merge late", "late")
			old := strings.TrimSpace(c.run(dir, "rev-parse", "main"))
			c.run(scratch, "push", "-q", "origin", "main", "late")
			if err := srv.store.Reload(); err != nil {
				t.Fatal(err)
			}
			c.run(clone, "fetch", "-q", "origin")
			c.run(clone, "fsck", "--strict", "--no-dangling")
			if got, want := srv.lastPack(t), objectsBetween(t, c, dir, "main", "late", "--not", old); got != want {
				t.Errorf("fetch: pack of %d objects, want %d", got, want)
			}
			srv.checkNoErrors(t)
		})
	}
}
