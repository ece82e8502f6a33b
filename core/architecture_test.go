package fennec_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
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

type goPackage struct {
	ImportPath string
	Imports    []string
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

// area splits an import path of this repository into its top-level folder
// and, under modules/, the module name and whether it is internal.
func area(path string) (top, module string, internal bool, ours bool) {
	if path != modulePath && !strings.HasPrefix(path, modulePath+"/") {
		return "", "", false, false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
	parts := strings.Split(rest, "/")
	top = parts[0]
	if top == "modules" && len(parts) > 1 {
		module = parts[1]
		internal = len(parts) > 2 && parts[2] == "internal"
	}
	return top, module, internal, true
}

// TestArchitecture enforces the arrows of ARCHITECTURE.md: core imports no
// module; sdk imports no core; plugins import only sdk; a module imports no
// other module's internal/ and no module of its own layer or above.
func TestArchitecture(t *testing.T) {
	for _, p := range listPackages(t) {
		fromTop, fromMod, _, _ := area(p.ImportPath)
		for _, imp := range p.Imports {
			toTop, toMod, toInternal, ours := area(imp)
			if !ours {
				continue
			}
			if v := violation(fromTop, fromMod, toTop, toMod, toInternal); v != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, v)
			}
		}
		for _, imp := range p.Imports {
			if v := pluginHostViolation(p.ImportPath, imp); v != "" {
				t.Errorf("%s imports %s: %s", p.ImportPath, imp, v)
			}
		}
		if fromTop == "modules" {
			if _, known := moduleLayer[fromMod]; !known {
				t.Errorf("module %q has no layer in moduleLayer (core/architecture_test.go): place it", fromMod)
			}
		}
	}
}

func violation(fromTop, fromMod, toTop, toMod string, toInternal bool) string {
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
			if toMod == fromMod {
				return ""
			}
			if toInternal {
				return "a module may not import another module's internal/"
			}
			if fromMod == "stock" {
				return ""
			}
			from, fok := moduleLayer[fromMod]
			to, tok := moduleLayer[toMod]
			if !fok || !tok || to >= from {
				return "a module may import only modules of a lower layer"
			}
		}
	}
	return ""
}

// pluginHostViolation keeps the plugin host kind-agnostic: core/plugin may
// import the SDK's base package (sdk/plugin and its proto) and no kind
// (sdk/authprovider, sdk/executor...). Each kind's descriptor and client live
// with the kind, so adding a kind never touches the host.
func pluginHostViolation(from, to string) string {
	host := modulePath + "/core/plugin"
	if from != host && !strings.HasPrefix(from, host+"/") {
		return ""
	}
	sdk := modulePath + "/sdk/"
	base := sdk + "plugin"
	if strings.HasPrefix(to, sdk) && to != base && !strings.HasPrefix(to, base+"/") {
		return "core/plugin may import only the base sdk/plugin, no plugin kind"
	}
	return ""
}

// TestArchitectureRulesCatchViolations proves the rules above can fail.
func TestArchitectureRulesCatchViolations(t *testing.T) {
	cases := []struct {
		fromTop, fromMod, toTop, toMod string
		internal                       bool
	}{
		{"core", "", "modules", "identity", false},
		{"sdk", "", "core", "", false},
		{"plugins", "", "core", "", false},
		{"modules", "projects", "modules", "identity", true},
		{"modules", "identity", "modules", "projects", false},
		{"modules", "ci", "modules", "issues", false},
	}
	for _, c := range cases {
		if violation(c.fromTop, c.fromMod, c.toTop, c.toMod, c.internal) == "" {
			t.Errorf("rule missed: %s/%s -> %s/%s (internal %v)", c.fromTop, c.fromMod, c.toTop, c.toMod, c.internal)
		}
	}
	if v := violation("modules", "projects", "modules", "identity", false); v != "" {
		t.Errorf("projects -> identity should be allowed, got %q", v)
	}
	for _, to := range []string{"/sdk/authprovider", "/sdk/authprovider/proto", "/sdk/executor", "/sdk/pluginx"} {
		if pluginHostViolation(modulePath+"/core/plugin", modulePath+to) == "" {
			t.Errorf("rule missed: core/plugin -> %s", to)
		}
	}
	for _, to := range []string{"/sdk/plugin", "/sdk/plugin/proto", "/core/config"} {
		if v := pluginHostViolation(modulePath+"/core/plugin", modulePath+to); v != "" {
			t.Errorf("core/plugin -> %s should be allowed, got %q", to, v)
		}
	}
	if v := pluginHostViolation(modulePath+"/core", modulePath+"/sdk/authprovider"); v != "" {
		t.Errorf("core (the app assembly) -> sdk/authprovider should be allowed, got %q", v)
	}
}
