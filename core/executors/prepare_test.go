package executors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
)

// TestExecutorDataDirIsTheNodesOwnOnASharedStore: on a bbolt store an
// executor works under <data>/executors/<name>; with a shared store each
// node (data directory and listen address) gets a directory of its own
// outside the shared one, the same after a restart, and a data_dir set in
// the settings is kept.
func TestExecutorDataDirIsTheNodesOwnOnASharedStore(t *testing.T) {
	data := t.TempDir()
	dirOf := func(store, listen string, settings map[string]any) string {
		cfg := config.Default()
		cfg.Data, cfg.Store, cfg.Listen = data, store, listen
		out := Prepare(cfg, t.TempDir(), []config.Plugin{{Name: "shell", Kind: "executor", Settings: settings}}, zap.NewNop())
		return out[0].Settings["data_dir"].(string)
	}
	if got, want := dirOf("", "127.0.0.1:8080", nil), filepath.Join(data, "executors", "shell"); got != want {
		t.Fatalf("bbolt: data_dir = %s, want %s", got, want)
	}
	pg := "postgres://u@h/db"
	a, b := dirOf(pg, "127.0.0.1:8081", nil), dirOf(pg, "127.0.0.1:8082", nil)
	if a == b || strings.HasPrefix(a, data) || !strings.HasPrefix(a, os.TempDir()) {
		t.Fatalf("shared store: nodes got %s and %s; want two directories of their own outside %s", a, b, data)
	}
	if again := dirOf(pg, "127.0.0.1:8081", nil); again != a {
		t.Fatalf("a restarted node got %s, before %s", again, a)
	}
	if got := dirOf(pg, "127.0.0.1:8081", map[string]any{"data_dir": "/srv/x"}); got != "/srv/x" {
		t.Fatalf("a data_dir set in the settings became %s", got)
	}
}
