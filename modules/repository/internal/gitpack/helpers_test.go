package gitpack

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// smallShape is the reference repository most tests read; under -short a
// smaller one (fewer files and commits) with the same kinds of objects.
// The normal run (make test) keeps the full size.
func smallShape() repotest.Shape {
	if testing.Short() {
		return repotest.Shape{Commits: 160, Files: 50, Binaries: 1}
	}
	return repotest.Shape{Commits: 300, Files: 200, Binaries: 1}
}

func repoSmall(tb testing.TB) string { return repotest.Reference(tb, smallShape()) }

// fixtureRoot holds the repositories built once per run and shared by the
// tests that only read them; TestMain removes it.
var fixtureRoot = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "fennec-gitpack-fixtures-") })

func TestMain(m *testing.M) {
	code := m.Run()
	if root, err := fixtureRoot(); err == nil {
		os.RemoveAll(root)
	}
	os.Exit(code)
}

// git runs the git CLI in dir with stdin, failing the test on error.
func git(tb testing.TB, dir string, stdin []byte, args ...string) []byte {
	tb.Helper()
	out, err := gitErr(dir, stdin, args...)
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func gitErr(dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	if err != nil {
		return append(out.Bytes(), errb.Bytes()...), err
	}
	return out.Bytes(), nil
}

// copyRepo copies a bare repository into a fresh temp directory.
func copyRepo(tb testing.TB, src string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "repo.git")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		tb.Fatalf("cp: %v %s", err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		tb.Fatalf("chmod: %v %s", err, out)
	}
	return dst
}

// emptyRepo makes a fresh bare repository.
func emptyRepo(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "empty.git")
	git(tb, "", nil, "init", "-q", "--bare", dir)
	return dir
}

type gitObject struct {
	typ  Type
	data []byte
}

// references memoizes catAll of the reference repositories: repotest
// builds each once and never changes it, and most tests compare against
// one. The maps are shared, so no caller may change them.
var references sync.Map // dir -> *referenceObjects

type referenceObjects struct {
	once sync.Once
	objs map[Hash]gitObject
}

// catAll reads every object of the repository with git cat-file (once per
// run for a repotest reference repository, whose map is shared: read it,
// do not change it).
func catAll(tb testing.TB, dir string) map[Hash]gitObject {
	tb.Helper()
	if !isReference(dir) {
		return catAllNow(tb, dir)
	}
	v, _ := references.LoadOrStore(dir, &referenceObjects{})
	ref := v.(*referenceObjects)
	ref.once.Do(func() { ref.objs = catAllNow(tb, dir) })
	if ref.objs == nil {
		tb.Fatalf("reading the objects of %s failed in another test", dir)
	}
	return ref.objs
}

// isReference tells a repotest reference repository (read-only) from a
// copy or a repository a test builds.
func isReference(dir string) bool {
	return filepath.Dir(dir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(dir), "fennec-refrepo-")
}

func catAllNow(tb testing.TB, dir string) map[Hash]gitObject {
	tb.Helper()
	out := git(tb, dir, nil, "cat-file", "--batch-all-objects", "--batch")
	objs := make(map[Hash]gitObject)
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			tb.Fatalf("cat-file: %q", line)
		}
		h, ok := ParseHex(f[0])
		if !ok {
			tb.Fatalf("cat-file: %q", line)
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			tb.Fatal(err)
		}
		objs[h] = gitObject{typeByName(f[1]), data[:n]}
	}
	return objs
}

// hashesOf lists the ids of objs, sorted.
func hashesOf(objs map[Hash]gitObject) []Hash {
	hs := make([]Hash, 0, len(objs))
	for h := range objs {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return bytes.Compare(hs[i][:], hs[j][:]) < 0 })
	return hs
}

// listFiles lists the files under dir (relative paths), sorted.
func listFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if info.IsDir() {
			out = append(out, rel+"/")
		} else {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func mustOpen(tb testing.TB, dir string) *Store {
	tb.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// checkAll compares every object of want with what s reads.
func checkAll(tb testing.TB, s *Store, want map[Hash]gitObject) {
	tb.Helper()
	for h, o := range want {
		if !s.Has(h) {
			tb.Fatalf("Has(%s) = false", h)
		}
		typ, data, err := s.Read(h)
		if err != nil {
			tb.Fatalf("Read(%s): %v", h, err)
		}
		if typ != o.typ || !bytes.Equal(data, o.data) {
			tb.Fatalf("Read(%s) = %v %d bytes, want %v %d bytes", h, typ, len(data), o.typ, len(o.data))
		}
	}
}

// hashOf is an object's id.
func hashOf(t Type, data []byte) Hash {
	h, _ := HashObject(t, data)
	return h
}
