package ciexpr

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// vars is a lookup over a map: a key present is defined, even when empty.
func vars(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// The cases follow the examples of GitLab's documentation of `rules: if`
// and CI/CD expressions, written anew for Fennec.
func TestEvalDocumentedExamples(t *testing.T) {
	branchPush := map[string]string{
		"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main",
		"CI_COMMIT_REF_NAME": "main", "CI_COMMIT_MESSAGE": "Fix the build\n\n[SKIP] docs",
	}
	featurePush := map[string]string{
		"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "feature/login", "CI_DEFAULT_BRANCH": "main",
		"CI_COMMIT_REF_NAME": "feature/login", "CI_COMMIT_MESSAGE": "Add a login form",
	}
	tagPush := map[string]string{
		"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_TAG": "v1.2.0", "CI_DEFAULT_BRANCH": "main",
		"CI_COMMIT_REF_NAME": "v1.2.0",
	}
	mergeRequest := map[string]string{
		"CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_DEFAULT_BRANCH": "main",
		"CI_MERGE_REQUEST_LABELS": "backend,needs review",
	}
	empty := map[string]string{"EMPTY": "", "SET": "yes", "A": "1", "B": "", "C": "x"}

	cases := []struct {
		expr string
		env  map[string]string
		want bool
	}{
		{`$CI_PIPELINE_SOURCE == "merge_request_event"`, mergeRequest, true},
		{`$CI_PIPELINE_SOURCE == "merge_request_event"`, branchPush, false},
		{`$CI_PIPELINE_SOURCE == 'merge_request_event'`, mergeRequest, true},
		{`$CI_PIPELINE_SOURCE != "merge_request_event"`, branchPush, true},
		{`$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, branchPush, true},
		{`$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, featurePush, false},
		{`$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, tagPush, false}, // no branch on a tag
		{`${CI_COMMIT_BRANCH} == ${CI_DEFAULT_BRANCH}`, branchPush, true},
		{`$CI_COMMIT_TAG`, tagPush, true},
		{`$CI_COMMIT_TAG`, branchPush, false},
		{`$CI_COMMIT_BRANCH`, tagPush, false},
		{`$CI_COMMIT_REF_NAME =~ /^feature/`, featurePush, true},
		{`$CI_COMMIT_REF_NAME =~ /^feature/`, branchPush, false},
		{`$CI_COMMIT_REF_NAME !~ /^feature/`, branchPush, true},
		{`$CI_COMMIT_TAG =~ /^v\d+\.\d+\.\d+$/`, tagPush, true},
		{`$CI_COMMIT_TAG =~ /^v\d+\.\d+\.\d+$/`, branchPush, false}, // null never matches
		{`$CI_COMMIT_TAG !~ /^v/`, branchPush, true},
		{`$CI_COMMIT_MESSAGE !~ /skip/i`, branchPush, false},
		{`$CI_COMMIT_MESSAGE !~ /skip/i`, featurePush, true},
		{`$CI_COMMIT_MESSAGE =~ /skip/`, branchPush, false}, // case matters without i
		{`$CI_COMMIT_MESSAGE =~ /build.docs/`, branchPush, false},
		{`$CI_COMMIT_MESSAGE =~ /build.*docs/m`, branchPush, true}, // Ruby m: dot matches newline
		{`$CI_COMMIT_REF_NAME =~ /feature\/login/`, featurePush, true},
		{`$CI_MERGE_REQUEST_LABELS =~ /needs review/`, mergeRequest, true},
		{`$CI_PIPELINE_SOURCE == "merge_request_event" && $CI_MERGE_REQUEST_TARGET_BRANCH_NAME == $CI_DEFAULT_BRANCH`, mergeRequest, true},
		{`$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == "main"`, featurePush, false},
		{`$CI_COMMIT_TAG || $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, tagPush, true},
		{`$CI_COMMIT_TAG || $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, featurePush, false},

		// Precedence and parentheses.
		{`($A || $B) && $C`, empty, true},
		{`($B || $EMPTY) && $C`, empty, false},
		{`$B && $C || $A`, empty, true},    // (B && C) || A
		{`$A || $B && $NONE`, empty, true}, // A || (B && NONE)
		{`($A || $B) && $NONE`, empty, false},
		{`((($A)))`, empty, true},
		{`($A == "1") && ($C != "y")`, empty, true},

		// null and presence.
		{`$UNDEFINED == null`, empty, true},
		{`$UNDEFINED != null`, empty, false},
		{`null == $UNDEFINED`, empty, true},
		{`$EMPTY == null`, empty, false}, // defined, though empty
		{`$EMPTY == ""`, empty, true},
		{`$UNDEFINED == ""`, empty, false},
		{`$SET != null`, empty, true},
		{`null == null`, empty, true},
		{`$UNDEFINED == $ALSO_UNDEFINED`, empty, true},
		{`$EMPTY`, empty, false},
		{`$UNDEFINED`, empty, false},
		{`$SET`, empty, true},
		{`"literal"`, empty, true},
		{`""`, empty, false},
		{`null`, empty, false},
		{`"1" == $A`, empty, true},
		{`$UNDEFINED =~ /.*/`, empty, false},
		{`$UNDEFINED !~ /.*/`, empty, true},
		{`$EMPTY =~ /^$/`, empty, true},

		// Whitespace is free.
		{"$A==\"1\"&&$C", empty, true},
		{"  $A  ==  '1'\n", empty, true},
	}
	for _, c := range cases {
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v (%s)", c.expr, err, err.(*SyntaxError).Reason)
			continue
		}
		if got := e.Eval(vars(c.env)); got != c.want {
			t.Errorf("%q = %v, want %v", c.expr, got, c.want)
		}
	}
}

// A variable on the right of =~ holding /re/flags is that pattern; holding
// anything else, it is a plain string that must contain the left side
// (GitLab's behaviour, gitlab-org/gitlab#426313).
func TestEvalPatternFromVariable(t *testing.T) {
	e := MustCompile(`$LEFT =~ $RIGHT`)
	not := MustCompile(`$LEFT !~ $RIGHT`)
	cases := []struct {
		left, right string
		want        bool
	}{
		{"abcde", "/^ab.*/", true},
		{"xabcde", "/^ab.*/", false},
		{"ABC", "/abc/i", true},
		{"ABC", "/abc/", false},
		{"1234", "/23/", true},
		{"1234", "1234", true},
		{"1234", "23", false},
		{"23", "1234", true},
		{"/23/", "23", false},
		{"/23/", "/23/", true},
		{"anything", "/(?!x)/", false}, // look-ahead is not RE2: a plain string
		{"x", "/a/q", false},           // unknown flag: a plain string, "x" not in it
	}
	for _, c := range cases {
		env := vars(map[string]string{"LEFT": c.left, "RIGHT": c.right})
		if got := e.Eval(env); got != c.want {
			t.Errorf("%q =~ %q = %v, want %v", c.left, c.right, got, c.want)
		}
		if got := not.Eval(env); got == c.want {
			t.Errorf("%q !~ %q = %v, want %v", c.left, c.right, got, !c.want)
		}
	}
	if e.Eval(vars(map[string]string{"LEFT": "a"})) {
		t.Error("an undefined pattern variable matched")
	}
	if n := len(e.dynamic); n != 6 {
		t.Errorf("%d patterns cached, want the 6 distinct values that start with /", n)
	}
}

// A quoted string right of =~ is what a variable holding it would be: a
// pattern when it reads /re/flags, otherwise a text the left side must be
// part of.
func TestEvalPatternFromString(t *testing.T) {
	cases := []struct {
		expr string
		env  map[string]string
		want bool
	}{
		{`$SRC =~ "merge_request_event"`, map[string]string{"SRC": "merge_request_event"}, true},
		{`$SRC =~ "merge_request_event"`, map[string]string{"SRC": "request"}, true},
		{`$SRC =~ "merge_request_event"`, map[string]string{"SRC": "push"}, false},
		{`$SRC !~ "merge_request_event"`, map[string]string{"SRC": "push"}, true},
		{`$SRC =~ 'web|api'`, map[string]string{"SRC": "web"}, true},
		{`$SRC =~ 'web|api'`, map[string]string{"SRC": "schedule"}, false},
		{`$REF =~ "/^rel-[0-9]+$/"`, map[string]string{"REF": "rel-12"}, true},
		{`$REF =~ "/^rel-[0-9]+$/"`, map[string]string{"REF": "xrel-12"}, false},
		{`$REF =~ "/^REL/i"`, map[string]string{"REF": "rel-1"}, true},
		{`$UNSET =~ "abc"`, nil, false},
		{`"b" =~ "abc"`, nil, true},
	}
	for _, c := range cases {
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		if got := e.Eval(vars(c.env)); got != c.want {
			t.Errorf("%s with %v = %v, want %v", c.expr, c.env, got, c.want)
		}
	}
}

func TestPatternCacheIsBounded(t *testing.T) {
	e := MustCompile(`$LEFT =~ $RIGHT`)
	for i := range 3 * maxDynamicPatterns {
		re := "/^a{" + strings.Repeat("1", 1+i%3) + "}" + strings.Repeat("b", i) + "/"
		e.Eval(vars(map[string]string{"LEFT": "a", "RIGHT": re}))
	}
	if n := len(e.dynamic); n != maxDynamicPatterns {
		t.Errorf("cache holds %d patterns, want %d", n, maxDynamicPatterns)
	}
	// Still right once the cache is full.
	if !e.Eval(vars(map[string]string{"LEFT": "zzz", "RIGHT": "/z{3}/"})) {
		t.Error("a pattern past the cache's bound did not match")
	}
}

func TestEvalIsSafeConcurrently(t *testing.T) {
	e := MustCompile(`$LEFT =~ $RIGHT && $LEFT =~ /^f/`)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				right := "/^f" + strings.Repeat("o", (g+i)%5) + "/"
				left := "f" + strings.Repeat("o", (g+i)%5) + "x"
				if !e.Eval(vars(map[string]string{"LEFT": left, "RIGHT": right})) {
					t.Errorf("%q =~ %q did not match", left, right)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestCompileRefuses(t *testing.T) {
	cases := []struct{ expr, reason string }{
		{``, "empty expression"},
		{`   `, "empty expression"},
		{`$`, "a variable needs a name"},
		{`${A`, "unterminated ${"},
		{`$A == "x`, "unterminated string"},
		{`$A =~ /abc`, "unterminated pattern"},
		{`$A =~ //`, "empty pattern"},
		{`$A =~ /(?!x)/`, "invalid pattern"},       // look-ahead needs backtracking
		{`$A =~ /(a)\1/`, "invalid pattern"},       // back references too
		{`$A =~ /a/x`, "unsupported pattern flag"}, // no extended mode in RE2
		{`$A = "x"`, "unknown character"},
		{`$A === "x"`, "unknown character"},
		{`$A & $B`, "unknown character"},
		{`$A and $B`, "unknown word"},
		{`$A == NULL`, "unknown word"},
		{`$A ==`, "ends early"},
		{`== $A`, "unexpected operator =="},
		{`$A $B`, "unexpected variable $B"},
		{`$A &&`, "ends early"},
		{`|| $A`, "unexpected operator ||"},
		{`($A`, "missing )"},
		{`$A)`, "unexpected )"},
		{`()`, "unexpected )"},
		{`/abc/`, "right side of =~"},
		{`/abc/ =~ $A`, "must be a variable or a string"},
		{`null =~ /a/`, "must be a variable or a string"},
		{`$A !~ null`, "must be a pattern, a variable or a string"},
		{`$A == /abc/`, "only be compared with =~"},
		{`$A == "a" == "b"`, "unexpected operator =="},
		{`$A <script>`, "unknown character"},
		{strings.Repeat("(", MaxDepth+1) + "$A" + strings.Repeat(")", MaxDepth+1), "nested deeper"},
		{strings.Repeat("$A && ", MaxTokens/2) + "$A", "more than 200 tokens"},
		{`$A == "` + strings.Repeat("x", MaxExprBytes) + `"`, "longer than 4096"},
	}
	for _, c := range cases {
		_, err := Compile(c.expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%.40q) = %v, want a syntax error", c.expr, err)
			continue
		}
		if err.Error() != "invalid expression syntax" || !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%.40q) error reads %q", c.expr, err)
		}
		if !strings.Contains(se.Reason, c.reason) {
			t.Errorf("Compile(%.40q) reason %q, want it to say %q", c.expr, se.Reason, c.reason)
		}
	}
	// At the bounds exactly, accepted.
	for _, ok := range []string{
		strings.Repeat("(", MaxDepth) + "$A" + strings.Repeat(")", MaxDepth),
		strings.Repeat("$A && ", (MaxTokens-1)/2) + "$A",
	} {
		if _, err := Compile(ok); err != nil {
			t.Errorf("Compile(%.40q...): %v", ok, err)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	src := `$CI_COMMIT_TAG =~ /^v/ || $X`
	if got := MustCompile(src).String(); got != src {
		t.Errorf("String() = %q", got)
	}
}

func TestAnyHolds(t *testing.T) {
	list := []*Expr{MustCompile(`$RELEASE`), MustCompile(`$CI_COMMIT_MESSAGE =~ /deploy/`)}
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"RELEASE": "1"}, true},
		{map[string]string{"CI_COMMIT_MESSAGE": "deploy now"}, true},
		{map[string]string{"RELEASE": "", "CI_COMMIT_MESSAGE": "fix"}, false},
		{nil, false},
	} {
		if got := AnyHolds(list, vars(c.env)); got != c.want {
			t.Errorf("AnyHolds with %v = %v, want %v", c.env, got, c.want)
		}
	}
	if AnyHolds(nil, vars(nil)) {
		t.Error("an empty list held")
	}
}
