package gobuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBuildOnceAndAgainAfterAnEdit: concurrent builders of one program
// share one build; an edit of its source makes a new one.
func TestBuildOnceAndAgainAfterAnEdit(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	// A module of its own under a fresh directory: its key is new to the
	// cache, so the first Build really builds.
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/hello\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	t.Chdir(dir)

	var wg sync.WaitGroup
	paths := make([]string, 4)
	errs := make([]error, 4)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = Build(".", "-ldflags", "-X main.v=1")
		}()
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != paths[0] {
			t.Fatalf("build %d: %s %v, want the one build %s", i, paths[i], errs[i], paths[0])
		}
	}
	run := func(bin string) string {
		t.Helper()
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v %s", bin, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(paths[0]); got != "one" {
		t.Fatalf("program says %q", got)
	}
	other, err := Build(".")
	if err != nil || other == paths[0] {
		t.Fatalf("other flags: %s %v, want a build of its own", other, err)
	}

	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	edited, err := Build(".", "-ldflags", "-X main.v=1")
	if err != nil || edited == paths[0] {
		t.Fatalf("after an edit: %s %v, want a new build", edited, err)
	}
	if _, err := os.Stat(paths[0]); !os.IsNotExist(err) {
		t.Errorf("the build of the old source is still kept: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "sub", "hello")
	Install(t, ".", dst, "-ldflags", "-X main.v=1")
	if got := run(dst); got != "two" {
		t.Fatalf("installed program says %q", got)
	}
	for _, p := range []string{other, edited} {
		entry := filepath.Dir(p)
		os.RemoveAll(entry)
		program, _, _ := strings.Cut(filepath.Base(entry), "-")
		os.Remove(filepath.Join(filepath.Dir(entry), program+".lock"))
	}
}
