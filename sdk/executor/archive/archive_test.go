package archive_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/sdk/executor/archive"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"a.txt", "a.txt", true},
		{"*.txt", "a.txt", true},
		{"*.txt", "d/a.txt", false},
		{"d/*.txt", "d/a.txt", true},
		{"**/*.txt", "a.txt", true},
		{"**/*.txt", "d/e/a.txt", true},
		{"**", "d/e/a.txt", true},
		{"d/**", "d/e/a.txt", true},
		{"d/**", "x/e/a.txt", false},
		{"d/**/a.txt", "d/a.txt", true},
		{"d/**/a.txt", "d/x/y/a.txt", true},
		{"d/**/a.txt", "d/x/y/b.txt", false},
		{"d/**/**/a.txt", "d/a.txt", true},
		{"?.log", "a.log", true},
		{"?.log", "ab.log", false},
		{"[ab].log", "b.log", true},
		{"[", "[", false},
		{"out", "out/a", false},
	}
	for _, c := range cases {
		if got := archive.Match(c.pattern, c.name); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

// tree writes files (path -> content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSelect(t *testing.T) {
	dir := tree(t, map[string]string{
		"out/a.txt": "a", "out/sub/b.txt": "b", "logs/x.log": "x", "deep/er/y.log": "y",
		"tracked.go": "t", "build/bin": "bin", ".git/config": "secret", "keep.txt": "k",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "out", "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	sel, err := archive.Select(dir, []string{"out/", "**/*.log", "../up", "/abs", "nothing/*", "etc/**"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"deep/er/y.log", "logs/x.log", "out/a.txt", "out/sub/b.txt"}
	if got := slices.Sorted(slices.Values(sel.Files)); !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
	warn := strings.Join(sel.Warnings, "\n")
	for _, w := range []string{`"../up" is outside`, `"/abs" is outside`, `"nothing/*": no matching files`, "symbolic links are not archived (2 left out)"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings %q lack %q", warn, w)
		}
	}
	sel, err = archive.Select(dir, nil, true, map[string]bool{"tracked.go": true, "keep.txt": true})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"build/bin", "deep/er/y.log", "logs/x.log", "out/a.txt", "out/sub/b.txt"}
	if got := slices.Sorted(slices.Values(sel.Files)); !slices.Equal(got, want) {
		t.Errorf("untracked %q, want %q", got, want)
	}
}

func TestWriteExtractRoundTripAndLimit(t *testing.T) {
	dir := tree(t, map[string]string{"out/a.txt": "alpha", "out/sub/b.txt": strings.Repeat("b", 1000)})
	sel, err := archive.Select(dir, []string{"out"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := archive.Write(&buf, dir, sel, 0)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Write: %d, %v (buffer %d)", n, err, buf.Len())
	}
	dst := t.TempDir()
	if _, err := archive.Extract(bytes.NewReader(buf.Bytes()), int64(buf.Len()), dst, 0); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "out/sub/b.txt")); len(b) != 1000 {
		t.Fatalf("extracted %d bytes", len(b))
	}
	if _, err := archive.Write(new(bytes.Buffer), dir, sel, 100); !errors.Is(err, archive.ErrTooLarge) {
		t.Fatalf("Write past the limit: %v", err)
	}
	if _, err := archive.Extract(bytes.NewReader(buf.Bytes()), int64(buf.Len()), t.TempDir(), 500); !errors.Is(err, archive.ErrTooLarge) {
		t.Fatalf("Extract past the limit: %v", err)
	}
}

// zipOf builds a zip of entries (name -> content); a name ending in "@"
// becomes a symbolic link to content.
func zipOf(t *testing.T, entries [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e[0], Method: zip.Store}
		if name, ok := strings.CutSuffix(e[0], "@"); ok {
			h.Name = name
			h.SetMode(os.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	zw.Close()
	return buf.Bytes()
}

// Zip slip: no entry may land outside the target, whatever its name, and a
// symbolic link already in the target (committed to the repository, say)
// cannot carry an entry out.
func TestExtractRefusesEntriesLeavingTheDirectory(t *testing.T) {
	for name, entries := range map[string][][2]string{
		"dot-dot":        {{"ok.txt", "fine"}, {"../evil.txt", "x"}},
		"deep dot-dot":   {{"a/b/../../../evil.txt", "x"}},
		"absolute":       {{"/tmp/evil.txt", "x"}},
		"through a link": {{"link/evil.txt", "x"}},
		"backslash":      {{"..\\evil.txt", "x"}},
		"only a dot-dot": {{"..", "x"}},
		"dir leaving it": {{"../evildir/", ""}},
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dst := filepath.Join(parent, "target")
			outside := filepath.Join(parent, "outside")
			os.MkdirAll(dst, 0o755)
			os.MkdirAll(outside, 0o755)
			os.Symlink(outside, filepath.Join(dst, "link"))
			data := zipOf(t, entries)
			_, err := archive.Extract(bytes.NewReader(data), int64(len(data)), dst, 0)
			if !errors.Is(err, archive.ErrUnsafeEntry) {
				t.Fatalf("Extract: %v, want ErrUnsafeEntry", err)
			}
			for _, p := range []string{filepath.Join(parent, "evil.txt"), filepath.Join(outside, "evil.txt"), filepath.Join(parent, "evildir"), "/tmp/evil.txt"} {
				if _, err := os.Lstat(p); err == nil {
					os.Remove(p)
					t.Fatalf("%s was written", p)
				}
			}
		})
	}
}

func TestExtractSkipsSymbolicLinks(t *testing.T) {
	data := zipOf(t, [][2]string{{"passwd@", "/etc/passwd"}, {"a.txt", "a"}})
	dst := t.TempDir()
	n, err := archive.Extract(bytes.NewReader(data), int64(len(data)), dst, 0)
	if err != nil || n != 1 {
		t.Fatalf("Extract: %d links skipped, %v", n, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "passwd")); err == nil {
		t.Fatal("a symbolic link was extracted")
	}
}
