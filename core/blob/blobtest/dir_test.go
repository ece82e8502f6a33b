package blobtest_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/blob/blobtest"
)

// TestDir runs the contract on the directory implementation, and the same
// contract through Under (which the core hands modules).
func TestDir(t *testing.T) {
	blobtest.Run(t, func(t testing.TB) blob.Store { return blob.NewDir(t.TempDir()) })
}

func TestUnder(t *testing.T) {
	blobtest.Run(t, func(t testing.TB) blob.Store {
		return blob.Under(blob.NewDir(t.TempDir()), "a", "d", "dir", "empty", "host", "inside", "k", "keys", "new",
			"none", "never", "one", "r", "t", "traces", "u", "v", "c", "a b", "a+b", "x..y")
	})
}

// TestUnderRefusesOtherKeys: a key outside the prefixes is refused, one
// that only begins like a prefix too.
func TestUnderRefusesOtherKeys(t *testing.T) {
	dir := t.TempDir()
	s := blob.Under(blob.NewDir(dir), "ci/traces", "uploads")
	ctx := context.Background()
	for _, k := range []string{"fennec.db", "secret.key", "ci", "ci/tracesx/1", "uploadsx", "repositories/a.git/config"} {
		if _, err := s.Put(ctx, k, strings.NewReader("x")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q): %v", k, err)
		}
	}
	if _, err := s.Put(ctx, "ci/traces/0/1.log", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "ci" {
		t.Fatalf("the directory holds %v", entries)
	}
}

// TestDirMakesItsRoot: a data directory not made yet is made on first use.
func TestDirMakesItsRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	s := blob.NewDir(root)
	if list, err := s.List(context.Background(), "x"); err != nil || len(list) != 0 {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := s.Put(context.Background(), "x/y", strings.NewReader("z")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "x", "y")); err != nil || string(b) != "z" {
		t.Fatalf("%q %v", b, err)
	}
}

// TestDirKeysArePaths: a key is the file at that path, so a data directory
// written before the seam reads as it is.
func TestDirKeysArePaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ci", "traces", "1"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ci", "traces", "1", "1500.log"), []byte("old trace"), 0o640); err != nil {
		t.Fatal(err)
	}
	s := blob.NewDir(dir)
	ctx := context.Background()
	n, err := s.Append(ctx, "ci/traces/1/1500.log", 9, []byte(", continued"))
	if err != nil || n != 20 {
		t.Fatalf("append to a file written before: %d %v", n, err)
	}
	if _, err := s.Put(ctx, "uploads/3/abc/x.png", strings.NewReader("png")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "uploads", "3", "abc", "x.png"))
	if err != nil || string(b) != "png" {
		t.Fatalf("the object is not the file at its key's path: %q %v", b, err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "ci", "traces", "1", "1500.log"))
	if string(b) != "old trace, continued" {
		t.Fatalf("trace file: %q", b)
	}
}

// TestDirStaysInside: a symbolic link planted under the directory does not
// lead a key out of it, and a leftover temporary file is not an object.
func TestDirStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "filelink")); err != nil {
		t.Fatal(err)
	}
	s := blob.NewDir(dir)
	ctx := context.Background()
	if o, err := s.Open(ctx, "link/secret"); err == nil {
		o.Close()
		t.Fatal("a key read through a symbolic link out of the directory")
	}
	if o, err := s.Open(ctx, "filelink"); err == nil {
		o.Close()
		t.Fatal("a key read a file out of the directory through a symbolic link")
	}
	if _, err := s.Put(ctx, "link/new", strings.NewReader("x")); err == nil {
		t.Fatal("a key wrote through a symbolic link out of the directory")
	}
	if _, err := s.Append(ctx, "link/secret", 1, []byte("x")); err == nil {
		t.Fatal("a key appended through a symbolic link out of the directory")
	}
	_ = s.DeletePrefix(ctx, "link")
	_ = s.Delete(ctx, "link/secret")
	if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || string(b) != "s" {
		t.Fatalf("the file outside changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Fatal("a file was made outside")
	}
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p", ".blob-dead.tmp"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "p/k", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, "p")
	if err != nil || len(list) != 1 || list[0].Key != "p/k" {
		t.Fatalf("list: %v %v", list, err)
	}
	if list, err := s.List(ctx, "link"); err != nil || len(list) != 0 {
		t.Fatalf("list through a link: %v %v", list, err)
	}
}

// TestDirFailedPutLeavesNoDirectory: the directories a failed put made go
// with it (an upload's own directory); those that were there stay.
func TestDirFailedPutLeavesNoDirectory(t *testing.T) {
	dir := t.TempDir()
	s := blob.NewDir(dir)
	ctx := context.Background()
	if _, err := s.Put(ctx, "uploads/1/old/a", strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	failing := io.MultiReader(strings.NewReader("part"), iotest.ErrReader(errors.New("cut")))
	if _, err := s.Put(ctx, "uploads/1/new/deeper/b", failing); err == nil {
		t.Fatal("a put from a failing reader succeeded")
	}
	var left []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		left = append(left, filepath.ToSlash(rel))
		return err
	})
	if want := []string{".", "uploads", "uploads/1", "uploads/1/old", "uploads/1/old/a"}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
}
