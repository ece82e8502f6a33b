package gitpack

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
	"github.com/klauspost/compress/zlib"
)

// packKinds walks a pack's entries and counts them by stored type.
func packKinds(t *testing.T, data []byte) map[Type]int {
	t.Helper()
	if len(data) < 32 || string(data[:4]) != "PACK" {
		t.Fatalf("not a pack")
	}
	n := int(binary.BigEndian.Uint32(data[8:]))
	br := bytes.NewReader(data[:len(data)-20])
	if _, err := br.Seek(12, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	kinds := map[Type]int{}
	for i := 0; i < n; i++ {
		off := int64(len(data)-20) - int64(br.Len())
		h, err := parseEntryHeader(br, off)
		if err != nil {
			t.Fatalf("entry %d at %d: %v", i, off, err)
		}
		kinds[h.typ]++
		zr, err := zlib.NewReader(br)
		if err != nil {
			t.Fatalf("entry %d at %d: %v", i, off, err)
		}
		m, err := io.Copy(io.Discard, zr)
		if err != nil || m != h.size {
			t.Fatalf("entry %d at %d: %d bytes, %v", i, off, m, err)
		}
	}
	if br.Len() != 0 {
		t.Fatalf("%d bytes after the last entry", br.Len())
	}
	return kinds
}

// indexInto feeds a pack to git index-pack in dir and returns the objects
// dir then has. A complete pack (closed under reachability) is checked
// with --strict and git fsck, a partial one object by object.
func indexInto(t *testing.T, dir string, pk []byte, complete bool) map[Hash]gitObject {
	t.Helper()
	if complete {
		git(t, dir, pk, "index-pack", "--stdin", "--strict")
		git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	} else {
		git(t, dir, pk, "index-pack", "--stdin", "--fsck-objects")
	}
	return catAll(t, dir)
}

func sameObjects(t *testing.T, got, want map[Hash]gitObject) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d objects, want %d", len(got), len(want))
	}
	for h, o := range want {
		g, ok := got[h]
		if !ok || g.typ != o.typ || !bytes.Equal(g.data, o.data) {
			t.Fatalf("object %s differs or is missing", h)
		}
	}
}

// revObjects lists the objects git rev-list --objects gives for args.
func revObjects(t *testing.T, dir string, args ...string) []Hash {
	t.Helper()
	out := git(t, dir, nil, append([]string{"rev-list", "--objects"}, args...)...)
	var hs []Hash
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) >= 40 {
			h, _ := ParseHex(l[:40])
			hs = append(hs, h)
		}
	}
	return hs
}

func subset(all map[Hash]gitObject, hs []Hash) map[Hash]gitObject {
	m := make(map[Hash]gitObject, len(hs))
	for _, h := range hs {
		m[h] = all[h]
	}
	return m
}

func TestWritePackAllStreamsThePack(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	want := catAll(t, src)
	s := mustOpen(t, src)
	// Reversed, with duplicates: order and repeats do not matter.
	hs := hashesOf(want)
	hs = append(hs, hs[:10]...)
	for i, k := 0, len(hs)-1; i < k; i, k = i+1, k-1 {
		hs[i], hs[k] = hs[k], hs[i]
	}
	var buf bytes.Buffer
	calls := 0
	err := s.WritePack(&buf, hs, WriteOptions{OfsDelta: true, Progress: func(w, n int) {
		calls++
		if n != len(want) || w > n {
			t.Fatalf("progress %d/%d", w, n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("no progress")
	}
	// Every object of the only pack: the output is that pack.
	packs := s.snap.Load().packs
	orig := packs[0].data
	if !bytes.Equal(buf.Bytes(), orig) {
		t.Fatal("whole-pack output differs from the stored pack")
	}
	sameObjects(t, indexInto(t, emptyRepo(t), buf.Bytes(), true), want)
}

func TestWritePackRefDeltas(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	want := catAll(t, src)
	s := mustOpen(t, src)
	var buf bytes.Buffer
	if err := s.WritePack(&buf, hashesOf(want), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	kinds := packKinds(t, buf.Bytes())
	if kinds[OfsDelta] != 0 || kinds[RefDelta] == 0 {
		t.Fatalf("kinds %v: want ref deltas only", kinds)
	}
	sameObjects(t, indexInto(t, emptyRepo(t), buf.Bytes(), true), want)
}

func TestWritePackSubset(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	all := catAll(t, src)
	s := mustOpen(t, src)
	hs := revObjects(t, src, "master~50..master")
	want := subset(all, hs)
	for _, ofs := range []bool{true, false} {
		var buf bytes.Buffer
		if err := s.WritePack(&buf, hs, WriteOptions{OfsDelta: ofs}); err != nil {
			t.Fatal(err)
		}
		kinds := packKinds(t, buf.Bytes())
		if ofs && kinds[RefDelta] != 0 || !ofs && kinds[OfsDelta] != 0 {
			t.Fatalf("ofs %v: kinds %v", ofs, kinds)
		}
		sameObjects(t, indexInto(t, emptyRepo(t), buf.Bytes(), false), want)
	}
}

func TestWritePackThin(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	all := catAll(t, src)
	s := mustOpen(t, src)
	old := revObjects(t, src, "master~50")
	has := make(map[Hash]bool, len(old))
	for _, h := range old {
		has[h] = true
	}
	hs := revObjects(t, src, "master~50..master")
	var buf bytes.Buffer
	err := s.WritePack(&buf, hs, WriteOptions{OfsDelta: true, Thin: true, ClientHas: func(h Hash) bool { return has[h] }})
	if err != nil {
		t.Fatal(err)
	}
	var full bytes.Buffer
	if err := s.WritePack(&full, hs, WriteOptions{OfsDelta: true}); err != nil {
		t.Fatal(err)
	}
	if kinds := packKinds(t, buf.Bytes()); kinds[RefDelta] == 0 || buf.Len() >= full.Len() {
		t.Fatalf("thin pack: kinds %v, %d bytes (full %d)", kinds, buf.Len(), full.Len())
	}
	// A client that has master~50 takes it.
	dir := emptyRepo(t)
	git(t, dir, git(t, src, []byte("master~50\n"), "pack-objects", "--revs", "--stdout", "-q"), "index-pack", "--stdin")
	git(t, dir, buf.Bytes(), "index-pack", "--stdin", "--fix-thin", "--strict")
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	got := catAll(t, dir)
	for _, h := range hs {
		if o, ok := got[h]; !ok || !bytes.Equal(o.data, all[h].data) {
			t.Fatalf("object %s missing or different", h)
		}
	}
}

func TestWritePackLooseAndManyPacks(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	all := catAll(t, src)
	dir := emptyRepo(t)
	// An old pack with ref deltas, a newer one with ofs deltas, and loose
	// objects.
	git(t, dir, git(t, src, []byte("master~100\n"), "pack-objects", "--revs", "--stdout", "-q"), "index-pack", "--stdin")
	git(t, dir, git(t, src, []byte("master~40\n^master~100\n"), "pack-objects", "--revs", "--stdout", "-q", "--delta-base-offset"), "index-pack", "--stdin")
	git(t, dir, git(t, src, []byte("master\n^master~40\n"), "pack-objects", "--revs", "--stdout", "-q"), "unpack-objects", "-q")
	s := mustOpen(t, dir)
	if n := len(s.snap.Load().packs); n != 2 {
		t.Fatalf("%d packs", n)
	}
	checkAll(t, s, all)
	for _, opt := range []WriteOptions{{OfsDelta: true}, {}} {
		var buf bytes.Buffer
		if err := s.WritePack(&buf, hashesOf(all), opt); err != nil {
			t.Fatal(err)
		}
		sameObjects(t, indexInto(t, emptyRepo(t), buf.Bytes(), true), all)
	}
	// Part of each.
	hs := revObjects(t, src, "master~20", "^master~120")
	var buf bytes.Buffer
	if err := s.WritePack(&buf, hs, WriteOptions{OfsDelta: true}); err != nil {
		t.Fatal(err)
	}
	sameObjects(t, indexInto(t, emptyRepo(t), buf.Bytes(), false), subset(all, hs))
}

func TestWritePackEmptyAndMissing(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1})
	s := mustOpen(t, src)
	var buf bytes.Buffer
	if err := s.WritePack(&buf, nil, WriteOptions{OfsDelta: true}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 32 {
		t.Fatalf("empty pack of %d bytes", buf.Len())
	}
	git(t, emptyRepo(t), buf.Bytes(), "index-pack", "--stdin")
	var missing Hash
	missing[3] = 1
	if err := s.WritePack(io.Discard, []Hash{missing}, WriteOptions{}); err == nil {
		t.Fatal("WritePack of a missing object succeeded")
	}
}
