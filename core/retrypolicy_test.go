package fennec_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// retryName is how the code names a wait between tries.
var retryName = regexp.MustCompile(`(?i)delay|backoff|wait|retry|sleep|interval`)

// TestOneRetryPolicy fails on a loop that grows a wait of its own (a
// doubling delay, a shifted backoff) instead of asking core/backoff, the
// one retry policy: every retrying loop gets the same cap, overflow
// guard and jitter. It recognises the usual shapes by the name of the
// variable; a new shape or name would slip through, which the review
// catches.
func TestOneRetryPolicy(t *testing.T) {
	for _, top := range []string{".", "../modules", "../plugins", "../sdk"} {
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != top && (d.Name() == "testdata" || d.Name() == "backoff" && filepath.Dir(path) == ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, what := range homeMadeBackoffs(f) {
				t.Errorf("%s: %s grows a retry wait by hand; use core/backoff's Policy", path, what)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// homeMadeBackoffs names the waits f grows by hand: w *= 2, w <<= n,
// w = 2*w (or min(2*w, max)), and a shift of a wait (initial << n). A
// wait is a variable named as one, or any variable of a function named
// as one (func backoff(...) { d := min; ... d *= 2 }).
func homeMadeBackoffs(f *ast.File) []string {
	var found []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		inRetryFunc := retryName.MatchString(fn.Name.Name)
		isWait := func(name string) bool { return name != "" && (inRetryFunc || retryName.MatchString(name)) }
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Lhs) != 1 || len(n.Rhs) != 1 {
					return true
				}
				name := lastName(n.Lhs[0])
				if !isWait(name) {
					return true
				}
				switch n.Tok {
				case token.MUL_ASSIGN, token.SHL_ASSIGN:
					found = append(found, fn.Name.Name+": "+name)
				case token.ASSIGN, token.DEFINE:
					if grows(n.Rhs[0], name) {
						found = append(found, fn.Name.Name+": "+name)
					}
				}
			case *ast.BinaryExpr:
				if n.Op == token.SHL && retryName.MatchString(lastName(n.X)) {
					found = append(found, fn.Name.Name+": "+lastName(n.X))
				}
			}
			return true
		})
	}
	return found
}

// grows reports whether e multiplies name by something, possibly inside a
// call (min(2*d, max)).
func grows(e ast.Expr, name string) bool {
	hit := false
	ast.Inspect(e, func(n ast.Node) bool {
		if b, ok := n.(*ast.BinaryExpr); ok && b.Op == token.MUL &&
			(lastName(b.X) == name || lastName(b.Y) == name) {
			hit = true
		}
		return !hit
	})
	return hit
}

// lastName is the identifier of x or of x.y's y; "" for anything else.
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.ParenExpr:
		return lastName(e.X)
	}
	return ""
}

// TestOneRetryPolicyCatchesHomeMadeBackoffs proves the rule sees the
// shapes the five loops had before core/backoff, and leaves the policy's
// callers alone.
func TestOneRetryPolicyCatchesHomeMadeBackoffs(t *testing.T) {
	caught := []string{
		"func backoff(attempt int, max time.Duration) time.Duration {\n d := min\n for d < max { d *= 2 }\n return d }",
		`delay = min(2*delay, time.Minute)`,
		`backoff = min(2*backoff, s.cfg.RetryMax)`,
		`wait := s.cfg.RetryInitial << min(row.Attempts-1, 20)`,
		`b.delay <<= 1`,
		`b.interval = b.interval * 2`,
	}
	for _, src := range caught {
		if found := homeMadeBackoffs(parseBody(t, src)); len(found) == 0 {
			t.Errorf("missed: %s", src)
		}
	}
	fine := []string{
		`wait = s.retry().Delay(failures)`,
		`n := size * 2`,
		`deadline := time.Now().Add(2 * time.Minute)`,
		`buf = make([]byte, 2*len(buf))`,
	}
	for _, src := range fine {
		if found := homeMadeBackoffs(parseBody(t, src)); len(found) != 0 {
			t.Errorf("flagged %s: %v", src, found)
		}
	}
}

// parseBody parses src as a file: a function declaration as it is, else
// statements in the body of a function f.
func parseBody(t *testing.T, src string) *ast.File {
	t.Helper()
	if !strings.HasPrefix(src, "func ") {
		src = "func f() {\n" + src + "\n}"
	}
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+src+"\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
