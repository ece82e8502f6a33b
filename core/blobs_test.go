package fennec_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/store"
)

// TestModulesBlobs: the blob.Store the core gives modules keeps a key at
// that path of the data directory, takes keys under the directories
// modules declare to backups only (never the database or the secret key),
// and what a participant lists with CaptureBlobs is in the backup.
func TestModulesBlobs(t *testing.T) {
	data := t.TempDir()
	db, err := store.Open(filepath.Join(data, "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	spec := fennec.BackupSpec{Name: "thing", Dirs: []string{"things/kept"}}
	var setupErr error
	ctor := func(blobs blob.Store) []fennec.BackupParticipant {
		ctx := context.Background()
		if _, err := blobs.Put(ctx, "things/kept/a/b.txt", strings.NewReader("B")); err != nil {
			setupErr = err
		}
		for _, k := range []string{"fennec.db", "secret.key", "things/other", "things/keptx/c", "repositories/x"} {
			if _, err := blobs.Put(ctx, k, strings.NewReader("no")); !errors.Is(err, blob.ErrInvalidKey) {
				setupErr = errors.Join(setupErr, errors.New(k+" was not refused"))
			}
		}
		return []fennec.BackupParticipant{{Name: "thing",
			Capture: func(ctx context.Context, tx *store.Tx) (fennec.BackupCapture, error) {
				files, n, err := fennec.CaptureBlobs(ctx, blobs, "things/kept")
				return fennec.BackupCapture{Files: files, Counts: map[string]int64{"things": n}}, err
			}}}
	}
	m := fennec.NewModule("thing", fennec.ProvideBackupParticipants(ctor, spec))
	cfg := config.Default()
	cfg.Listen, cfg.Data = "", data
	var archive bytes.Buffer
	if err := fennec.Backup(context.Background(), cfg, &archive, fennec.BackupOptions{}, fennec.WithModules(m), fennec.WithLogger(zap.NewNop())); err != nil {
		t.Fatal(err)
	}
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	if b, err := os.ReadFile(filepath.Join(data, "things", "kept", "a", "b.txt")); err != nil || string(b) != "B" {
		t.Fatalf("the object is not at its key's path: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "fennec.db")); bytes.Equal(b, []byte("no")) {
		t.Fatal("the database was overwritten")
	}
	man, err := fennec.CheckBackupStream(bytes.NewReader(archive.Bytes()), io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range man.Files {
		paths = append(paths, f.Path)
	}
	if !slices.Contains(paths, "things/kept/a/b.txt") || man.Counts["things"] != 1 {
		t.Fatalf("the backup holds %v, counts %v", paths, man.Counts)
	}
}
