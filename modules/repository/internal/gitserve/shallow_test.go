package gitserve

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cloneState is what a comparison looks at in a client repository.
type cloneState struct {
	shallow string // sorted .git/shallow (or shallow of a bare repo)
	refs    string
	objects string // sorted rev-list --objects --all
}

func stateOf(t *testing.T, c *gitClient, dir string) cloneState {
	t.Helper()
	c.run(dir, "fsck", "--strict", "--no-dangling")
	var st cloneState
	gitDir := strings.TrimSpace(c.run(dir, "rev-parse", "--absolute-git-dir"))
	if data, err := os.ReadFile(filepath.Join(gitDir, "shallow")); err == nil {
		lines := strings.Fields(string(data))
		sort.Strings(lines)
		st.shallow = strings.Join(lines, "\n")
	}
	st.refs = refsOf(t, c, dir)
	lines := strings.Split(strings.TrimSpace(c.run(dir, "rev-list", "--objects", "--all")), "\n")
	sort.Strings(lines)
	st.objects = strings.Join(lines, "\n")
	return st
}

// compareStates checks that a clone from this package's server and one
// from C git's ended the same.
func compareStates(t *testing.T, step string, ours, cgit cloneState) {
	t.Helper()
	if ours.shallow != cgit.shallow {
		t.Errorf("%s: shallow boundary:\n%s\nC git:\n%s", step, ours.shallow, cgit.shallow)
	}
	if ours.refs != cgit.refs {
		t.Errorf("%s: refs:\n%s\nC git:\n%s", step, ours.refs, cgit.refs)
	}
	if ours.objects != cgit.objects {
		t.Errorf("%s: reachable objects differ (%d lines, C git %d)", step,
			strings.Count(ours.objects, "\n"), strings.Count(cgit.objects, "\n"))
	}
}

func countCommits(t *testing.T, c *gitClient, dir string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(c.run(dir, "rev-list", "--count", "--all")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// shallowCase runs steps against both servers and compares after each.
type shallowStep struct {
	name    string
	args    []string // git arguments, "URL" and "DIR" replaced
	commits int      // expected commit count in the clone; 0 = not checked
}

func runShallowCase(t *testing.T, steps []shallowStep) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := readOnlySmallRepo(t)
			srv := newTestServer(t, dir)
			cgitURL := cgitServerWith(t, dir, p.v2, nil)
			work := t.TempDir()
			ours, theirs := filepath.Join(work, "ours"), filepath.Join(work, "cgit")
			for _, step := range steps {
				for _, side := range []struct{ url, dir string }{{srv.url, ours}, {cgitURL, theirs}} {
					args := make([]string, len(step.args))
					for i, a := range step.args {
						a = strings.ReplaceAll(a, "URL", side.url)
						args[i] = strings.ReplaceAll(a, "DIR", side.dir)
					}
					runDir := side.dir
					if args[0] == "clone" {
						runDir = work
					}
					c.run(runDir, args...)
				}
				a, b := stateOf(t, c, ours), stateOf(t, c, theirs)
				compareStates(t, step.name, a, b)
				if step.commits > 0 {
					if n := countCommits(t, c, ours); n != step.commits {
						t.Errorf("%s: %d commits, want %d", step.name, n, step.commits)
					}
				}
			}
			srv.checkNoErrors(t)
		})
	}
}

func TestShallowDepth1(t *testing.T) {
	runShallowCase(t, []shallowStep{
		{"clone --depth 1", []string{"clone", "--depth", "1", "URL", "DIR"}, 1},
	})
}

func TestShallowDeepenUnshallow(t *testing.T) {
	runShallowCase(t, []shallowStep{
		{"clone --depth 10", []string{"clone", "--depth", "10", "URL", "DIR"}, 10},
		{"fetch --deepen 5", []string{"fetch", "--deepen", "5"}, 15},
		// With v0 only the tags at master~10 are wanted (depth 20 counts
		// from them: 30 commits), with v2 master too (20): as C git.
		{"fetch --depth 20", []string{"fetch", "--depth", "20"}, 0},
		{"fetch --unshallow", []string{"fetch", "--unshallow"}, smallShape().Commits},
	})
}

func TestShallowMirrorDepth(t *testing.T) {
	runShallowCase(t, []shallowStep{
		{"clone --mirror --depth 3", []string{"clone", "--mirror", "--depth", "3", "URL", "DIR"}, 0},
		{"fetch --unshallow", []string{"fetch", "--unshallow"}, 0},
	})
}

func TestShallowSince(t *testing.T) {
	c := newGitClient(t)
	ts, _ := strconv.ParseInt(strings.TrimSpace(c.run(repotestSmall(t), "log", "-1", "--format=%ct", "master~50")), 10, 64)
	since := time.Unix(ts, 0).UTC().Format("2006-01-02 15:04:05 +0000")
	runShallowCase(t, []shallowStep{
		{"clone --shallow-since", []string{"clone", "--shallow-since=" + since, "URL", "DIR"}, 51},
		{"fetch --shallow-since older", []string{"fetch", "--shallow-since=" + time.Unix(ts-100*17*60, 0).UTC().Format("2006-01-02 15:04:05 +0000")}, 151},
	})
}

func TestShallowExclude(t *testing.T) {
	runShallowCase(t, []shallowStep{
		{"clone --shallow-exclude=v1", []string{"clone", "--shallow-exclude=v1", "URL", "DIR"}, 0},
		{"fetch --shallow-exclude=side", []string{"fetch", "--shallow-exclude=side"}, 0},
	})
}

func repotestSmall(t *testing.T) string {
	return readOnlySmallRepo(t)
}
