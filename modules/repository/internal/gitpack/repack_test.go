package gitpack

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mixedRepo builds a repository holding the small reference repository's
// history as a pack of ref deltas (up to master~100), loose objects (to
// master~40) and a thin pack received and installed by a Store (to
// master), with master set.
func mixedRepo(t *testing.T) (dir string, all map[Hash]gitObject, tip Hash) {
	t.Helper()
	src := copyRepo(t, repoSmall(t))
	all = catAll(t, repoSmall(t)) // src is a copy of it: the shared map
	tip = tipOf(t, src, "master")
	dir = emptyRepo(t)
	git(t, dir, git(t, src, []byte("master~100\n"), "pack-objects", "--revs", "--stdout", "-q"), "index-pack", "--stdin")
	git(t, dir, git(t, src, []byte("master~40\n^master~100\n"), "pack-objects", "--revs", "--stdout", "-q"), "unpack-objects", "-q")
	git(t, dir, nil, "update-ref", "refs/heads/master", tipOf(t, src, "master~40").String())
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	thin := git(t, src, []byte("master\n^master~40\n"), "pack-objects", "--thin", "--stdout", "--revs", "-q", "--delta-base-offset")
	receiveInstall(t, s, dir, thin, tip)
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	return dir, all, tip
}

func looseCount(t *testing.T, dir string) int {
	n := 0
	for _, f := range listFiles(t, filepath.Join(dir, "objects")) {
		if len(f) == 41 && f[2] == '/' {
			n++
		}
	}
	return n
}

func TestRepack(t *testing.T) {
	t.Parallel()
	dir, all, tip := mixedRepo(t)
	if n := looseCount(t, dir); n == 0 {
		t.Fatal("no loose objects to start with")
	}
	// An unreachable loose object stays.
	stray := strings.TrimSpace(string(git(t, dir, []byte("stray\n"), "hash-object", "-w", "--stdin")))

	// A quarantine a dead process left a day ago goes; a fresh one stays.
	for _, q := range []string{"incoming-stale", "incoming-fresh"} {
		if err := os.MkdirAll(filepath.Join(dir, "objects", q), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(dir, "objects", "incoming-stale"), old, old)

	s := mustOpen(t, dir)
	before := mustOpen(t, dir) // another store, opened before the repack
	if len(s.ClosedPacks()) != 0 {
		t.Fatal("closed packs before any repack")
	}
	objects := revObjects(t, dir, "--all")
	if err := s.Repack(objects, []Hash{tip}); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*"))
	if len(packs) != 3 {
		t.Fatalf("pack dir: %v", packs)
	}
	if n := looseCount(t, dir); n != 1 {
		t.Fatalf("%d loose objects left, want the stray one", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "objects", "incoming-stale")); !os.IsNotExist(err) {
		t.Fatal("stale quarantine kept")
	}
	if err := os.Remove(filepath.Join(dir, "objects", "incoming-fresh")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, nil, "verify-pack", "-v", strings.TrimSuffix(packs[0], filepath.Ext(packs[0]))+".idx")
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	sameObjects(t, catAll(t, dir), withStray(t, all, stray))
	checkAll(t, s, all)
	checkAll(t, before, all)
	goGitReads(t, dir, all)

	cps := s.ClosedPacks()
	if len(cps) != 1 || !slices.Equal(cps[0].Tips, []Hash{tip}) || cps[0].Objects != len(all) {
		t.Fatalf("closed packs %+v", cps)
	}
	for h := range all {
		if !cps[0].Contains(h) {
			t.Fatalf("closed pack lacks %s", h)
		}
	}
	if list := cps[0].List(); !slices.Equal(list, hashesOf(all)) {
		t.Fatalf("List gives %d ids", len(list))
	}
	if h, _ := ParseHex(stray); cps[0].Contains(h) {
		t.Fatal("closed pack holds the stray object")
	}
	// Ref deltas became ofs deltas.
	data, err := os.ReadFile(filepath.Join(dir, "objects", "pack", cps[0].Name+".pack"))
	if err != nil {
		t.Fatal(err)
	}
	if kinds := packKinds(t, data); kinds[RefDelta] != 0 || kinds[OfsDelta] == 0 {
		t.Fatalf("kinds %v", kinds)
	}
	// A store opened now sees it too; a second repack is the same pack.
	if cps := mustOpen(t, dir).ClosedPacks(); len(cps) != 1 || cps[0].Name != s.ClosedPacks()[0].Name {
		t.Fatalf("reopened: %+v", cps)
	}
	// The same objects with other tips: the same pack, the new tips.
	other := tipOf(t, dir, "master~1")
	if err := s.Repack(objects, []Hash{tip, other}); err != nil {
		t.Fatal(err)
	}
	if cps2 := s.ClosedPacks(); len(cps2) != 1 || cps2[0].Name != cps[0].Name || !slices.Equal(cps2[0].Tips, []Hash{tip, other}) {
		t.Fatalf("second repack: %+v", cps2)
	}
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	checkAll(t, s, all)
}

func withStray(t *testing.T, all map[Hash]gitObject, stray string) map[Hash]gitObject {
	m := make(map[Hash]gitObject, len(all)+1)
	for h, o := range all {
		m[h] = o
	}
	h, _ := ParseHex(stray)
	m[h] = gitObject{Blob, []byte("stray\n")}
	return m
}

func TestRepackMissingObject(t *testing.T) {
	t.Parallel()
	dir := copyRepo(t, repoSmall(t))
	s := mustOpen(t, dir)
	before := listFiles(t, filepath.Join(dir, "objects"))
	var missing Hash
	missing[0] = 7
	if err := s.Repack([]Hash{missing}, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Repack = %v", err)
	}
	if got := listFiles(t, filepath.Join(dir, "objects")); !slices.Equal(got, before) {
		t.Fatalf("objects/ changed: %v", got)
	}
}

// TestRepackConcurrentReads reads everything over and over, through the
// repacking store and another one, while Repack runs.
func TestRepackConcurrentReads(t *testing.T) {
	t.Parallel()
	dir, all, tip := mixedRepo(t)
	hs := hashesOf(all)
	s, err := Open(dir, Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := mustOpen(t, dir)
	objects := revObjects(t, dir, "--all")
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for g := 0; g < 4; g++ {
		st := s
		if g%2 == 1 {
			st = other
		}
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !stop.Load() || i < len(hs); i++ {
				h := hs[(i*13+g*101)%len(hs)]
				typ, data, err := st.Read(h)
				if err != nil {
					errc <- err
					return
				}
				if o := all[h]; typ != o.typ || !bytes.Equal(data, o.data) {
					errc <- errors.New("mismatch for " + h.String())
					return
				}
			}
		}(g)
	}
	for i := 0; i < 3; i++ {
		if err := s.Repack(objects, []Hash{tip}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
}

func TestWritePackWhole(t *testing.T) {
	t.Parallel()
	dir, all, tip := mixedRepo(t)
	s := mustOpen(t, dir)
	if err := s.Repack(revObjects(t, dir, "--all"), []Hash{tip}); err != nil {
		t.Fatal(err)
	}
	cps := s.ClosedPacks()
	if len(cps) != 1 {
		t.Fatalf("closed packs %+v", cps)
	}
	stored, err := os.ReadFile(filepath.Join(dir, "objects", "pack", cps[0].Name+".pack"))
	if err != nil {
		t.Fatal(err)
	}
	// The whole pack alone is the stored pack, byte for byte.
	var buf bytes.Buffer
	if err := s.WritePack(&buf, nil, WriteOptions{OfsDelta: true, Whole: cps}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), stored) {
		t.Fatal("whole closed pack differs from the stored one")
	}
	// With a new loose object and some objects listed again.
	extra := strings.TrimSpace(string(git(t, dir, []byte("extra\n"), "hash-object", "-w", "--stdin")))
	eh, _ := ParseHex(extra)
	buf.Reset()
	if err := s.WritePack(&buf, append(hashesOf(all)[:50], eh), WriteOptions{Whole: cps}); err != nil {
		t.Fatal(err)
	}
	got := indexInto(t, emptyRepo(t), buf.Bytes(), false)
	want := maps.Clone(all)
	want[eh] = gitObject{Blob, []byte("extra\n")}
	sameObjects(t, got, want)
	// A repack to an older tip removes the pack; its ClosedPack still serves.
	old := tipOf(t, dir, "master~100")
	git(t, dir, nil, "update-ref", "refs/heads/master", old.String())
	if err := s.Repack(revObjects(t, dir, "--all"), []Hash{old}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "objects", "pack", cps[0].Name+".pack")); !os.IsNotExist(err) {
		t.Fatalf("old pack still there: %v", err)
	}
	buf.Reset()
	if err := s.WritePack(&buf, nil, WriteOptions{OfsDelta: true, Whole: cps}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), stored) {
		t.Fatal("removed closed pack no longer streams")
	}
}
