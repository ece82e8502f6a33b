package internal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"
)

// TestRepoConfigIsFennecs: the config a restore writes is byte for byte the
// one Fennec makes repositories and forks with, and every file Fennec keeps
// in a repository (loose objects, refs, a repack's pack, index and sidecar)
// is one a restore takes, on disk and as a backup lists it.
func TestRepoConfigIsFennecs(t *testing.T) {
	w := newRefWorld(t)
	if err := w.update(t, "refs/heads/main", plumbing.ZeroHash, w.a); err != nil {
		t.Fatal(err)
	}
	if err := w.update(t, "refs/tags/v1", plumbing.ZeroHash, w.b); err != nil {
		t.Fatal(err)
	}
	if err := w.st.fork(1, 2); err != nil {
		t.Fatal(err)
	}
	hk := NewHousekeeper(w.st, nil, Config{}, zap.NewNop())
	if _, err := hk.Repack(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		b, err := os.ReadFile(filepath.Join(w.st.Path(id), "config"))
		if err != nil || string(b) != repoConfig {
			t.Fatalf("project %d: config %q, restore writes %q (%v)", id, b, repoConfig, err)
		}
		if err := checkRepoConfig(b); err != nil {
			t.Fatalf("project %d: Fennec's own config refused: %v", id, err)
		}
		files, err := w.st.captureRepo(w.st.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		var packs int
		for _, f := range files {
			if err := acceptEntry(f.Path, f.Dir); err != nil {
				t.Errorf("project %d: a file Fennec writes is refused: %v", id, err)
			}
			if strings.HasSuffix(f.Path, ".fennec") {
				packs++
			}
		}
		if id == 2 && packs != 1 {
			t.Errorf("the repack wrote %d sidecars; the test wants one to check", packs)
		}
	}
	dataDir := filepath.Dir(w.st.root)
	repos, err := checkRestoredLayout(dataDir)
	if err != nil || len(repos) != 2 {
		t.Fatalf("Fennec's own repositories: %v %v", repos, err)
	}
}

// TestNeutralGitEnvironment: a git process Fennec runs gets none of the
// operator's GIT_ variables (another repository, index, object directory,
// config from the environment), and no system or global config.
func TestNeutralGitEnvironment(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_OBJECT_DIRECTORY", "/elsewhere/objects")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", "touch /tmp/x")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /tmp/x'")
	cmd := neutralGit(context.Background(), "git", "/repo.git", "fsck")
	env := map[string]string{}
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := env[k]; dup {
			t.Errorf("%s set twice", k)
		}
		env[k] = v
	}
	for k, want := range map[string]string{"GIT_DIR": "/repo.git", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
		"GIT_CONFIG_SYSTEM": "/dev/null", "GIT_INDEX_FILE": "", "GIT_OBJECT_DIRECTORY": "", "GIT_CONFIG_COUNT": "",
		"GIT_CONFIG_KEY_0": "", "GIT_CONFIG_PARAMETERS": ""} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	args := strings.Join(cmd.Args, " ")
	for _, want := range []string{"--git-dir=/repo.git", "-c core.fsmonitor=false", "-c core.hooksPath=/dev/null"} {
		if !strings.Contains(args, want) {
			t.Errorf("%q lacks %q", args, want)
		}
	}
	if cmd.Dir != "/repo.git" {
		t.Errorf("runs in %q", cmd.Dir)
	}
}
