package fennec_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
)

// TestBackupParticipantsRoundTrip: a backup holds every participant,
// captures inside the store's read transaction before thawing them, ends
// them, and archives what was captured (files read from disk, data taken
// in memory; a file gone meanwhile is left out); restore puts it back and
// runs the participant's check.
func TestBackupParticipantsRoundTrip(t *testing.T) {
	var calls []string
	verified := false
	spec := fennec.BackupSpec{Name: "thing", Dirs: []string{"things"},
		Verify: func(_ context.Context, dir string, _ fennec.Progress) ([]string, error) {
			verified = true
			if _, err := os.Stat(filepath.Join(dir, "things", "a.txt")); err != nil {
				return nil, err
			}
			return []string{"things: fine"}, nil
		}}
	ctor := func(cfg config.Config) []fennec.BackupParticipant {
		return []fennec.BackupParticipant{{Name: "thing",
			Hold: func(context.Context) (func(), func(), error) {
				calls = append(calls, "hold")
				return func() { calls = append(calls, "thaw") }, func() { calls = append(calls, "end") }, nil
			},
			Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
				calls = append(calls, "capture")
				files, n, err := fennec.CaptureTree(cfg.Data, "things", func(name string) bool { return strings.HasSuffix(name, ".tmp") })
				files = append(files,
					fennec.BackupFile{Path: "things/mem", Data: []byte("in memory")},
					fennec.BackupFile{Path: "things/gone", Size: 3})
				return fennec.BackupCapture{Files: files, Counts: map[string]int64{"things": n}}, err
			}}}
	}
	m := fennec.NewModule("thing", fennec.ProvideBackupParticipants(ctor, spec))
	if got := m.BackupSpecs(); len(got) != 1 || got[0].Name != "thing" {
		t.Fatalf("specs %+v", got)
	}

	data := t.TempDir()
	db, err := store.Open(filepath.Join(data, "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.MkdirAll(filepath.Join(data, "things", "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"things/a.txt": "A", "things/sub/b.txt": "BB", "things/x.tmp": "skip", "other.txt": "not mine", "secret.key": "k"} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Listen, cfg.Data = "", data
	var archive bytes.Buffer
	if err := fennec.Backup(context.Background(), cfg, &archive, fennec.BackupOptions{}, fennec.WithModules(m), fennec.WithLogger(zap.NewNop())); err != nil {
		t.Fatal(err)
	}
	if want := []string{"hold", "capture", "thaw", "end"}; !slices.Equal(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	man, err := fennec.CheckBackupStream(bytes.NewReader(archive.Bytes()), io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range man.Files {
		paths = append(paths, f.Path)
	}
	if want := []string{"fennec.db", "secret.key", "things", "things/a.txt", "things/mem", "things/sub", "things/sub/b.txt"}; !slices.Equal(paths, want) {
		t.Fatalf("archived %v, want %v", paths, want)
	}
	if man.Counts["things"] != 2 || man.Format != fennec.BackupFormat || !man.SecretKey {
		t.Fatalf("manifest %+v", man)
	}

	target := filepath.Join(t.TempDir(), "restored")
	rep, err := fennec.Restore(context.Background(), bytes.NewReader(archive.Bytes()), target, fennec.RestoreOptions{Specs: fennec.BackupSpecsOf(m)})
	if err != nil {
		t.Fatal(err)
	}
	if !verified || !slices.Contains(rep.Summary, "things: fine") || rep.Files != 5 {
		t.Fatalf("report %+v, verified %v", rep, verified)
	}
	for name, want := range map[string]string{"things/a.txt": "A", "things/sub/b.txt": "BB", "things/mem": "in memory"} {
		if b, err := os.ReadFile(filepath.Join(target, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(target, "other.txt")); err == nil {
		t.Error("a file no participant owns was restored")
	}
	if err := store.Verify(filepath.Join(target, "fennec.db")); err != nil {
		t.Fatal(err)
	}
	// Not again into the same place, unless forced.
	if _, err := fennec.Restore(context.Background(), bytes.NewReader(archive.Bytes()), target, fennec.RestoreOptions{Specs: fennec.BackupSpecsOf(m)}); err == nil {
		t.Fatal("restore into a non-empty directory")
	}
	if _, err := fennec.Restore(context.Background(), bytes.NewReader(archive.Bytes()), target, fennec.RestoreOptions{Force: true, Specs: fennec.BackupSpecsOf(m)}); err != nil {
		t.Fatalf("restore --force: %v", err)
	}
	// Without the key, on request.
	archive.Reset()
	if err := fennec.Backup(context.Background(), cfg, &archive, fennec.BackupOptions{WithoutSecretKey: true}, fennec.WithModules(m), fennec.WithLogger(zap.NewNop())); err != nil {
		t.Fatal(err)
	}
	if man, err := fennec.CheckBackupStream(bytes.NewReader(archive.Bytes()), io.Discard, nil); err != nil || man.SecretKey || man.Files[1].Path == "secret.key" {
		t.Fatalf("a backup without the key: %v %+v", err, man)
	}
	// Without the module, its directory is outside the layout.
	if _, err := fennec.Restore(context.Background(), bytes.NewReader(archive.Bytes()), filepath.Join(t.TempDir(), "x"), fennec.RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("restore without the module's spec: %v", err)
	}
}

func TestBackupParticipantsAreDeclared(t *testing.T) {
	ctor := func(fennec.None) []fennec.BackupParticipant {
		return []fennec.BackupParticipant{{Name: "thing", Capture: func(context.Context, *store.Tx) (fennec.BackupCapture, error) {
			return fennec.BackupCapture{}, nil
		}}}
	}
	for name, c := range map[string]struct {
		spec fennec.BackupSpec
		want string
	}{
		"undeclared": {spec: fennec.BackupSpec{Name: "other", Dirs: []string{"x"}}, want: `"thing" is not declared`},
		"bad dir":    {spec: fennec.BackupSpec{Name: "thing", Dirs: []string{"../x"}}, want: "not a clean relative path"},
		"reserved":   {spec: fennec.BackupSpec{Name: "thing", Dirs: []string{"fennec.db"}}, want: "not a clean relative path"},
	} {
		cfg := config.Default()
		cfg.Listen, cfg.Data = "", t.TempDir()
		_, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(fennec.NewModule("thing", fennec.ProvideBackupParticipants(ctor, c.spec))), fennec.WithLogger(zap.NewNop()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
