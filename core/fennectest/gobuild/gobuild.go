package gobuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Install puts the program of package pkg, built as `go build [args] pkg`
// would, at dst (a fresh copy the test may do anything with), and fails tb
// when it cannot be built. pkg is a directory relative to the test's
// working directory ("../../plugins/executor-shell", ".") or an import
// path; args are build flags such as "-ldflags", "-X main.version=test".
func Install(tb testing.TB, pkg, dst string, args ...string) {
	tb.Helper()
	if err := InstallTo(pkg, dst, args...); err != nil {
		tb.Fatal(err)
	}
}

// InstallTo is Install for a TestMain or a sync.Once, where there is no
// testing.TB: it returns the error.
func InstallTo(pkg, dst string, args ...string) error {
	return withBuild(pkg, args, func(bin string) error {
		if err := copyFile(bin, dst); err != nil {
			return fmt.Errorf("gobuild: install %s: %w", pkg, err)
		}
		return nil
	})
}

// Build returns the path of the cached program of pkg built with args,
// building it first if no test of this run (or of an earlier one, with the
// same sources) did. The file is shared, and replaced once the sources
// change: run it, never change it (Install gives a copy of one's own).
func Build(pkg string, args ...string) (string, error) {
	var path string
	err := withBuild(pkg, args, func(bin string) error { path = bin; return nil })
	return path, err
}

// withBuild calls use with the program of pkg built with args, holding the
// program's lock: a build of newer sources cannot remove it meanwhile.
// Only the newest build of each program is kept (older sources' builds
// would pile up, a binary per edit).
func withBuild(pkg string, args []string, use func(bin string) error) error {
	program, key, err := cacheKey(pkg, args)
	if err != nil {
		return fmt.Errorf("gobuild: %s: %w", pkg, err)
	}
	root := filepath.Join(os.TempDir(), "fennec-gobuild")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	entry := filepath.Join(root, program+"-"+key)
	unlock, err := lock(filepath.Join(root, program+".lock"))
	if err != nil {
		return fmt.Errorf("gobuild: lock: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(entry, "ready")); err == nil {
		now := time.Now()
		_ = os.Chtimes(entry, now, now) // in use: not pruned
		return use(filepath.Join(entry, "program"))
	}
	prune(root)
	old, _ := filepath.Glob(filepath.Join(root, program+"-*"))
	for _, dir := range old {
		_ = os.RemoveAll(dir)
	}
	tmp := entry + ".building"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", append(append([]string{"build"}, args...), "-o", filepath.Join(tmp, "program"), pkg)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("gobuild: go build %s: %v\n%s", pkg, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, "ready"), nil, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, entry); err != nil {
		return err
	}
	return use(filepath.Join(entry, "program"))
}

// lock takes an exclusive flock on path: between processes and between
// goroutines of one process alike (each call opens its own descriptor).
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// prune removes the builds no run used for a week (programs no test builds
// any more, other checkouts).
func prune(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err == nil && time.Since(info.ModTime()) > 7*24*time.Hour {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// toolchain is what, besides the sources, decides what go build makes.
var toolchain = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "CC", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	return string(out), nil
})

// cacheKey hashes the toolchain, the flags and the sources of pkg and of
// everything it imports: the content of the files of packages outside the
// module cache (this repository, the SDK it replaces), the directory (its
// path carries the version, and it is read-only) of the others. The
// standard library comes with the toolchain's version.
func cacheKey(pkg string, args []string) (program, key string, err error) {
	env, err := toolchain()
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "gobuild v1\n%s\n%q\n", env, args)
	modCache := ""
	if lines := strings.Split(env, "\n"); len(lines) > 9 {
		modCache = lines[9] // go env prints one line per name, in order
	}
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles", pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	main := ""
	for {
		var p struct {
			ImportPath, Dir string
			Standard        bool
			Module          *struct{ GoMod string }
			GoFiles, CgoFiles, CFiles, CXXFiles, HFiles,
			SFiles, SysoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", "", err
		}
		if p.Standard {
			continue
		}
		main = p.Dir // go list -deps lists pkg itself last
		fmt.Fprintf(h, "package %s %s\n", p.ImportPath, p.Dir)
		if modCache != "" && strings.HasPrefix(p.Dir, modCache+string(filepath.Separator)) {
			continue
		}
		files := [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles}
		if p.Module != nil && p.Module.GoMod != "" {
			files = append(files, []string{p.Module.GoMod, strings.TrimSuffix(p.Module.GoMod, ".mod") + ".sum"})
		}
		for _, list := range files {
			for _, name := range list {
				path := name
				if !filepath.IsAbs(path) {
					path = filepath.Join(p.Dir, name)
				}
				data, err := os.ReadFile(path)
				if err != nil && !os.IsNotExist(err) {
					return "", "", err
				}
				fmt.Fprintf(h, "file %s %d\n", path, len(data))
				h.Write(data)
			}
		}
	}
	// The program is the package's directory with the flags: one build of
	// each is kept, the one of the newest sources.
	id := sha256.Sum256([]byte(fmt.Sprintf("%s\n%q", main, args)))
	return hex.EncodeToString(id[:])[:16], hex.EncodeToString(h.Sum(nil))[:32], nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
