package fennec_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The blob seam (core/blob) holds while modules reach the files they keep
// only through the blob.Store the core gives them: a module that joins a
// path to the data directory itself writes where an object store would
// not be, and past what Under lets through (the database, the secret
// key, a directory no backup declares). The data directory's path is the
// field Data of the core's configuration, so a module that never reads it
// cannot name a file under it.

const configPath = modulePath + "/core/config"

// dataDirOwners are the module trees that may read the data directory's
// path, with the reason.
var dataDirOwners = map[string]string{
	modulePath + "/modules/repository": "git needs a filesystem: the repositories are directories of the data directory, outside the blob seam",
}

// dataDirAllowed are the files of other modules that may read it, with
// the reason. An entry no file needs any more fails the test.
var dataDirAllowed = map[string]string{}

// TestArchitectureBlobSeam: no module's code, outside the owners and the
// allowed files, reads core/config's Config.Data. It type-checks each
// module package against the export data `go list -export` built, so a
// field named Data of another type (an event's payload) is no hit.
func TestArchitectureBlobSeam(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every package's export data")
	}
	pkgs, exports := listWithExports(t)
	used := map[string]bool{}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(f)
	})
	checked := 0
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, modulePath+"/modules/") || ownedDataDir(p.ImportPath) {
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		checked++
		for sel, s := range info.Selections {
			if !readsDataDir(s) {
				continue
			}
			pos := fset.Position(sel.Pos())
			rel := strings.TrimPrefix(p.ImportPath, modulePath+"/") + "/" + filepath.Base(pos.Filename)
			if _, ok := dataDirAllowed[rel]; ok {
				used[rel] = true
				continue
			}
			t.Errorf("%s:%d reads the data directory's path (config.Config.Data): keep the files in the blob.Store the core provides (core/blob), or say in dataDirAllowed why not", rel, pos.Line)
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d module packages", checked)
	}
	for rel := range dataDirAllowed {
		if !used[rel] {
			t.Errorf("dataDirAllowed lists %s, which no longer reads the data directory's path: remove it", rel)
		}
	}
}

func ownedDataDir(importPath string) bool {
	for tree := range dataDirOwners {
		if importPath == tree || strings.HasPrefix(importPath, tree+"/") {
			return true
		}
	}
	return false
}

// readsDataDir says whether a selection is the field Data of core/config's
// Config (through any embedding).
func readsDataDir(s *types.Selection) bool {
	if s.Kind() != types.FieldVal || s.Obj().Name() != "Data" {
		return false
	}
	field, ok := s.Obj().(*types.Var)
	if !ok || field.Pkg() == nil || field.Pkg().Path() != configPath {
		return false
	}
	return true
}

// listWithExports lists the server module's packages and the export data
// of every package they depend on (built by go list, from the build cache
// when it is warm).
func listWithExports(t *testing.T) ([]goPackage, map[string]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export,Standard", "./...")
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exports := map[string]string{}
	var pkgs []goPackage
	dec := json.NewDecoder(out)
	for {
		var p struct {
			goPackage
			Export   string
			Standard bool
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.Standard && strings.HasPrefix(p.ImportPath, modulePath+"/") {
			pkgs = append(pkgs, p.goPackage)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	return pkgs, exports
}
