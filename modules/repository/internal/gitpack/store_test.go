package gitpack

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

func TestReadReference(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	s := mustOpen(t, dir)
	checkAll(t, s, want)
	// Again, from the cache.
	checkAll(t, s, want)

	var missing Hash
	missing[0] = 0xab
	if s.Has(missing) {
		t.Fatal("Has(missing) = true")
	}
	if _, _, err := s.Read(missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read(missing) = %v, want ErrNotFound", err)
	}
}

func TestReadWithoutCache(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	s, err := Open(dir, Options{CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkAll(t, s, want)
}

// packAll returns a pack of every object of dir, with ref deltas unless
// ofs is set.
func packAll(t *testing.T, dir string, ofs bool) []byte {
	args := []string{"pack-objects", "--all", "--stdout", "-q"}
	if ofs {
		args = append(args, "--delta-base-offset")
	}
	return git(t, dir, nil, args...)
}

func TestReadRefDeltasAndIdxV1(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	want := catAll(t, src)
	pk := packAll(t, src, false)
	for _, v := range []string{"1", "2"} {
		t.Run("idx"+v, func(t *testing.T) {
			dir := emptyRepo(t)
			git(t, dir, pk, "index-pack", "--stdin", "--index-version="+v)
			checkAll(t, mustOpen(t, dir), want)
		})
	}
}

func TestReadLoose(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1})
	want := catAll(t, src)
	dir := emptyRepo(t)
	git(t, dir, packAll(t, src, true), "unpack-objects", "-q")
	if got := catAll(t, dir); len(got) != len(want) {
		t.Fatalf("unpacked %d objects, want %d", len(got), len(want))
	}
	s := mustOpen(t, dir)
	checkAll(t, s, want)

	// A corrupt loose object is an error, not a panic.
	h := hashesOf(want)[0]
	if err := os.WriteFile(s.loosePath(h), []byte("x\x9c garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read(h); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Read(corrupt) = %v", err)
	}
}

func TestReloadSeesNewPacks(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1})
	want := catAll(t, src)
	dir := emptyRepo(t)
	s := mustOpen(t, dir)
	h := hashesOf(want)[0]
	if s.Has(h) {
		t.Fatal("Has before the pack arrived")
	}
	git(t, dir, packAll(t, src, true), "index-pack", "--stdin")
	// No explicit Reload: a miss rescans objects/pack.
	checkAll(t, s, want)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.snap.Load().packs); n != 1 {
		t.Fatalf("%d packs", n)
	}
}

func TestReadAfterPackRemoved(t *testing.T) {
	t.Parallel()
	dir := copyRepo(t, repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1}))
	want := catAll(t, dir)
	s := mustOpen(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*"))
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	// The open snapshot still reads everything.
	checkAll(t, s, want)
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if s.Has(hashesOf(want)[0]) {
		t.Fatal("Has after the pack was removed and reloaded")
	}
}

func TestConcurrentReads(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	hs := hashesOf(want)
	s, err := Open(dir, Options{CacheBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := range hs {
				h := hs[(i*7+g*131)%len(hs)]
				typ, data, err := s.Read(h)
				if err != nil {
					errc <- err
					return
				}
				if o := want[h]; typ != o.typ || !bytes.Equal(data, o.data) {
					errc <- errors.New("mismatch for " + h.String())
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func TestDeltaCorrupt(t *testing.T) {
	t.Parallel()
	base := []byte("hello world")
	for _, d := range [][]byte{
		{},                           // no sizes
		{11},                         // no result size
		{12, 5, 0x91, 0, 5},          // base size mismatch
		{11, 5, 0x91, 8, 5},          // copy out of range
		{11, 5, 0},                   // reserved op
		{11, 5, 3, 'a'},              // insert past the end
		{11, 4, 0x91, 0, 5},          // more than the declared result
		{11, 6, 0x91, 0, 5},          // less than the declared result
		{11, 0xff, 0xff, 0xff, 0x7f}, // huge result, no instructions
	} {
		if _, err := applyDelta(base, d, 0); err == nil {
			t.Errorf("applyDelta(%v) succeeded", d)
		}
	}
	out, err := applyDelta(base, []byte{11, 8, 0x91, 6, 5, 3, '!', '!', '!'}, 0)
	if err != nil || string(out) != "world!!!" {
		t.Fatalf("applyDelta = %q, %v", out, err)
	}
}
