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

// httpImports are what only a module's HTTP adapter may import: its pages
// (core/web) are part of it.
var httpImports = []string{modulePath + "/core/api", modulePath + "/core/web", "net/http"}

// isAdapterFile: a module's HTTP adapter is its internal files named
// http*.go, or any file of a package internal/httpapi.
func isAdapterFile(relPath string) bool {
	dir, name := filepath.Split(filepath.ToSlash(relPath))
	return strings.HasPrefix(name, "http") || strings.Contains(dir, "/internal/httpapi/")
}

// isClientFile: a module's outgoing HTTP (webhook deliveries, repository
// imports) is its internal files named httpclient*.go.
func isClientFile(relPath string) bool {
	return strings.HasPrefix(filepath.Base(relPath), "httpclient")
}

// clientFileViolations says what an outgoing HTTP client file breaks: it
// is built on core/netguard, so no module connects where an administrator
// has not allowed it (a hook or an import URL is a user's, and may name
// the host's own network), and it is no adapter, so it imports no
// core/api.
func clientFileViolations(relPath string, src []byte) []string {
	if strings.HasSuffix(relPath, "_test.go") || !isClientFile(relPath) {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, parser.ImportsOnly)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	var out []string
	guarded := false
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch p {
		case modulePath + "/core/netguard":
			guarded = true
		case modulePath + "/core/api":
			out = append(out, relPath+" imports core/api: an outgoing client is not the adapter; it returns plain errors")
		}
	}
	if !guarded {
		out = append(out, relPath+" does not import core/netguard: every outgoing connection goes through the guard")
	}
	return out
}

// outgoingHTTP are what makes an outgoing request in net/http.
var outgoingHTTP = []string{"Client", "Transport", "DefaultClient", "DefaultTransport", "Get", "Head", "Post", "PostForm"}

// strayClientViolations says where a module file that is not an outgoing
// client (httpclient*.go) makes outgoing HTTP requests: an adapter serves
// requests, it does not send them. A command (package main) is exempt, as
// for serviceFileViolations.
func strayClientViolations(relPath string, src []byte) []string {
	if strings.HasSuffix(relPath, "_test.go") || isClientFile(relPath) {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, 0)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	if f.Name.Name == "main" {
		return nil
	}
	httpName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "net/http" {
			httpName = "http"
			if imp.Name != nil {
				httpName = imp.Name.Name
			}
		}
	}
	if httpName == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == httpName && slices.Contains(outgoingHTTP, sel.Sel.Name) {
			out = append(out, relPath+" uses http."+sel.Sel.Name+": outgoing HTTP lives in internal/httpclient*.go, behind core/netguard")
		}
		return true
	})
	return out
}

// fxImportViolations says whether a module file (its tests included)
// imports go.uber.org/fx: a module registers through the core's typed
// functions (fennec.Provide, ProvideRoutes, Extension...) and takes part in
// start and stop through Provisioner, Runner and CleanerUpper; fx stays
// behind the core.
func fxImportViolations(relPath string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, parser.ImportsOnly)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "go.uber.org/fx" || strings.HasPrefix(p, "go.uber.org/fx/") {
			return []string{relPath + " imports " + p + ": modules register through the core (fennec.Provide, fennec.In, the Provide* functions), never fx"}
		}
	}
	return nil
}

// serviceFileViolations says what a non-test file of a module's internal/
// imports that only its HTTP adapter may (nil when nothing). A command
// (package main, such as the repository's gitbench) is a client of the
// server, not the module's service, and may speak HTTP.
func serviceFileViolations(relPath string, src []byte) []string {
	if strings.HasSuffix(relPath, "_test.go") || isAdapterFile(relPath) {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, parser.ImportsOnly)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	if f.Name.Name == "main" {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, banned := range httpImports {
			if p == banned {
				out = append(out, relPath+" imports "+p+": only the HTTP adapter (internal/http*.go or internal/httpapi) speaks HTTP; the service returns domain errors")
			}
		}
	}
	return out
}

// rootAliasViolations says which top-level names of a module's root
// package are its internal/'s under another name (type T = internal.T,
// var E = internal.E): the contract is defined in the open, and internal/
// imports it.
func rootAliasViolations(relPath string, src []byte) []string {
	if strings.HasSuffix(relPath, "_test.go") {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, 0)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	internalName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasSuffix(p, "/internal") {
			internalName = "internal"
			if imp.Name != nil {
				internalName = imp.Name.Name
			}
		}
	}
	if internalName == "" {
		return nil
	}
	fromInternal := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == internalName
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if fromInternal(s.Type) {
					out = append(out, relPath+": type "+s.Name.Name+" is defined in internal/; define the contract in the open")
				}
			case *ast.ValueSpec:
				for i, v := range s.Values {
					if fromInternal(v) && i < len(s.Names) {
						out = append(out, relPath+": "+s.Names[i].Name+" is internal/'s; define the contract in the open")
					}
				}
			}
		}
	}
	return out
}

// contractFileViolations says what a non-test file of a module's public
// subpackage (its contract, its events) imports that a contract may not:
// HTTP, or anyone's internal/. Other modules import the contract, so it
// carries plain Go and speaks no transport. A test-support package
// (stocktest, repotest) is a client of the server and may.
func contractFileViolations(relPath string, src []byte) []string {
	if strings.HasSuffix(relPath, "_test.go") || strings.HasSuffix(filepath.Base(filepath.Dir(relPath)), "test") {
		return nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), relPath, src, parser.ImportsOnly)
	if err != nil {
		return []string{relPath + ": " + err.Error()}
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if slices.Contains(httpImports, p) || strings.HasSuffix(p, "/internal") || strings.Contains(p, "/internal/") {
			out = append(out, relPath+" imports "+p+": a module's contract is plain Go, with no transport and no internal/")
		}
	}
	return out
}

// TestModuleAnatomy holds every module to the anatomy: its service
// implementation imports no HTTP, its outgoing HTTP is guarded, its root
// package re-exports nothing of internal/, its contract speaks no
// transport.
func TestModuleAnatomy(t *testing.T) {
	mods, err := os.ReadDir(filepath.Join("..", "modules"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		if !m.IsDir() {
			continue
		}
		mod := m.Name()
		root := filepath.Join("..", "modules", mod)
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			relPath, _ := filepath.Rel("..", path)
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			relPath = filepath.ToSlash(relPath)
			vs := fxImportViolations(relPath, src)
			switch {
			case strings.Contains(relPath, "/internal/"):
				vs = append(vs, serviceFileViolations(relPath, src)...)
				vs = append(vs, clientFileViolations(relPath, src)...)
				vs = append(vs, strayClientViolations(relPath, src)...)
			case filepath.Dir(relPath) == "modules/"+mod:
				vs = append(vs, rootAliasViolations(relPath, src)...)
			case !strings.Contains(relPath, "/testdata/"):
				vs = append(vs, contractFileViolations(relPath, src)...)
			}
			for _, v := range vs {
				t.Error(v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestModuleAnatomyRulesCatchViolations proves each anatomy rule can fail.
func TestModuleAnatomyRulesCatchViolations(t *testing.T) {
	handler := []byte("package internal\n\nimport (\n\t\"net/http\"\n\n\t\"" + modulePath + "/core/api\"\n)\n")
	if got := serviceFileViolations("modules/x/internal/merge.go", handler); len(got) != 2 {
		t.Errorf("a service file importing HTTP: %q", got)
	}
	for _, ok := range []string{"modules/x/internal/httpmerge.go", "modules/x/internal/httpapi/merge.go", "modules/x/internal/merge_test.go"} {
		if got := serviceFileViolations(ok, handler); got != nil {
			t.Errorf("%s may import HTTP: %q", ok, got)
		}
	}
	command := append([]byte("package main"), handler[len("package internal"):]...)
	if got := serviceFileViolations("modules/x/internal/xbench/main.go", command); got != nil {
		t.Errorf("a command may import HTTP: %q", got)
	}
	unguarded := []byte("package internal\n\nimport (\n\t\"net/http\"\n\n\t\"" + modulePath + "/core/api\"\n)\n")
	if got := clientFileViolations("modules/x/internal/httpclient.go", unguarded); len(got) != 2 {
		t.Errorf("an outgoing client without the guard, with core/api: %q", got)
	}
	guarded := []byte("package internal\n\nimport (\n\t\"net/http\"\n\n\t\"" + modulePath + "/core/netguard\"\n)\n")
	if got := clientFileViolations("modules/x/internal/httpclient.go", guarded); got != nil {
		t.Errorf("a guarded client: %q", got)
	}
	if got := clientFileViolations("modules/x/internal/httpmerge.go", unguarded); got != nil {
		t.Errorf("an adapter is no client: %q", got)
	}
	stray := []byte("package internal\n\nimport \"net/http\"\n\nvar c = &http.Client{}\n\nfunc get() { http.Get(\"x\") }\n")
	if got := strayClientViolations("modules/x/internal/httpmerge.go", stray); len(got) != 2 {
		t.Errorf("an adapter sending requests: %q", got)
	}
	if got := strayClientViolations("modules/x/internal/httpclient.go", stray); got != nil {
		t.Errorf("the client file may: %q", got)
	}
	withFx := []byte("package x\n\nimport \"go.uber.org/fx\"\n")
	if got := fxImportViolations("modules/x/x_test.go", withFx); len(got) != 1 {
		t.Errorf("a module importing fx: %q", got)
	}
	alias := []byte("package x\n\nimport in \"" + modulePath + "/modules/x/internal\"\n\ntype View = in.View\n\nvar ErrNotFound, Other = in.ErrNotFound, 1\n\nfunc Module() any { return in.New }\n")
	if got := rootAliasViolations("modules/x/x.go", alias); len(got) != 2 {
		t.Errorf("aliases of internal/: %q", got)
	}
	open := []byte("package x\n\nimport \"" + modulePath + "/modules/x/internal\"\n\ntype View struct{}\n\nfunc Module() any { return internal.New }\n")
	leaky := []byte("package contract\n\nimport (\n\t\"net/http\"\n\n\t\"" + modulePath + "/core/api\"\n\t\"" + modulePath + "/modules/y/internal\"\n)\n")
	if got := contractFileViolations("modules/x/contract/contract.go", leaky); len(got) != 3 {
		t.Errorf("a contract importing HTTP and internal/: %q", got)
	}
	if got := contractFileViolations("modules/x/xtest/xtest.go", leaky); got != nil {
		t.Errorf("a test-support package may: %q", got)
	}
	if got := rootAliasViolations("modules/x/x.go", open); got != nil {
		t.Errorf("a contract in the open: %q", got)
	}
}
