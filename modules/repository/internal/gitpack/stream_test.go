package gitpack

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// checkStreams compares every object of want with what Stream reads.
func checkStreams(t *testing.T, s *Store, want map[Hash]gitObject) {
	t.Helper()
	for h, o := range want {
		if typ, size, err := s.Stat(h); err != nil || typ != o.typ || size != int64(len(o.data)) {
			t.Fatalf("Stat(%s) = %v %d %v, want %v %d", h, typ, size, err, o.typ, len(o.data))
		}
		r, err := s.Stream(context.Background(), h)
		if err != nil {
			t.Fatalf("Stream(%s): %v", h, err)
		}
		if r.Type != o.typ || r.Size != int64(len(o.data)) {
			t.Fatalf("Stream(%s): %v of %d bytes, want %v of %d", h, r.Type, r.Size, o.typ, len(o.data))
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, o.data) {
			t.Fatalf("Stream(%s) read %d bytes, %v; want %d bytes", h, len(got), err, len(o.data))
		}
	}
}

func TestStreamMatchesRead(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	s := mustOpen(t, dir)
	checkStreams(t, s, want)
	// Again, with the cache warm.
	checkAll(t, s, want)
	checkStreams(t, s, want)
}

// Every delta chain resolved through temporary files gives the same
// bytes, and leaves no file behind.
func TestStreamSpilledChains(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 60, Files: 40, Binaries: 2})
	want := catAll(t, src)
	for _, mem := range []int64{0, 64} {
		t.Run(fmt.Sprint("mem", mem), func(t *testing.T) {
			dir := copyRepo(t, src)
			before := listFiles(t, dir)
			s, err := Open(dir, Options{CacheBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.memBytes = mem
			checkStreams(t, s, want)
			if after := listFiles(t, dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Fatalf("files left behind:\n%s", strings.Join(after, "\n"))
			}
		})
	}
}

func TestStreamLoose(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 20, Files: 10, Binaries: 1})
	want := catAll(t, src)
	dir := emptyRepo(t)
	git(t, dir, packAll(t, src, true), "unpack-objects", "-q")
	s := mustOpen(t, dir)
	checkStreams(t, s, want)

	// Lies about the size are errors, not short or long content.
	for name, body := range map[string]string{
		"short": "blob 10\x00abc",
		"long":  "blob 2\x00abcdef",
	} {
		h := hashOf(Blob, []byte(name))
		writeLoose(t, s, h, body)
		r, err := s.Stream(context.Background(), h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := io.ReadAll(r); err == nil {
			t.Errorf("%s: read without error", name)
		}
		r.Close()
	}
	var missing Hash
	missing[0] = 0xab
	if _, err := s.Stream(context.Background(), missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stream(missing) = %v, want ErrNotFound", err)
	}
	if _, _, err := s.Stat(missing); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat(missing) = %v, want ErrNotFound", err)
	}
	bad := hashOf(Blob, []byte("bad header"))
	writeLoose(t, s, bad, "blob nonsense\x00abc")
	if _, _, err := s.Stat(bad); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("Stat(bad header) = %v", err)
	}
}

// writeLoose writes a loose object file with the given inflated content.
func writeLoose(t *testing.T, s *Store, h Hash, content string) {
	t.Helper()
	p := s.loosePath(h)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, zlibBytes([]byte(content)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bigDeltaRepo packs two 48 MiB blobs of zeros, one a delta of the other,
// and returns the repository and their ids.
// bigDeltaRepo is built once per run (git takes a while to deltify 48 MiB)
// and shared: the tests that use it only read it.
func bigDeltaRepo(t *testing.T) (string, []Hash) {
	t.Helper()
	sharedBigDelta.once.Do(func() {
		sharedBigDelta.err = "failed to build in the first test that asked for it"
		root, err := fixtureRoot()
		if err != nil {
			sharedBigDelta.err = err.Error()
			return
		}
		built, ids := buildBigDeltaRepo(t)
		dir := filepath.Join(root, "bigdelta.git")
		if err := os.Rename(built, dir); err != nil {
			sharedBigDelta.err = err.Error()
			return
		}
		sharedBigDelta.dir, sharedBigDelta.ids, sharedBigDelta.err = dir, ids, ""
	})
	if sharedBigDelta.err != "" {
		t.Fatalf("the shared big delta repository %s", sharedBigDelta.err)
	}
	return sharedBigDelta.dir, sharedBigDelta.ids
}

var sharedBigDelta struct {
	once sync.Once
	dir  string
	ids  []Hash
	err  string
}

func buildBigDeltaRepo(t *testing.T) (string, []Hash) {
	dir := emptyRepo(t)
	const size = 48 << 20
	zero := make([]byte, size)
	var ids []Hash
	var list bytes.Buffer
	for _, tail := range []string{"", "tail\n"} {
		out := git(t, dir, append(zero, tail...), "hash-object", "-w", "--stdin")
		h, ok := ParseHex(bytes.TrimSpace(out))
		if !ok {
			t.Fatalf("hash-object: %q", out)
		}
		ids = append(ids, h)
		list.WriteString(h.String() + "\n")
	}
	git(t, dir, list.Bytes(), "pack-objects", "-q", "--delta-base-offset", filepath.Join(dir, "objects", "pack", "pack"))
	git(t, dir, nil, "prune-packed")
	out := string(git(t, dir, nil, "verify-pack", "-v", mustGlob(t, filepath.Join(dir, "objects", "pack", "*.idx"))))
	if !strings.Contains(out, "chain length = 1: 1 object") {
		t.Fatalf("git made no delta:\n%s", out)
	}
	return dir, ids
}

func mustGlob(t *testing.T, pattern string) string {
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s: %v", pattern, m)
	}
	return m[0]
}

// A large deltified blob streams with bounded memory: its base goes to a
// temporary file, not the heap. Not parallel: it counts the allocations
// of the whole process.
func TestStreamLargeDeltaBoundedMemory(t *testing.T) {
	dir, ids := bigDeltaRepo(t)
	s := mustOpen(t, dir)
	for _, h := range ids {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := s.Stream(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.New()
		fmt.Fprintf(sum, "blob %d\x00", r.Size)
		n, err := io.CopyBuffer(sum, r, make([]byte, 32<<10))
		r.Close()
		runtime.ReadMemStats(&after)
		var got Hash
		copy(got[:], sum.Sum(nil))
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes, %d KiB allocated", h, n, alloc>>10)
		if err != nil || got != h {
			t.Fatalf("%s: read %d bytes hashing to %s: %v", h, n, got, err)
		}
		if alloc > 8<<20 {
			t.Errorf("%s: streaming a %d MiB blob allocated %d MiB", h, n>>20, alloc>>20)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "fennec-stream-*")); len(m) > 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}

// Large delta resolutions wait for a slot, and give up with their context.
func TestStreamSpillSlots(t *testing.T) {
	t.Parallel()
	dir, ids := bigDeltaRepo(t)
	s := mustOpen(t, dir)
	var delta Hash
	p := s.snap.Load().packs[0]
	for _, h := range ids {
		i, ok := p.idx.find(h)
		if !ok {
			t.Fatalf("%s not in the pack", h)
		}
		if hd, _ := entryHeaderAt(p, p.idx.offset(i)); hd.typ >= OfsDelta {
			delta = h
		}
	}
	if delta.IsZero() {
		t.Fatal("no delta")
	}
	for range maxSpills {
		s.spills <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := s.Stream(ctx, delta)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with every slot taken and the context cancelled: %v", err)
	}
	r.Close()
	<-s.spills
	r, err = s.Stream(context.Background(), delta)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, r); err != nil || n != r.Size {
		t.Fatalf("read %d of %d: %v", n, r.Size, err)
	}
	r.Close()
	if len(s.spills) != maxSpills-1 {
		t.Fatalf("Close did not free the slot: %d taken", len(s.spills))
	}
}

// A delta that copies past its base, or says more than it gives, fails
// the read.
func TestStreamDeltaCorrupt(t *testing.T) {
	t.Parallel()
	base := []byte("hello world")
	for _, d := range [][]byte{
		{11, 5, 0x91, 8, 5},      // copy out of range
		{11, 5, 0},               // reserved op
		{11, 5, 3, 'a'},          // insert past the end
		{11, 4, 0x91, 0, 5},      // more than the declared result
		{11, 6, 0x91, 0, 5},      // less than the declared result
		{11, 5, 0x91, 0, 5, 1},   // instructions after the result
		{11, 0xff, 0x7f, 1, 'x'}, // a huge result, hardly any instruction
	} {
		a := &deltaApplier{base: bytes.NewReader(base), baseSize: 11, d: bufioOf(d[2:])}
		a.left, _ = readVarint(bytes.NewReader(d[1:]))
		if _, err := io.ReadAll(a); err == nil {
			t.Errorf("delta %v applied", d)
		}
	}
	a := &deltaApplier{base: bytes.NewReader(base), baseSize: 11, d: bufioOf([]byte{0x91, 6, 5, 3, '!', '!', '!'}), left: 8}
	if out, err := io.ReadAll(a); err != nil || string(out) != "world!!!" {
		t.Fatalf("applied: %q, %v", out, err)
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	s := mustOpen(t, dir)
	loose := emptyRepo(t)
	git(t, loose, packAll(t, dir, true), "unpack-objects", "-q")
	sl := mustOpen(t, loose)
	for _, h := range hashesOf(want)[:50] {
		for _, st := range []*Store{s, sl} {
			for _, n := range []int{40, 12, 7} {
				got := st.Prefix(strings.ToUpper(h.String()[:n]), 10)
				if !contains(got, h) {
					t.Fatalf("Prefix(%s) = %v, want it to hold %s", h.String()[:n], got, h)
				}
			}
		}
	}
	// A short prefix is ambiguous in a repository of thousands of objects.
	if got := s.Prefix(hashesOf(want)[0].String()[:4], 2); len(got) == 0 {
		t.Fatal("Prefix of 4 digits found nothing")
	}
	for _, bad := range []string{"abc", "zzzz", "abcg", strings.Repeat("a", 41)} {
		if got := s.Prefix(bad, 2); got != nil {
			t.Errorf("Prefix(%q) = %v", bad, got)
		}
	}
}

func bufioOf(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func contains(hs []Hash, h Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

// BenchmarkStreamBlob measures the throughput of a raw download's source:
// a 32 MiB blob of text-like data, whole in the pack (b.SetBytes: MB/s of
// content), streamed against read whole.
func BenchmarkStreamBlob(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "r.git")
	git(b, "", nil, "init", "-q", "--bare", dir)
	var data bytes.Buffer
	for i := 0; data.Len() < 32<<20; i++ {
		fmt.Fprintf(&data, "line %d of a generated file, %x\n", i, i*2654435761)
	}
	out := git(b, dir, data.Bytes(), "hash-object", "-w", "--stdin")
	h, _ := ParseHex(bytes.TrimSpace(out))
	git(b, dir, []byte(h.String()+"\n"), "pack-objects", "-q", filepath.Join(dir, "objects", "pack", "pack"))
	git(b, dir, nil, "prune-packed")
	s := mustOpen(b, dir)
	buf := make([]byte, 32<<10)
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(data.Len()))
		b.ReportAllocs()
		for b.Loop() {
			r, err := s.Stream(context.Background(), h)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(data.Len()))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := s.Read(h); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStat measures Stat over every object of a repository (what a
// diff's size check costs per changed file).
func BenchmarkStat(b *testing.B) {
	dir := repoSmall(b)
	want := catAll(b, dir)
	hs := hashesOf(want)
	s := mustOpen(b, dir)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := hs[i%len(hs)]
		if _, _, err := s.Stat(h); err != nil {
			b.Fatal(err)
		}
	}
}
