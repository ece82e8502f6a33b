package ciexpr

import (
	"path"
	"strings"
	"testing"
)

// FuzzCompileEval: no input panics, a compiled expression stays within the
// token bound, and evaluating it visits at most one node per token (the
// work is counted, not timed: regexp matching is RE2, linear in the text).
func FuzzCompileEval(f *testing.F) {
	for _, seed := range []string{
		`$CI_PIPELINE_SOURCE == "merge_request_event"`,
		`$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`,
		`$CI_COMMIT_TAG`,
		`$VAR =~ /^feature/`,
		`$CI_COMMIT_MESSAGE !~ /skip/i`,
		`($A || $B) && $C`,
		`$A == null || ${B} != 'x'`,
		`$A =~ $B`,
		`((($A)))`,
		`$A =~ /(?!x)/`,
		`$A =~ /a\/b/m`,
		`"` + strings.Repeat("(", 40),
	} {
		f.Add(seed, "feature/x", "/^f.*/")
	}
	f.Fuzz(func(t *testing.T, src, a, b string) {
		e, err := Compile(src)
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok || se.Reason == "" || se.Offset < 0 || se.Offset > len(src) {
				t.Fatalf("Compile(%q) = %#v", src, err)
			}
			return
		}
		if len(src) > MaxExprBytes {
			t.Fatalf("accepted %d bytes", len(src))
		}
		tokens, err := lex(src)
		if err != nil || len(tokens) > MaxTokens {
			t.Fatalf("compiled with %d tokens (%v)", len(tokens), err)
		}
		env := map[string]string{"A": a, "B": b, "C": a + b, "VAR": a, "CI_COMMIT_TAG": b}
		for _, lookup := range []Lookup{vars(env), nil} {
			first, steps := e.evalCounting(lookup)
			if steps > len(tokens) {
				t.Fatalf("%q: %d evaluation steps for %d tokens", src, steps, len(tokens))
			}
			if again, _ := e.evalCounting(lookup); again != first {
				t.Fatalf("%q: evaluation is not deterministic", src)
			}
		}
	})
}

// FuzzGlob: no pattern panics, and patterns made only of literals, * and ?
// agree with path.Match, whose rules for those are fnmatch's under
// FNM_PATHNAME.
func FuzzGlob(f *testing.F) {
	for _, seed := range [][2]string{
		{"docs/**/*.md", "docs/a/b.md"},
		{"*.{js,ts}", "a.ts"},
		{"file[!0-9].txt", "filex.txt"},
		{"a*b?c", "axxbyc"},
		{`\*{a,{b,c}}`, "*c"},
		{"[]-]x", "-x"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := CompileGlob(pattern)
		if err != nil {
			return
		}
		got := g.Match(name)
		if lit, ok := g.Literal(); ok && got != (lit == name) {
			t.Fatalf("literal %q vs %q: %v", lit, name, got)
		}
		if strings.ContainsAny(pattern, `[]{}\`) || strings.Contains(pattern, "**") {
			return
		}
		if want, err := path.Match(pattern, name); err == nil && want != got {
			t.Fatalf("%q vs %q: %v, path.Match says %v", pattern, name, got, want)
		}
	})
}

func BenchmarkCompile(b *testing.B) {
	src := `($CI_PIPELINE_SOURCE == "merge_request_event" || $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH) && $CI_COMMIT_MESSAGE !~ /\[skip (ci|tests)\]/i`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	e := MustCompile(`($CI_PIPELINE_SOURCE == "merge_request_event" || $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH) && $CI_COMMIT_MESSAGE !~ /\[skip (ci|tests)\]/i`)
	env := vars(map[string]string{
		"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main",
		"CI_COMMIT_MESSAGE": "Fix the flaky test in the scheduler\n\nIt waited on a timer.",
	})
	b.ReportAllocs()
	for b.Loop() {
		if !e.Eval(env) {
			b.Fatal("false")
		}
	}
}

// BenchmarkEvalPatternVariable is the =~ $VAR form, whose pattern is
// cached per Expr after the first evaluation.
func BenchmarkEvalPatternVariable(b *testing.B) {
	e := MustCompile(`$CI_COMMIT_REF_NAME =~ $RELEASE_PATTERN`)
	env := vars(map[string]string{"CI_COMMIT_REF_NAME": "release/1.4", "RELEASE_PATTERN": `/^release\/\d+\.\d+$/`})
	b.ReportAllocs()
	for b.Loop() {
		if !e.Eval(env) {
			b.Fatal("false")
		}
	}
}

func BenchmarkGlobMatch(b *testing.B) {
	g, _ := CompileGlob("{api,web}/**/*.{rb,erb}")
	b.ReportAllocs()
	for b.Loop() {
		if !g.Match("web/app/views/users/index.html.erb") {
			b.Fatal("no match")
		}
	}
}
