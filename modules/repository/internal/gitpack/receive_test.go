package gitpack

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// --- building packs by hand ---

func zlibBytes(data []byte) []byte {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

// rawEntry is a whole object entry with a declared size that may lie.
func rawEntry(t Type, declared int64, data []byte) []byte {
	return append(appendEntryHeader(nil, t, declared), zlibBytes(data)...)
}

func ofsEntry(dist int64, delta []byte) []byte {
	b := appendEntryHeader(nil, OfsDelta, int64(len(delta)))
	b = appendOfs(b, dist)
	return append(b, zlibBytes(delta)...)
}

func refEntry(base Hash, delta []byte) []byte {
	b := appendEntryHeader(nil, RefDelta, int64(len(delta)))
	b = append(b, base[:]...)
	return append(b, zlibBytes(delta)...)
}

// buildPack assembles a pack of entries declaring count objects.
func buildPack(count int, entries ...[]byte) []byte {
	pk := packHeader(count)
	for _, e := range entries {
		pk = append(pk, e...)
	}
	return retrail(pk)
}

// retrail appends the SHA-1 trailer of pk.
func retrail(pk []byte) []byte {
	sum := sha1.Sum(pk)
	return append(slices.Clone(pk), sum[:]...)
}

// --- checks ---

// goGitReads opens the repository with go-git and reads every object.
func goGitReads(t *testing.T, dir string, want map[Hash]gitObject) {
	t.Helper()
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	for h, o := range want {
		obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			t.Fatalf("go-git: %s: %v", h, err)
		}
		r, err := obj.Reader()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(data, o.data) || Type(obj.Type()) != o.typ {
			t.Fatalf("go-git: %s differs: %v", h, err)
		}
	}
}

func tipOf(t *testing.T, dir, rev string) Hash {
	t.Helper()
	h, ok := ParseHex(strings.TrimSpace(string(git(t, dir, nil, "rev-parse", rev))))
	if !ok {
		t.Fatalf("rev-parse %s", rev)
	}
	return h
}

// receiveInstall receives pk into s, checks connectivity to tip, installs
// it and points master at tip.
func receiveInstall(t *testing.T, s *Store, dir string, pk []byte, tip Hash) *Incoming {
	t.Helper()
	in, err := s.Receive(bytes.NewReader(pk), ReceiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if in.dir == "" || !strings.HasPrefix(filepath.Base(in.dir), "incoming-") {
		t.Fatalf("quarantine %q", in.dir)
	}
	if s.Has(in.objects[0]) && !s.Has(tip) {
		t.Fatal("quarantined objects visible before Install")
	}
	if err := s.CheckConnected(in, []Hash{tip}); err != nil {
		t.Fatal(err)
	}
	if err := s.Install(in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(in.dir); !os.IsNotExist(err) {
		t.Fatalf("quarantine left behind: %v", err)
	}
	git(t, dir, nil, "update-ref", "refs/heads/master", tip.String())
	return in
}

func TestReceiveFullPack(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	want := catAll(t, src)
	tip := tipOf(t, src, "master")
	for _, ofs := range []bool{true, false} {
		dir := emptyRepo(t)
		s := mustOpen(t, dir)
		pk := packAll(t, src, ofs)
		in := receiveInstall(t, s, dir, pk, tip)
		if len(in.Objects()) != len(want) {
			t.Fatalf("%d objects received, want %d", len(in.Objects()), len(want))
		}
		// Named like git names it; git agrees with the index.
		idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
		if len(idx) != 1 || filepath.Base(idx[0]) != in.name+".idx" {
			t.Fatalf("packs %v, name %s", idx, in.name)
		}
		sum := sha1.Sum(pk[:len(pk)-20])
		if in.name != "pack-"+Hash(sum).String() {
			t.Fatalf("name %s", in.name)
		}
		git(t, dir, nil, "verify-pack", idx[0])
		git(t, dir, nil, "fsck", "--strict", "--no-dangling")
		sameObjects(t, catAll(t, dir), want)
		checkAll(t, s, want)
		goGitReads(t, dir, want)
		// The same index as git's.
		gitIdx := filepath.Join(t.TempDir(), "git.idx")
		pf := filepath.Join(t.TempDir(), "p.pack")
		os.WriteFile(pf, pk, 0o644)
		git(t, dir, nil, "index-pack", "-o", gitIdx, pf)
		a, _ := os.ReadFile(gitIdx)
		b, _ := os.ReadFile(idx[0])
		if !bytes.Equal(a, b) {
			t.Fatal("index differs from git index-pack's")
		}
	}
}

func TestReceiveThinPack(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	all := catAll(t, src)
	tip := tipOf(t, src, "master")
	old := tipOf(t, src, "master~50")
	dir := emptyRepo(t)
	git(t, dir, git(t, src, []byte("master~50\n"), "pack-objects", "--revs", "--stdout", "-q", "--delta-base-offset"), "index-pack", "--stdin")
	git(t, dir, nil, "update-ref", "refs/heads/master", old.String())
	s := mustOpen(t, dir)
	thin := git(t, src, []byte("master\n^master~50\n"), "pack-objects", "--thin", "--stdout", "--revs", "-q", "--delta-base-offset")
	sent := revObjects(t, src, "master~50..master")
	in := receiveInstall(t, s, dir, thin, tip)
	if len(in.Objects()) != len(sent) {
		t.Fatalf("%d objects received, want %d", len(in.Objects()), len(sent))
	}
	if int(binary.BigEndian.Uint32(thin[8:])) != len(sent) {
		t.Fatal("the thin pack did not hold what rev-list says")
	}
	p := s.snap.Load()
	var np *pack
	for _, q := range p.packs {
		if q.name == in.name {
			np = q
		}
	}
	if np == nil || np.idx.n <= len(sent) {
		t.Fatal("thin pack not completed with its bases")
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", in.name+".idx"))
	git(t, dir, nil, "verify-pack", "-v", idx[0])
	git(t, dir, nil, "fsck", "--strict", "--no-dangling")
	sameObjects(t, catAll(t, dir), all)
	checkAll(t, s, all)
	goGitReads(t, dir, subset(all, sent))
}

func TestReceiveEmpty(t *testing.T) {
	t.Parallel()
	dir := copyRepo(t, repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1}))
	s := mustOpen(t, dir)
	tip := tipOf(t, dir, "master")
	before := listFiles(t, filepath.Join(dir, "objects"))
	for _, body := range [][]byte{nil, buildPack(0)} {
		in, err := s.Receive(bytes.NewReader(body), ReceiveOptions{MaxBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Objects()) != 0 || in.dir != "" {
			t.Fatalf("objects %d, dir %q", len(in.Objects()), in.dir)
		}
		if err := s.CheckConnected(in, []Hash{tip}); err != nil {
			t.Fatal(err)
		}
		if err := s.Install(in); err != nil {
			t.Fatal(err)
		}
		if got := listFiles(t, filepath.Join(dir, "objects")); !slices.Equal(got, before) {
			t.Fatalf("objects/ changed: %v", got)
		}
	}
	in, _ := s.Receive(bytes.NewReader(nil), ReceiveOptions{})
	var missing Hash
	missing[1] = 9
	if err := s.CheckConnected(in, []Hash{missing}); err == nil || !strings.Contains(err.Error(), missing.String()) {
		t.Fatalf("CheckConnected(missing tip) = %v", err)
	}
	in.Discard()
}

func TestCheckConnectedMissing(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, smallShape())
	tip := tipOf(t, src, "master")
	dir := emptyRepo(t)
	s := mustOpen(t, dir)
	// Objects of the last 50 commits, not thin: the parents are missing.
	pk := git(t, src, []byte("master\n^master~50\n"), "pack-objects", "--stdout", "--revs", "-q", "--delta-base-offset")
	in, err := s.Receive(bytes.NewReader(pk), ReceiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Discard()
	err = s.CheckConnected(in, []Hash{tip})
	if err == nil || !strings.Contains(err.Error(), "missing object") {
		t.Fatalf("CheckConnected = %v", err)
	}
	t.Log(err)
	// The quarantined objects stay invisible, but the Incoming reads them.
	if s.Has(tip) {
		t.Fatal("quarantined tip visible")
	}
	if typ, data, err := in.Read(tip); err != nil || typ != Commit || !bytes.HasPrefix(data, []byte("tree ")) {
		t.Fatalf("Incoming.Read(tip) = %v, %v", typ, err)
	}
	if err := in.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := in.Read(tip); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Incoming.Read after Discard = %v", err)
	}
	if got := listFiles(t, filepath.Join(dir, "objects")); slices.ContainsFunc(got, func(f string) bool { return strings.Contains(f, "incoming") }) {
		t.Fatalf("quarantine left: %v", got)
	}
}

func TestReceiveHostile(t *testing.T) {
	t.Parallel()
	src := repotest.Reference(t, repotest.Shape{Commits: 40, Files: 30, Binaries: 1})
	good := packAll(t, src, true)
	goodN := int(binary.BigEndian.Uint32(good[8:]))
	body := good[:len(good)-20]

	blob := []byte("hello, hostile world\n")
	blobID := hashOf(Blob, blob)
	var nowhere Hash
	nowhere[0] = 0xee
	// A delta on blob that copies all of it and appends "!".
	okDelta := []byte{byte(len(blob)), byte(len(blob) + 1), 0x90, byte(len(blob)), 1, '!'}
	outOfRange := []byte{byte(len(blob)), 30, 0x91, 10, 30}
	first := rawEntry(Blob, int64(len(blob)), blob)

	withCount := func(pk []byte, n int) []byte {
		c := slices.Clone(pk[:len(pk)-20])
		binary.BigEndian.PutUint32(c[8:], uint32(n))
		return retrail(c)
	}
	flip := func(pk []byte, at int) []byte {
		c := slices.Clone(pk)
		c[at] ^= 0x55
		return c
	}

	cases := []struct {
		name    string
		pk      []byte
		max     int64
		tooBig  bool
		message string
	}{
		{"garbage", []byte("GARBAGE GARBAGE GARBAGE"), 0, false, "not a pack"},
		{"short header", []byte("PACK\x00\x00"), 0, false, "header"},
		{"version 9", retrail([]byte("PACK\x00\x00\x00\x09\x00\x00\x00\x00")), 0, false, "version"},
		{"truncated half", good[:len(good)/2], 0, false, ""},
		{"truncated trailer", good[:len(good)-5], 0, false, ""},
		{"no trailer", body, 0, false, ""},
		{"bad trailer", flip(good, len(good)-1), 0, false, "checksum"},
		{"corrupt data", retrail(flip(good, len(good)/2)[:len(good)-20]), 0, false, ""},
		{"trailing garbage", append(slices.Clone(good), "xyz"...), 0, false, "garbage after"},
		{"more declared than present", withCount(good, goodN+1), 0, false, ""},
		{"fewer declared than present", withCount(good, goodN-1), 0, false, ""},
		{"billions declared", withCount(buildPack(1, first), 1<<31), 0, false, ""},
		{"too large", good, int64(len(good) / 2), true, ""},
		{"too large by one", good, int64(len(good) - 1), true, ""},
		{"size larger than data", buildPack(1, rawEntry(Blob, int64(len(blob))+1, blob)), 0, false, "header says"},
		{"size smaller than data", buildPack(1, rawEntry(Blob, int64(len(blob))-1, blob)), 0, false, "header says"},
		{"terabyte blob", buildPack(1, rawEntry(Blob, 1<<42, blob)), 0, false, "header says"},
		{"terabyte delta", buildPack(2, first, append(appendOfs(appendEntryHeader(nil, OfsDelta, 1<<42), int64(len(first))), zlibBytes(okDelta)...)), 0, false, "limit"},
		{"bad type", buildPack(1, append([]byte{0x55}, zlibBytes([]byte("xxxxx"))...)), 0, false, "type"},
		{"bad zlib", buildPack(1, append(appendEntryHeader(nil, Blob, 5), "not zlib at all"...)), 0, false, ""},
		{"ofs to itself", buildPack(2, first, ofsEntry(0, okDelta)), 0, false, "offset"},
		{"ofs before the pack", buildPack(2, first, ofsEntry(int64(len(first))+100, okDelta)), 0, false, "offset"},
		{"ofs mid-entry", buildPack(2, first, ofsEntry(int64(len(first))-3, okDelta)), 0, false, "base offset"},
		{"copy out of range", buildPack(2, first, ofsEntry(int64(len(first)), outOfRange)), 0, false, "delta"},
		{"missing ref base", buildPack(2, first, refEntry(nowhere, okDelta)), 0, false, nowhere.String()},
		{"ref base mismatch size", buildPack(2, rawEntry(Blob, 3, []byte("abc")), refEntry(hashOf(Blob, []byte("abc")), okDelta)), 0, false, "size"},
		{"ref delta loop", buildPack(2, refEntry(hashOf(Blob, append(slices.Clone(blob), '!')), okDelta), refEntry(blobID, okDelta)), 0, false, ""},
		{"duplicate objects", buildPack(2, first, first), 0, false, "twice"},
	}
	dir := copyRepo(t, src)
	s := mustOpen(t, dir)
	before := listFiles(t, filepath.Join(dir, "objects"))
	// The hand-made pieces are valid when put together properly.
	okPack := buildPack(2, first, ofsEntry(int64(len(first)), okDelta))
	in, err := s.Receive(bytes.NewReader(okPack), ReceiveOptions{})
	if err != nil {
		t.Fatalf("valid hand-made pack: %v", err)
	}
	if got := in.Objects(); len(got) != 2 || !slices.Contains(got, blobID) || !slices.Contains(got, hashOf(Blob, append(slices.Clone(blob), '!'))) {
		t.Fatalf("objects %v", got)
	}
	in.Discard()
	// A valid but bloated stream (empty stored blocks) takes the slow path.
	bloated := bloatedZlib(blob, 200)
	in, err = s.Receive(bytes.NewReader(buildPack(1, append(appendEntryHeader(nil, Blob, int64(len(blob))), bloated...))), ReceiveOptions{})
	if err != nil {
		t.Fatalf("bloated stream: %v", err)
	}
	if got := in.Objects(); len(got) != 1 || got[0] != blobID {
		t.Fatalf("objects %v", got)
	}
	in.Discard()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := s.Receive(bytes.NewReader(c.pk), ReceiveOptions{MaxBytes: c.max})
			if err == nil {
				in.Discard()
				t.Fatal("accepted")
			}
			t.Log(err)
			if c.tooBig != errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v, too large %v", err, c.tooBig)
			}
			if c.message != "" && !strings.Contains(err.Error(), c.message) {
				t.Fatalf("error %q does not say %q", err, c.message)
			}
			if got := listFiles(t, filepath.Join(dir, "objects")); !slices.Equal(got, before) {
				t.Fatalf("objects/ changed:\n%v\nwas\n%v", got, before)
			}
		})
	}
	// The store still reads everything.
	checkAll(t, s, catAll(t, src))
}

// bloatedZlib is a zlib stream of data preceded by n empty stored blocks.
func bloatedZlib(data []byte, n int) []byte {
	b := []byte{0x78, 0x01}
	for i := 0; i < n; i++ {
		b = append(b, 0x00, 0x00, 0x00, 0xff, 0xff)
	}
	b = append(b, 0x01, byte(len(data)), byte(len(data)>>8), ^byte(len(data)), ^byte(len(data)>>8))
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, adler32.Checksum(data))
}
