package fennec_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
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
	"activity":      6, // listens to events of the modules below (pushes, notes...)
	"repository":    2,
	"ci":            3,
	"issues":        3,
	"snippets":      3,
	"mergerequests": 4,
	"notes":         5,
	"notifications": 6,
	"webhooks":      6,
	"stock":         100, // the bundle of all modules
}

// coreImports is what each core package may import of core/ and sdk/, as
// its doc.go promises ("pkg/..." covers pkg's subpackages). A new core
// package must be placed here, with what its doc.go says it imports. The
// core imports no module whatever this says (see topViolation).
var coreImports = map[string][]string{
	"core":            {"core/...", "sdk/..."}, // the front door assembles everything
	"core/fennectest": {"core", "core/..."},    // runs a whole app
	"core/api":        {"core/auth", "core/log", "core/config", "core/store"},
	"core/auth":       nil,
	"core/config":     nil,
	"core/events":     {"core/store"},
	"core/executors":  {"core", "core/config", "core/plugin", "sdk/executor", "sdk/executor/...", "sdk/plugin"}, // the executor kind's host side, beside the kind-agnostic host
	"core/log":        nil,
	"core/netguard":   nil,
	"core/plugin":     {"core/config", "sdk/plugin", "sdk/plugin/..."}, // the base, never a kind
	"core/sealed":     nil,
	"core/store":      nil,
}

// testHarnesses start a whole application for black-box tests. Any test may
// use them although they sit above the package under test (a module's
// tests run the stock bundle; core/api's tests run an app): the layer
// orders bind test code otherwise, and the arrows between the top-level
// folders (core imports no module...) bind it without exception.
var testHarnesses = []string{"core", "core/fennectest", "modules/stock/stocktest"}

// testImportExceptions are the test imports that break a rule on purpose,
// each with its reason. An entry no test needs any more fails the test, so
// the list stays as small as the code allows.
var testImportExceptions = []struct{ from, to, why string }{
	{"core", "modules/identity", "the embedding example and the app tests run one real module, with users and tokens"},
	{"core/api", "modules/identity", "the conventions tests sign in with identity's real tokens and sessions"},
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
}
