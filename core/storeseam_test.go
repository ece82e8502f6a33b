package fennec_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The store's engine seam (core/store/engine.go) holds only while nothing
// above the store reaches under it: a module that opens bbolt itself, or
// walks an engine's buckets, runs on bbolt alone and bypasses what the
// store adds (group commit, the failed-read check, the transaction guard).
// Modules and the core speak to the store through its tables, its
// ordered-key helpers and store.Keys; engines are the store's business.

const storePath = modulePath + "/core/store"

// inStore reports whether an import path is core/store or one of its
// sub-packages (its engines, its engine contract tests): the only code that
// may touch an engine.
func inStore(importPath string) bool {
	return importPath == storePath || strings.HasPrefix(importPath, storePath+"/")
}

// engineTypes are core/store's engine-level names, with what code above the
// store uses instead.
var engineTypes = map[string]string{
	"Engine":   "open a store with store.Open; only core/store and its engines name an Engine",
	"EngineTx": "take a *store.Tx (db.View, db.Update) and use tables or store.Keys",
	"Bucket":   "declare the bucket as store.Keys(\"module.name\") and use its methods (Get, Put, Cursor, Walk...)",
}

// bboltViolation says why a package may not import path ("" when it may).
func bboltViolation(from, path string) string {
	if inStore(from) {
		return ""
	}
	if path == "go.etcd.io/bbolt" || strings.HasPrefix(path, "go.etcd.io/bbolt/") {
		return "only core/store runs on bbolt: use the store's tables and store.Keys, and store.Open for a database file"
	}
	return ""
}

// TestArchitectureStoreSeam: no package outside core/store imports bbolt,
// tests included, and no Go file outside it names an engine-level type.
// engineTypesAllowed are the files above the store that may name its
// engines, with the reason: moving a whole store from one engine to
// another (fennec store copy, restore into PostgreSQL) works on engines,
// below any transaction of a DB.
var engineTypesAllowed = map[string]bool{
	"github.com/fennec-forge/fennec/core/storecopy.go":      true,
	"github.com/fennec-forge/fennec/core/storecopy_test.go": true,
	"github.com/fennec-forge/fennec/core/restore.go":        true,
}

func TestArchitectureStoreSeam(t *testing.T) {
	for _, p := range listPackages(t) {
		if inStore(p.ImportPath) {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if v := bboltViolation(p.ImportPath, imp); v != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, v)
			}
		}
		for _, name := range slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles) {
			if engineTypesAllowed[p.ImportPath+"/"+name] {
				continue
			}
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range engineTypeViolations(path, src) {
				t.Error(v)
			}
		}
	}
}

// engineTypeViolations lists where one Go file (outside core/store) names
// one of engineTypes.
func engineTypeViolations(path string, src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{path + ": " + err.Error()}
	}
	local := ""
	var out []string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != storePath {
			continue
		}
		local = "store"
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == "." {
			// Every engine type would then be a bare name: refuse the dot
			// import itself rather than guess which idents are the store's.
			out = append(out, fset.Position(imp.Pos()).String()+": imports core/store with a dot; name it store")
		}
	}
	if local == "" || local == "." || local == "_" {
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || id.Name != local {
			return true
		}
		if instead, engine := engineTypes[sel.Sel.Name]; engine {
			out = append(out, fset.Position(sel.Pos()).String()+": names store."+sel.Sel.Name+
				", the engine under the store: "+instead)
		}
		return true
	})
	return out
}

// TestArchitectureStoreSeamRulesCatchViolations proves the rules above can
// fail, on synthetic imports and sources.
func TestArchitectureStoreSeamRulesCatchViolations(t *testing.T) {
	for _, c := range []struct{ from, to string }{
		{modulePath + "/modules/issues/internal", "go.etcd.io/bbolt"},
		{modulePath + "/hostapp", "go.etcd.io/bbolt"},
		{modulePath + "/core", "go.etcd.io/bbolt/errors"},
		{modulePath + "/core/storex", "go.etcd.io/bbolt"}, // a neighbour, not a sub-package
	} {
		if bboltViolation(c.from, c.to) == "" {
			t.Errorf("rule missed: %s imports %s", c.from, c.to)
		}
	}
	for _, c := range []struct{ from, to string }{
		{storePath, "go.etcd.io/bbolt"},
		{storePath + "/postgres", "go.etcd.io/bbolt"},
		{modulePath + "/modules/issues/internal", "go.etcd.io/bboltish"},
	} {
		if v := bboltViolation(c.from, c.to); v != "" {
			t.Errorf("%s -> %s should be allowed, got %q", c.from, c.to, v)
		}
	}

	file := func(imp, body string) []byte {
		return []byte("package x\n\nimport " + imp + "\n\n" + body + "\n")
	}
	refused := map[string][]byte{
		"a Bucket":            file(`"`+storePath+`"`, "func f(tx *store.Tx) store.Bucket { return nil }"),
		"an EngineTx":         file(`"`+storePath+`"`, "var _ store.EngineTx"),
		"an Engine, renamed":  file(`fs "`+storePath+`"`, "func f(e fs.Engine) {}"),
		"an Engine in a call": file(`"`+storePath+`"`, "func f() { _ = []store.Engine{} }"),
		"a dot import":        file(`. "`+storePath+`"`, "var _ Keys"),
	}
	for what, src := range refused {
		if len(engineTypeViolations("x.go", src)) == 0 {
			t.Errorf("rule missed: %s", what)
		}
	}
	allowed := map[string][]byte{
		"Keys and Tx":          file(`"`+storePath+`"`, `var k = store.Keys("m.b"); func f(tx *store.Tx) store.Cursor { return k.Cursor(tx) }`),
		"another store":        file(`store "example.com/other/store"`, "var _ store.Engine"),
		"a field named Bucket": file(`"`+storePath+`"`, "type s struct{ Bucket string }; func f(x s) string { return x.Bucket }"),
	}
	for what, src := range allowed {
		if v := engineTypeViolations("x.go", src); len(v) != 0 {
			t.Errorf("%s should be allowed, got %q", what, v)
		}
	}
}
