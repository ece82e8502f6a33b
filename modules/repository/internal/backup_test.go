package internal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
)

// idsState is a projects.RepositoryState that knows the project ids.
type idsState struct{ ids []int64 }

func (s *idsState) SetDefaultBranch(context.Context, int64, string) error        { return nil }
func (s *idsState) ImportURL(context.Context, int64) (string, error)             { return "", nil }
func (s *idsState) SetImportStatus(context.Context, int64, string, string) error { return nil }
func (s *idsState) ProjectIDs(context.Context) ([]int64, error)                  { return s.ids, nil }

// TestBackupHoldsRefWritesAndRemovals: while a backup holds the
// repositories, a ref update waits until the capture is thawed, and the
// capture sees the refs as they were; a project's removal waits until the
// backup ends, so every file listed can still be read.
func TestBackupHoldsRefWritesAndRemovals(t *testing.T) {
	w := newRefWorld(t)
	if err := w.update(t, "refs/heads/main", plumbing.ZeroHash, w.a); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := BackupParticipants(BackupParticipantsDeps{Storage: w.st, State: &idsState{ids: []int64{1, 2}}, Blobs: blob.NewDir(t.TempDir())})[0]
	ctx := context.Background()
	thaw, end, err := p.Hold(ctx)
	if err != nil {
		t.Fatal(err)
	}
	moved := make(chan error, 1)
	go func() {
		moved <- w.st.UpdateRefs(1, w.repo, []RefUpdate{{Name: "refs/heads/main", Old: w.a, New: w.b}}, false)[0]
	}()
	select {
	case err := <-moved:
		t.Fatalf("a ref moved while the backup held them: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	var files []string
	var main string
	err = db.View(ctx, func(tx *store.Tx) error {
		c, err := p.Capture(ctx, tx)
		if err != nil {
			return err
		}
		if c.Counts["repositories"] != 1 || c.Counts["repositories_not_on_disk"] != 1 {
			t.Errorf("counts %v, want one repository and one not on disk", c.Counts)
		}
		for _, f := range c.Files {
			if strings.HasSuffix(f.Path, "/refs/heads/main") {
				main = strings.TrimSpace(string(f.Data))
			}
			if !f.Dir && f.Data == nil {
				files = append(files, filepath.Join(filepath.Dir(w.st.root), filepath.FromSlash(f.Path)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if main != w.a.String() {
		t.Fatalf("captured main at %q, want %s", main, w.a)
	}
	if len(files) == 0 {
		t.Fatal("no object files captured")
	}
	thaw()
	if err := <-moved; err != nil {
		t.Fatalf("ref update after the thaw: %v", err)
	}

	removed := make(chan error, 1)
	go func() { removed <- w.st.remove(1) }()
	select {
	case err := <-removed:
		t.Fatalf("the repository was removed during the backup: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("a captured file went away during the backup: %v", err)
		}
	}
	end()
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
}

// TestMissingRepositoryIsNotMadeAnew: Open refuses a project marked missing
// instead of creating an empty repository, until its creation event clears
// the mark.
func TestMissingRepositoryIsNotMadeAnew(t *testing.T) {
	w := newRefWorld(t)
	w.st.setMissing(7, true)
	if _, err := w.st.Open(context.Background(), 7); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Open of a missing repository: %v", err)
	}
	if _, err := os.Stat(w.st.Path(7)); !os.IsNotExist(err) {
		t.Fatalf("a missing repository was made anew: %v", err)
	}
	if err := w.st.created(context.Background(), &idsState{}, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Open(context.Background(), 7); err != nil {
		t.Fatalf("Open after the creation event: %v", err)
	}
}
