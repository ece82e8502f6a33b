package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/blob"
)

// Run runs the contract on stores made by open, a new empty one per test.
func Run(t *testing.T, open func(t testing.TB) blob.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"ReadYourWrite", readYourWrite},
		{"PutReplaces", putReplaces},
		{"FailedPutLeavesTheOldObject", failedPutLeavesOld},
		{"FailedPutOfANewKeyLeavesNothing", failedPutLeavesNothing},
		{"CanceledPutLeavesNothing", canceledPut},
		{"Ranges", ranges},
		{"CreateIsExclusive", createIsExclusive},
		{"AppendAtTheSizeOnly", appendOffsets},
		{"OpenReadsTheSizeItHad", openSnapshot},
		{"PutAfterAppend", putAfterAppend},
		{"Delete", deleteObject},
		{"PrefixesAreSegments", prefixes},
		{"HostileKeys", hostileKeys},
		{"ConcurrentPutsLeaveOneWholeObject", concurrentPuts},
		{"ConcurrentCreatesHaveOneWinner", concurrentCreates},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func put(t testing.TB, s blob.Store, key, content string) {
	t.Helper()
	n, err := s.Put(context.Background(), key, strings.NewReader(content))
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	if n != int64(len(content)) {
		t.Fatalf("put %s: size %d, want %d", key, n, len(content))
	}
}

// read is key's whole object; "" and ErrNotFound when there is none.
func read(t testing.TB, s blob.Store, key string) (string, error) {
	t.Helper()
	o, err := s.Open(context.Background(), key)
	if err != nil {
		return "", err
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if int64(len(b)) != o.Size() {
		t.Fatalf("read %s: %d bytes, Size says %d", key, len(b), o.Size())
	}
	return string(b), nil
}

func want(t testing.TB, s blob.Store, key, content string) {
	t.Helper()
	got, err := read(t, s, key)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	if got != content {
		t.Fatalf("%s holds %q, want %q", key, got, content)
	}
}

func absent(t testing.TB, s blob.Store, key string) {
	t.Helper()
	if _, err := read(t, s, key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("open %s: %v, want ErrNotFound", key, err)
	}
}

func keys(t testing.TB, s blob.Store, prefix string) []string {
	t.Helper()
	list, err := s.List(context.Background(), prefix)
	if err != nil {
		t.Fatalf("list %s: %v", prefix, err)
	}
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s:%d", e.Key, e.Size))
	}
	return out
}

func readYourWrite(t *testing.T, s blob.Store) {
	absent(t, s, "a/b/c.log")
	put(t, s, "a/b/c.log", "hello")
	want(t, s, "a/b/c.log", "hello")
	put(t, s, "empty", "")
	want(t, s, "empty", "")
	if n, err := blob.SizeOf(context.Background(), s, "a/b/c.log"); err != nil || n != 5 {
		t.Fatalf("SizeOf: %d %v", n, err)
	}
	if n, err := blob.SizeOf(context.Background(), s, "a/b/none"); err != nil || n != 0 {
		t.Fatalf("SizeOf of none: %d %v", n, err)
	}
}

func putReplaces(t *testing.T, s blob.Store) {
	put(t, s, "k", "a longer first version")
	put(t, s, "k", "second")
	want(t, s, "k", "second")
}

// failingReader yields some bytes, then fails.
type failingReader struct{ n int }

var errReader = errors.New("the client went away")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errReader
	}
	n := min(len(p), f.n)
	for i := range n {
		p[i] = 'x'
	}
	f.n -= n
	return n, nil
}

func failedPutLeavesOld(t *testing.T, s blob.Store) {
	put(t, s, "dir/k", "old")
	_, err := s.Put(context.Background(), "dir/k", &failingReader{n: 100 << 10})
	if !errors.Is(err, errReader) {
		t.Fatalf("put from a failing reader: %v, want its error", err)
	}
	want(t, s, "dir/k", "old")
	if got := keys(t, s, "dir"); !slices.Equal(got, []string{"dir/k:3"}) {
		t.Fatalf("list after a failed put: %v", got)
	}
}

func failedPutLeavesNothing(t *testing.T, s blob.Store) {
	if _, err := s.Put(context.Background(), "new/k", &failingReader{n: 10}); !errors.Is(err, errReader) {
		t.Fatalf("put: %v", err)
	}
	absent(t, s, "new/k")
	if got := keys(t, s, "new"); len(got) != 0 {
		t.Fatalf("list after a failed put: %v", got)
	}
	if _, err := s.Create(context.Background(), "new/k", &failingReader{n: 10}); !errors.Is(err, errReader) {
		t.Fatalf("create: %v", err)
	}
	absent(t, s, "new/k")
}

func canceledPut(t *testing.T, s blob.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "c", strings.NewReader("x")); err == nil {
		t.Fatal("a put with an ended context succeeded")
	}
	absent(t, s, "c")
}

func ranges(t *testing.T, s blob.Store) {
	content := strings.Repeat("0123456789", 1000)
	put(t, s, "r", content)
	o, err := s.Open(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(content)) {
		t.Fatalf("size %d", o.Size())
	}
	if o.ModTime().IsZero() {
		t.Fatal("no modification time")
	}
	b := make([]byte, 5)
	if _, err := o.ReadAt(b, 9995); err != nil || string(b) != "56789" {
		t.Fatalf("ReadAt at the end: %q %v", b, err)
	}
	if n, err := o.ReadAt(b, 9998); n != 2 || !errors.Is(err, io.EOF) {
		t.Fatalf("ReadAt past the end: %d %v", n, err)
	}
	if _, err := o.Seek(1003, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(o, b); err != nil || string(b) != "34567" {
		t.Fatalf("read after seek: %q %v", b, err)
	}
	if pos, err := o.Seek(-3, io.SeekEnd); err != nil || pos != 9997 {
		t.Fatalf("seek from the end: %d %v", pos, err)
	}
	rest, err := io.ReadAll(o)
	if err != nil || string(rest) != "789" {
		t.Fatalf("rest: %q %v", rest, err)
	}
}

func createIsExclusive(t *testing.T, s blob.Store) {
	ctx := context.Background()
	if n, err := s.Create(ctx, "keys/host", strings.NewReader("first")); err != nil || n != 5 {
		t.Fatalf("create: %d %v", n, err)
	}
	if _, err := s.Create(ctx, "keys/host", strings.NewReader("second")); !errors.Is(err, blob.ErrExist) {
		t.Fatalf("second create: %v, want ErrExist", err)
	}
	want(t, s, "keys/host", "first")
	if got := keys(t, s, "keys"); !slices.Equal(got, []string{"keys/host:5"}) {
		t.Fatalf("list: %v", got)
	}
}

func appendOffsets(t *testing.T, s blob.Store) {
	ctx := context.Background()
	const key = "traces/1/1001.log"
	if _, err := s.Append(ctx, key, 3, []byte("gap")); !errors.Is(err, blob.ErrOffset) {
		t.Fatalf("append at 3 to nothing: %v, want ErrOffset", err)
	}
	absent(t, s, key)
	n, err := s.Append(ctx, key, 0, []byte("abc"))
	if err != nil || n != 3 {
		t.Fatalf("append at 0: %d %v", n, err)
	}
	n, err = s.Append(ctx, key, 3, []byte("def"))
	if err != nil || n != 6 {
		t.Fatalf("append at 3: %d %v", n, err)
	}
	for _, off := range []int64{0, 3, 5, 7, 100} {
		n, err := s.Append(ctx, key, off, []byte("zz"))
		var oe *blob.OffsetError
		if !errors.As(err, &oe) || !errors.Is(err, blob.ErrOffset) || oe.Size != 6 || n != 6 {
			t.Fatalf("append at %d of 6: %d %v, want ErrOffset with size 6", off, n, err)
		}
	}
	if n, err := s.Append(ctx, key, 6, nil); err != nil || n != 6 {
		t.Fatalf("empty append: %d %v", n, err)
	}
	want(t, s, key, "abcdef")
	if n, err := s.Append(ctx, "traces/empty", 0, nil); err != nil || n != 0 {
		t.Fatalf("empty append to nothing: %d %v", n, err)
	}
	want(t, s, "traces/empty", "")
}

func openSnapshot(t *testing.T, s blob.Store) {
	ctx := context.Background()
	if _, err := s.Append(ctx, "t", 0, []byte("first ")); err != nil {
		t.Fatal(err)
	}
	o, err := s.Open(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := s.Append(ctx, "t", 6, []byte("second")); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(o)
	if err != nil || string(b) != "first " || o.Size() != 6 {
		t.Fatalf("an object opened before an append reads %q (size %d), %v", b, o.Size(), err)
	}
	want(t, s, "t", "first second")
}

func putAfterAppend(t *testing.T, s blob.Store) {
	ctx := context.Background()
	if _, err := s.Append(ctx, "t", 0, []byte("a runner's first try")); err != nil {
		t.Fatal(err)
	}
	put(t, s, "t", "again")
	want(t, s, "t", "again")
	if n, err := s.Append(ctx, "t", 5, []byte("!")); err != nil || n != 6 {
		t.Fatalf("append after put: %d %v", n, err)
	}
	want(t, s, "t", "again!")
}

func deleteObject(t *testing.T, s blob.Store) {
	ctx := context.Background()
	put(t, s, "d/k", "x")
	if err := s.Delete(ctx, "d/k"); err != nil {
		t.Fatal(err)
	}
	absent(t, s, "d/k")
	if err := s.Delete(ctx, "d/k"); err != nil {
		t.Fatalf("delete of an absent object: %v", err)
	}
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("delete of an absent object: %v", err)
	}
	if _, err := s.Append(ctx, "d/k", 0, []byte("new")); err != nil {
		t.Fatalf("append after delete: %v", err)
	}
	want(t, s, "d/k", "new")
}

func prefixes(t *testing.T, s blob.Store) {
	ctx := context.Background()
	for _, k := range []string{"u/7/s1/a.png", "u/7/s2/b.txt", "u/70/s3/c", "u/7x", "v/7/d"} {
		put(t, s, k, k)
	}
	if got, w := keys(t, s, "u/7"), []string{"u/7/s1/a.png:12", "u/7/s2/b.txt:12"}; !slices.Equal(got, w) {
		t.Fatalf("list u/7: %v, want %v", got, w)
	}
	if got := keys(t, s, "u"); len(got) != 4 {
		t.Fatalf("list u: %v", got)
	}
	if got := keys(t, s, "none"); len(got) != 0 {
		t.Fatalf("list of nothing: %v", got)
	}
	if err := s.DeletePrefix(ctx, "u/7"); err != nil {
		t.Fatal(err)
	}
	absent(t, s, "u/7/s1/a.png")
	absent(t, s, "u/7/s2/b.txt")
	want(t, s, "u/70/s3/c", "u/70/s3/c")
	want(t, s, "u/7x", "u/7x")
	if err := s.DeletePrefix(ctx, "u/7"); err != nil {
		t.Fatalf("delete of an empty prefix: %v", err)
	}
	if got := keys(t, s, "u"); !slices.Equal(got, []string{"u/70/s3/c:9", "u/7x:4"}) {
		t.Fatalf("list after delete: %v", got)
	}
}

// HostileKeys are keys every Store refuses: each would name a place
// outside a directory or be read differently by two implementations.
var HostileKeys = []string{
	"", "/", "/etc/passwd", "../x", "a/../../x", "a/..", "..", ".", "./a", "a/./b", "a//b", "a/", "/a",
	`a\..\b`, `..\x`, "a\x00b", "\xff\xfe", ".hidden", "a/.blob-1.tmp", strings.Repeat("a", 1025),
}

func hostileKeys(t *testing.T, s blob.Store) {
	ctx := context.Background()
	put(t, s, "inside", "x")
	for _, k := range HostileKeys {
		if err := blob.CheckKey(k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("CheckKey(%q): %v", k, err)
		}
		if _, err := s.Put(ctx, k, strings.NewReader("p")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q): %v", k, err)
		}
		if _, err := s.Create(ctx, k, strings.NewReader("p")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Create(%q): %v", k, err)
		}
		if _, err := s.Append(ctx, k, 0, []byte("p")); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Append(%q): %v", k, err)
		}
		if o, err := s.Open(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			if o != nil {
				o.Close()
			}
			t.Errorf("Open(%q): %v", k, err)
		}
		if err := s.Delete(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%q): %v", k, err)
		}
		if err := s.DeletePrefix(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("DeletePrefix(%q): %v", k, err)
		}
		if _, err := s.List(ctx, k); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q): %v", k, err)
		}
	}
	want(t, s, "inside", "x")
	for _, k := range []string{"a b/ü.png", "a+b/c-d_e.tar.gz", "x..y/z"} {
		put(t, s, k, "fine")
		want(t, s, k, "fine")
	}
}

func concurrentPuts(t *testing.T, s blob.Store) {
	const writers, size = 8, 256 << 10
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := bytes.Repeat([]byte{byte('a' + i)}, size)
			if _, err := s.Put(context.Background(), "one/key", bytes.NewReader(body)); err != nil {
				t.Errorf("put %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	got, err := read(t, s, "one/key")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != size || strings.Count(got, got[:1]) != size {
		t.Fatalf("concurrent puts left %d bytes, not one writer's whole object", len(got))
	}
	if l := keys(t, s, "one"); len(l) != 1 {
		t.Fatalf("list after concurrent puts: %v", l)
	}
}

func concurrentCreates(t *testing.T, s blob.Store) {
	const writers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []int
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Create(context.Background(), "host/key", strings.NewReader(fmt.Sprint(i)))
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
			case !errors.Is(err, blob.ErrExist):
				t.Errorf("create %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d creates succeeded, want 1", len(won))
	}
	want(t, s, "host/key", fmt.Sprint(won[0]))
}
