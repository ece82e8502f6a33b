package internal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestPackedObjectsStayVisibleWhileObjectsAreWritten: go-git writes each
// loose object as a temporary file in objects/pack and renames it away;
// a repository opened meanwhile must still find the packed objects (it
// used to see no pack at all when a listed temporary file was gone before
// it was stat'ed: "404 Commit Not Found" for a merge request's commit).
func TestPackedObjectsStayVisibleWhileObjectsAreWritten(t *testing.T) {
	w := newRefWorld(t)
	git1(t, w.dir, "update-ref", "refs/heads/master", w.b.String())
	git1(t, w.dir, "repack", "-a", "-d", "-q") // a and b packed, no loose object
	if ls, _ := filepath.Glob(filepath.Join(w.dir, "objects", "??")); len(ls) > 0 {
		t.Fatalf("loose objects left: %v", ls)
	}
	ctx := context.Background()
	stop := make(chan struct{})
	const writers = 3
	var wg sync.WaitGroup
	for range writers {
		writer, err := w.st.Open(ctx, 1) // one each: a go-git repository is not for concurrent use
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go writeBlobs(t, &wg, writer, stop)
	}
	defer func() { close(stop); wg.Wait() }()
	deadline := time.Now().Add(500 * time.Millisecond)
	reads := 0
	for time.Now().Before(deadline) {
		repo, err := w.st.Open(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.CommitObject(w.b); err != nil {
			t.Fatalf("read %d: packed commit b while objects are written: %v", reads, err)
		}
		reads++
	}
	t.Logf("%d reads", reads)
}

// writeBlobs writes loose objects, as a merge check writes its trees,
// until stop.
func writeBlobs(t *testing.T, wg *sync.WaitGroup, repo *git.Repository, stop chan struct{}) {
	defer wg.Done()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		obj := repo.Storer.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		wr, _ := obj.Writer()
		_, _ = wr.Write([]byte("blob " + strconv.Itoa(i)))
		_ = wr.Close()
		if _, err := repo.Storer.SetEncodedObject(obj); err != nil {
			t.Error(err)
			return
		}
	}
}

// TestReadDirSkipsVanishedEntries: an entry removed between the listing
// and its stat is left out; the others are listed, sorted.
func TestReadDirSkipsVanishedEntries(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"pack-b.pack", "tmp_obj_1", "pack-a.idx"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := readDirSkippingVanished(dir, func() {
		if err := os.Rename(filepath.Join(dir, "tmp_obj_1"), filepath.Join(t.TempDir(), "x")); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	if got := filepath.Join(names...); got != filepath.Join("pack-a.idx", "pack-b.pack") {
		t.Fatalf("listed %v", names)
	}
	if _, err := readDirSkippingVanished(filepath.Join(dir, "none"), nil); !os.IsNotExist(err) {
		t.Fatalf("a missing directory: %v, want not exist", err)
	}
}

// TestCommitOfTellsMissingFromUnreadable: a commit that is not there is
// ErrCommitNotFound (a 404); one that is there but cannot be read is
// another error (a logged 500), never taken for a missing commit.
func TestCommitOfTellsMissingFromUnreadable(t *testing.T) {
	w := newRefWorld(t)
	if _, err := commitOf(w.repo, w.a.String()); err != nil {
		t.Fatalf("commit a: %v", err)
	}
	if _, err := commitOf(w.repo, strings.Repeat("1", 40)); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("a missing commit: %v, want ErrCommitNotFound", err)
	}
	if _, err := commitOf(w.repo, "not-a-sha"); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("not a sha: %v, want ErrCommitNotFound", err)
	}
	hex := w.b.String()
	loose := filepath.Join(w.dir, "objects", hex[:2], hex[2:])
	if err := os.Chmod(loose, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(loose, []byte("not zlib at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	repo, err := w.st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = commitOf(repo, hex)
	if err == nil || errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("a corrupt commit: %v, want a read error", err)
	}
}
