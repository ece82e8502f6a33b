package fennec_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/fennec-forge/fennec"

// moduleLayer ranks the modules of ARCHITECTURE.md: a module may import the
// public package of a module of a lower rank only. A new module must be
// placed here before it can land.
var moduleLayer = map[string]int{
	"identity":      0,
	"projects":      1,
	"oauth":         1, // beside projects, above identity: its password check, users and token resolver
	"repository":    2,
	"collab":        2, // the collaboration base, below every module whose targets register with it (collab.ProvideKinds)
	"ci":            3,
	"issues":        3,
	"snippets":      3,
	"activity":      3, // listens to events of the modules below (pushes...); asks collab who may see a target
	"mergerequests": 4, // above ci; labels, milestones and issue closing through collab's contract, not issues
	"notifications": 5,
	"webhooks":      5,
	"stock":         100, // the bundle of all modules
}

// coreImports is what each core package may import of core/ and sdk/, as
// its doc.go promises ("pkg/..." covers pkg's subpackages). A new core
// package must be placed here, with what its doc.go says it imports. The
// core imports no module whatever this says (see topViolation).
var coreImports = map[string][]string{
	// Test support beside the harness: builds the programs tests run.
	"core/fennectest/gobuild": nil,
	// Test support: drives a real Chromium for the pages' tests.
	"core/fennectest/chrome": nil,
	// Test support: runs a real PostgreSQL for the store engine's tests.
	"core/fennectest/pgserver": nil,

	"core":            {"core/...", "sdk/..."}, // the front door assembles everything
	"core/fennectest": {"core", "core/..."},    // runs a whole app
	"core/api":        {"core/auth", "core/log", "core/config", "core/store", "core/isotime"},
	"core/auth":       nil,
	"core/backoff":    nil, // the one retry policy, a leaf every retrying loop uses
	"core/blob":       nil, // the files seam (traces, artifacts, uploads, host keys)
	// The blob seam's contract, run on every implementation.
	"core/blob/blobtest": {"core/blob"},
	"core/config":        nil,
	"core/events":        {"core/store", "core/backoff"},
	"core/executors":     {"core", "core/api", "core/config", "core/plugin", "sdk/executor", "sdk/executor/...", "sdk/plugin"}, // the executor kind's host side, beside the kind-agnostic host
	"core/log":           nil,
	"core/isotime":       nil,
	"core/netguard":      nil,
	"core/plugin":        {"core/config", "core/backoff", "sdk/plugin", "sdk/plugin/..."}, // the base, never a kind
	"core/sealed":        nil,
	"core/store":         nil,
	// The store's PostgreSQL engine and the contract every engine passes.
	"core/store/postgres":  {"core/store"},
	"core/store/storetest": {"core/store"},
	"core/workqueue":       {"core/store", "core/backoff"},                       // the durable work queue, under every module's retrying work
	"core/markup":          nil,                                                  // Markdown and highlighting, for pages and mail alike
	"core/web":             {"core/api", "core/auth", "core/log", "core/markup"}, // the web interface's foundation, beside the API
}

// testHarnesses start a whole application for black-box tests. Any test may
// use them although they sit above the package under test (a module's
// tests run the stock bundle; core/api's tests run an app): the layer
// orders bind test code otherwise, and the arrows between the top-level
// folders (core imports no module...) bind it without exception.
var testHarnesses = []string{"core", "core/fennectest", "core/fennectest/gobuild", "core/fennectest/chrome", "core/fennectest/pgserver", "modules/stock/stocktest"}

// testImportExceptions are the test imports that break a rule on purpose,
// each with its reason. An entry no test needs any more fails the test, so
// the list stays as small as the code allows.
var testImportExceptions = []struct{ from, to, why string }{
	{"core/store/storetest", "core/store/postgres", "the store's contract runs on every engine, beside the suite"},
	{"core", "modules/identity", "the embedding example and the app tests run one real module, with users and tokens"},
	{"core/api", "modules/identity", "the conventions tests sign in with identity's real tokens and sessions"},
	{"core/web", "modules/stock/stocktest", "the site is tested with the stock app's real sign-in pages and sessions"},
	{"core/web", "modules/stock", "the site is tested under a prefix with the stock app, as the README embeds it"},
	{"core/web", "core/config", "the prefix test configures the app it embeds"},
	{"core/plugin", "sdk/authprovider", "the host is proven with a real kind, which the host itself must not import"},
	{"plugins/auth-ldap", "core/plugin", "the shipped plugin passes its conformance suite through the real host"},
	{"plugins/auth-ldap", "core/config", "the real host is configured with the plugin's entry"},
	{"plugins/executor-shell", "core/plugin", "the shipped executor passes its conformance suite through the real host"},
	{"plugins/executor-shell", "core/config", "the real host is configured with the executor's entry"},
	{"plugins/executor-bwrap", "core/plugin", "the shipped sandbox passes its conformance suite through the real host"},
	{"plugins/executor-bwrap", "core/config", "the real host is configured with the executor's entry"},
}

type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string // of the package's own _test.go files
	XTestImports []string // of its external test package (package x_test)
	Dir          string
	GoFiles      []string // its code, without tests
	TestGoFiles  []string
	XTestGoFiles []string
}

// moduleDirs are the Go modules of the repository, relative to it: the
// server and the SDK (a module of its own, so plugin authors depend on it
// alone). `go list ./...` does not cross into a nested module.
var moduleDirs = []string{".", "sdk"}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	var pkgs []goPackage
	for _, dir := range moduleDirs {
		pkgs = append(pkgs, listModule(t, filepath.Join("..", dir))...)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages; run from the repository", len(pkgs))
	}
	return pkgs
}

func listModule(t *testing.T, dir string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	return pkgs
}

// rel is an import path of this repository relative to it ("core/api"),
// and false for anything else.
func rel(path string) (string, bool) {
	if !strings.HasPrefix(path, modulePath+"/") {
		return "", false
	}
	return strings.TrimPrefix(path, modulePath+"/"), true
}

// area splits a relative path into its top-level folder and, under
// modules/, the module name and whether it is internal.
func area(path string) (top, module string, internal bool) {
	parts := strings.Split(path, "/")
	top = parts[0]
	if top == "modules" && len(parts) > 1 {
		module = parts[1]
		internal = len(parts) > 2 && parts[2] == "internal"
	}
	return top, module, internal
}

// matches reports whether path is pattern, or under it for "x/...".
func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(path, base+"/")
	}
	return pattern == path
}

// TestArchitecture enforces the arrows of ARCHITECTURE.md on every package
// and on its tests (in-package and external): core imports no module; sdk
// imports no core; plugins import only sdk; a module imports no other
// module's internal/ and no module of its own layer or above; each core
// package imports only what its doc.go promises.
func TestArchitecture(t *testing.T) {
	used := map[int]bool{}
	for _, p := range listPackages(t) {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				to, ours := rel(imp)
				if !ours {
					continue
				}
				v, exception := importViolation(from, to, test)
				if exception >= 0 {
					used[exception] = true
				}
				if v != "" {
					kind := "imports"
					if test {
						kind = "test imports"
					}
					t.Errorf("%s %s %s: %s", from, kind, to, v)
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
		if v := placed(from); v != "" {
			t.Error(v)
		}
	}
	for i, e := range testImportExceptions {
		if !used[i] {
			t.Errorf("test import exception %s -> %s is used by no test any more: remove it", e.from, e.to)
		}
	}
}

// placed fails a module or core package that has no place in the tables.
func placed(path string) string {
	top, mod, _ := area(path)
	switch top {
	case "modules":
		if _, ok := moduleLayer[mod]; !ok {
			return "module " + mod + " has no layer in moduleLayer (core/architecture_test.go): place it"
		}
	case "core":
		if _, ok := coreImports[path]; !ok {
			return "core package " + path + " is not in coreImports (core/architecture_test.go): say what its doc.go lets it import"
		}
	}
	return ""
}

// importViolation says why from may not import to ("" when it may); test
// is for imports of from's _test.go files. exception is the index in
// testImportExceptions of the entry that allowed it, or -1.
func importViolation(from, to string, test bool) (v string, exception int) {
	if from == to {
		return "", -1
	}
	if test {
		for i, e := range testImportExceptions {
			if e.from == from && e.to == to {
				return "", i
			}
		}
	}
	if v := topViolation(from, to); v != "" {
		return v, -1
	}
	if v := publicContractViolation(from, to); v != "" && !test {
		return v, -1
	}
	if test && slices.Contains(testHarnesses, to) {
		return "", -1
	}
	if v := moduleLayerViolation(from, to); v != "" {
		return v, -1
	}
	return coreLayerViolation(from, to), -1
}

// topViolation: the arrows between the top-level folders, and the privacy
// of a module's internal/.
func topViolation(from, to string) string {
	fromTop, fromMod, _ := area(from)
	toTop, toMod, toInternal := area(to)
	switch fromTop {
	case "core":
		if toTop != "core" && toTop != "sdk" {
			return "core may import only core and sdk"
		}
	case "sdk":
		if toTop != "sdk" {
			return "sdk may import only sdk"
		}
	case "plugins":
		if toTop != "sdk" && toTop != "plugins" {
			return "plugins may import only sdk"
		}
	case "modules":
		switch toTop {
		case "hostapp", "plugins":
			return "modules may not import the host or plugins"
		case "modules":
			if toMod != fromMod && toInternal {
				return "a module may not import another module's internal/"
			}
		}
	}
	return ""
}

// moduleLayerViolation: a module imports modules of a lower layer only
// (the stock bundle imports them all).
func moduleLayerViolation(from, to string) string {
	fromTop, fromMod, _ := area(from)
	toTop, toMod, _ := area(to)
	if fromTop != "modules" || toTop != "modules" || toMod == fromMod || fromMod == "stock" {
		return ""
	}
	f, fok := moduleLayer[fromMod]
	l, tok := moduleLayer[toMod]
	if !fok || !tok || l >= f {
		return "a module may import only modules of a lower layer"
	}
	return ""
}

// coreLayerViolation: a core package imports of core/ and sdk/ only what
// coreImports (its doc.go) allows. This also keeps the plugin host
// kind-agnostic: core/plugin imports the base sdk/plugin and no kind, so
// adding a kind never touches the host.
func coreLayerViolation(from, to string) string {
	if top, _, _ := area(from); top != "core" {
		return ""
	}
	allowed, known := coreImports[from]
	if !known {
		return "" // placed() reports it
	}
	for _, pattern := range allowed {
		if matches(pattern, to) {
			return ""
		}
	}
	if len(allowed) == 0 {
		return from + " may import no other Fennec package (its doc.go)"
	}
	return from + " may import only " + strings.Join(allowed, ", ") + " (its doc.go)"
}

// TestArchitectureRulesCatchViolations proves each rule above can fail, on
// synthetic imports, for code and for tests.
func TestArchitectureRulesCatchViolations(t *testing.T) {
	refused := []struct {
		from, to string
		test     bool
	}{
		// The arrows between folders, for code and tests alike.
		{"core", "modules/identity", false},
		{"core/store", "modules/identity", true},
		{"core/api", "modules/projects", true},
		{"sdk/plugin", "core/plugin", false},
		{"sdk/authprovider", "core/config", true},
		{"plugins/auth-ldap", "core/plugin", false},
		{"plugins/executor-docker", "core/plugin", true}, // only the named exceptions may
		{"modules/identity", "hostapp", true},
		// Another module's internal/, even from a test, even a harness's module.
		{"modules/projects", "modules/identity/internal", false},
		{"modules/projects", "modules/identity/internal", true},
		{"modules/stock", "modules/identity/internal", true},
		// Module layers: code and tests.
		{"modules/identity", "modules/projects", false},
		{"modules/identity", "modules/projects", true},
		{"modules/ci", "modules/issues", false},
		{"modules/projects/internal", "modules/repository", true},
		// Production code may not import a harness above it.
		{"modules/identity", "modules/stock/stocktest", false},
		{"core/api", "core/fennectest", false},
		// Core sub-layers, as the doc.go files promise.
		{"core/store", "core/api", false},
		{"core/store", "core/events", true},
		{"core/auth", "core/store", false},
		{"core/config", "core/log", false},
		{"core/log", "core/config", false},
		{"core/netguard", "core/config", false},
		{"core/sealed", "core/store", false},
		{"core/events", "core/api", false},
		{"core/api", "core/events", false},
		{"core/api", "core/plugin", true},
		{"core/plugin", "core/api", false},
		{"core/plugin", "sdk/authprovider", false},
		{"core/plugin", "sdk/authprovider/proto", false},
		{"core/plugin", "sdk/executor", false},
		{"core/plugin", "sdk/pluginx", false},
	}
	for _, c := range refused {
		if v, _ := importViolation(c.from, c.to, c.test); v == "" {
			t.Errorf("rule missed: %s -> %s (test %v)", c.from, c.to, c.test)
		}
	}
	allowed := []struct {
		from, to string
		test     bool
	}{
		{"modules/projects", "modules/identity", false},
		{"modules/repository/internal", "modules/repository/internal/gitpack", false},
		{"modules/identity", "modules/stock/stocktest", true},
		{"modules/identity/internal", "modules/stock/stocktest", true},
		{"modules/stock", "modules/repository", false},
		{"core/api", "core/fennectest", true},
		{"core/api", "core", true},
		{"core/api", "core/store", false},
		{"core/events", "core/store", false},
		{"core/plugin", "sdk/plugin", false},
		{"core/plugin", "sdk/plugin/proto", false},
		{"core/plugin", "core/config", false},
		{"core", "sdk/authprovider", false}, // the app assembly wires the kinds
		{"core", "core/plugin", false},
		{"core/fennectest", "core", false},
		{"core/plugin", "sdk/authprovider", true}, // an exception, below
	}
	for _, c := range allowed {
		if v, _ := importViolation(c.from, c.to, c.test); v != "" {
			t.Errorf("%s -> %s (test %v) should be allowed, got %q", c.from, c.to, c.test, v)
		}
	}
	// The exceptions hold for tests only.
	for _, e := range testImportExceptions {
		if v, _ := importViolation(e.from, e.to, false); v == "" {
			t.Errorf("exception %s -> %s is not needed: the rules allow it anyway", e.from, e.to)
		}
	}
	for _, path := range []string{"modules/newthing", "core/newthing", "core/store/sub"} {
		if placed(path) == "" {
			t.Errorf("%s was not asked to be placed", path)
		}
	}
	// A module's public packages speak no HTTP; its internal/ and its tests
	// may.
	for _, from := range []string{"modules/projects", "modules/repository/event"} {
		if v, _ := importViolation(from, "core/api", false); v == "" {
			t.Errorf("rule missed: %s -> core/api", from)
		}
	}
	for _, c := range []struct {
		from string
		test bool
	}{{"modules/projects/internal", false}, {"modules/projects", true}} {
		if v, _ := importViolation(c.from, "core/api", c.test); v != "" {
			t.Errorf("%s -> core/api (test %v) should be allowed, got %q", c.from, c.test, v)
		}
	}
}

// publicContractViolation keeps the public packages of a module (its root
// package, event/ and any other package outside internal/) free of HTTP:
// what other modules call returns domain errors (projects.ErrNotFound), and
// only the module's internal API layer and core/api know GitLab's answers.
func publicContractViolation(from, to string) string {
	top, mod, internal := area(from)
	if top != "modules" || mod == "" || internal || mod == "stock" {
		return ""
	}
	if to == "core/api" {
		return "a module's public packages may not import core/api: its contract returns domain errors, not HTTP answers"
	}
	return ""
}

const apiPath = modulePath + "/core/api"

// TestErrorsAreMappedAtTheEdge enforces "domain errors inside, HTTP at the
// edge" over the source of every package but core/api itself, tests
// included (they check answers on the wire, or sentinels with errors.Is):
//   - nobody looks inside an API error to decide what happened (a variable or
//     type assertion of type *api.Error, a call of ErrorResponse): callers test
//     domain sentinels with errors.Is;
//   - no package-level variable holds an API error (api.NotFound(...),
//     &api.Error{...}): values shared by concurrent requests are plain
//     sentinels, mapped to a fresh answer per request with API.MapError.
func TestErrorsAreMappedAtTheEdge(t *testing.T) {
	constructors := apiErrorConstructors(t)
	for _, p := range listPackages(t) {
		if p.ImportPath == apiPath {
			continue
		}
		for _, name := range slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles) {
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range apiErrorViolations(path, src, constructors) {
				t.Error(v)
			}
		}
	}
}

// apiErrorConstructors lists the functions of core/api that build an
// *Error (NotFound, Forbidden...), read from its source so that a new one is
// covered without editing this test.
func apiErrorConstructors(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]bool{}
	files, err := filepath.Glob(filepath.Join("api", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("core/api sources: %v (%d files)", err, len(files))
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil {
				continue
			}
			for _, r := range fn.Type.Results.List {
				if star, ok := r.Type.(*ast.StarExpr); ok {
					if id, ok := star.X.(*ast.Ident); ok && id.Name == "Error" {
						out[fn.Name.Name] = true
					}
				}
			}
		}
	}
	if !out["NotFound"] || !out["Forbidden"] {
		t.Fatalf("found no API error constructors in core/api: %v", out)
	}
	return out
}

// apiErrorViolations returns what in one Go file breaks the rules of
// TestErrorsAreMappedAtTheEdge.
func apiErrorViolations(path string, src []byte, constructors map[string]bool) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return []string{path + ": " + err.Error()}
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == apiPath {
			local = "api"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	var out []string
	report := func(n ast.Node, what string) {
		out = append(out, fset.Position(n.Pos()).String()+": "+what)
	}
	isAPI := func(e ast.Expr, name string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || local == "" || (name != "" && sel.Sel.Name != name) {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == local
	}
	isErrorPtr := func(e ast.Expr) bool {
		star, ok := e.(*ast.StarExpr)
		return ok && isAPI(star.X, "Error")
	}
	const inspect = "reads an *api.Error to decide what happened; test the domain sentinel with errors.Is"
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			if n.Type != nil && isErrorPtr(n.Type) {
				report(n, inspect)
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil && isErrorPtr(n.Type) {
				report(n, inspect)
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if isErrorPtr(e) {
					report(e, inspect)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ErrorResponse" {
				report(n, "maps an error to its HTTP answer outside core/api; return it, or use API.WriteError in a raw handler")
			}
		}
		return true
	})
	for _, d := range f.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if isSharedAPIError(v, isAPI, constructors) {
					report(v, "a package-level API error is one response value shared by concurrent requests; declare a sentinel (errors.New) and map it with API.MapError")
				}
			}
		}
	}
	return out
}

// isSharedAPIError reports whether a package-level variable's value is an
// API error: a constructor call (api.NotFound("Project")) or &api.Error{...}.
func isSharedAPIError(v ast.Expr, isAPI func(ast.Expr, string) bool, constructors map[string]bool) bool {
	switch v := v.(type) {
	case *ast.CallExpr:
		sel, ok := v.Fun.(*ast.SelectorExpr)
		return ok && constructors[sel.Sel.Name] && isAPI(sel, sel.Sel.Name)
	case *ast.UnaryExpr:
		lit, ok := v.X.(*ast.CompositeLit)
		return ok && v.Op == token.AND && isAPI(lit.Type, "Error")
	case *ast.CompositeLit:
		return isAPI(v.Type, "Error")
	}
	return false
}
