package ciexpr

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Cases as Ruby's File.fnmatch answers them under FNM_PATHNAME |
// FNM_DOTMATCH | FNM_EXTGLOB.
func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"Dockerfile", "Dockerfile", true},
		{"Dockerfile", "docker/Dockerfile", false},
		{"Dockerfile", "Dockerfile.dev", false},
		{"*.md", "README.md", true},
		{"*.md", "docs/README.md", false}, // * stops at /
		{"*.md", ".hidden.md", true},      // dot files match (FNM_DOTMATCH)
		{"docs/*", "docs/index.md", true},
		{"docs/*", "docs/api/index.md", false},
		{"docs/**", "docs/api/index.md", false}, // ** not before / is *
		{"docs/**/*", "docs/api/index.md", true},
		{"docs/**/*", "docs/index.md", true}, // **/ is zero directories too
		{"docs/**/*.md", "docs/a/b/c/x.md", true},
		{"docs/**/*.md", "docs/a/b/c/x.txt", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "cmd/fennec/main.go", true},
		{"**/*.go", "cmd/.hidden/main.go", true},
		{"**/Dockerfile", "a/b/Dockerfile", true},
		{"**/Dockerfile", "a/b/Dockerfile.old", false},
		{"a**/b", "ax/b", true}, // not at a segment's start: like *
		{"a**/b", "ax/y/b", false},
		{"src/?.c", "src/a.c", true},
		{"src/?.c", "src/ab.c", false},
		{"src?a", "src/a", false}, // ? never matches /
		{"{api,web}/**/*.rb", "api/v1/users.rb", true},
		{"{api,web}/**/*.rb", "web/x.rb", true},
		{"{api,web}/**/*.rb", "cli/x.rb", false},
		{"*.{js,ts}", "app.ts", true},
		{"*.{js,ts}", "app.tsx", false},
		{"{a,{b,c}d}.txt", "cd.txt", true},
		{"{a,{b,c}d}.txt", "c.txt", false},
		{"{**/,}Makefile", "Makefile", true},
		{"{**/,}Makefile", "a/b/Makefile", true},
		{"file[0-9].txt", "file7.txt", true},
		{"file[0-9].txt", "filex.txt", false},
		{"file[!0-9].txt", "filex.txt", true},
		{"file[^0-9].txt", "file7.txt", false},
		{"a[/]b", "a/b", false},
		{"[]]x", "]x", true},
		{"file[.txt", "file[.txt", true}, // unclosed [ is literal
		{"{a,b", "{a,b", true},           // unclosed { is literal
		{`\*.md`, "*.md", true},
		{`\*.md`, "x.md", false},
		{"a.c", "abc", false}, // . is literal
		{"(a|b)+", "(a|b)+", true},
		{"$x^", "$x^", true},
	}
	for _, c := range cases {
		g, err := CompileGlob(c.glob)
		if err != nil {
			t.Errorf("CompileGlob(%q): %v", c.glob, err)
			continue
		}
		if got := g.Match(c.path); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.glob, c.path, got, c.want)
		}
	}
}

func TestGlobLiteralAndBounds(t *testing.T) {
	g, _ := CompileGlob("docs/index.md")
	if p, ok := g.Literal(); !ok || p != "docs/index.md" {
		t.Errorf("Literal() = %q, %v", p, ok)
	}
	g, _ = CompileGlob("docs/*.md")
	if _, ok := g.Literal(); ok {
		t.Error("a glob reads as a literal")
	}
	for _, bad := range []string{
		"",
		strings.Repeat("a", MaxGlobBytes+1),
		strings.Repeat("{a,", MaxGlobBraceNest+1) + "b" + strings.Repeat("}", MaxGlobBraceNest+1),
	} {
		if _, err := CompileGlob(bad); err == nil {
			t.Errorf("CompileGlob(%.30q) accepted", bad)
		}
	}
	// Many stars against a long path that almost matches: linear, since
	// the glob is an RE2 program (a backtracking matcher takes
	// exponential time here).
	g, err := CompileGlob(strings.Repeat("*a", 60) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match(strings.Repeat("a", 900)) {
		t.Error("matched without a b")
	}
}

func boolp(b bool) *bool { return &b }

// changedFiles is a RuleContext.Changed that knows paths.
func changedFiles(paths ...string) func(string) ([]string, bool) {
	return func(string) ([]string, bool) { return paths, true }
}

func unknownChanges(string) ([]string, bool) { return nil, false }

// tree is a RuleContext.FileExists over a list of files.
func tree(files ...string) func(*Glob) bool {
	return func(g *Glob) bool {
		if p, ok := g.Literal(); ok {
			return slices.Contains(files, p)
		}
		return slices.ContainsFunc(files, g.Match)
	}
}

func mustRules(t *testing.T, specs ...RuleSpec) []Rule {
	t.Helper()
	out := make([]Rule, len(specs))
	for i, s := range specs {
		r, err := NewRule(s)
		if err != nil {
			t.Fatalf("NewRule(%+v): %v", s, err)
		}
		out[i] = r
	}
	return out
}

func TestDecideJob(t *testing.T) {
	mr := vars(map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event", "CI_DEFAULT_BRANCH": "main"})
	mainPush := vars(map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main", "CI_DEFAULT_BRANCH": "main"})
	featurePush := vars(map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "topic", "CI_DEFAULT_BRANCH": "main"})
	tag := vars(map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_TAG": "v1.0.0", "CI_DEFAULT_BRANCH": "main"})

	// The docs' pattern: merge request pipelines, then the default branch,
	// a manual job on tags, nothing otherwise.
	typical := []RuleSpec{
		{If: `$CI_PIPELINE_SOURCE == "merge_request_event"`},
		{If: `$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH`, Variables: []Variable{{"DEPLOY", "staging"}}},
		{If: `$CI_COMMIT_TAG`, When: WhenManual, AllowFailure: boolp(true)},
	}
	docsOnly := []RuleSpec{
		{If: `$CI_PIPELINE_SOURCE == "push"`, Changes: []string{"docs/**/*", "*.md"}},
		{When: WhenNever},
	}
	withDockerfile := []RuleSpec{{Exists: []string{"Dockerfile", "**/*.dockerfile"}}}
	neverOnMain := []RuleSpec{
		{If: `$CI_COMMIT_BRANCH == "main"`, When: WhenNever},
		{When: WhenDelayed, StartIn: "5 minutes"},
	}

	cases := []struct {
		name  string
		rules []RuleSpec
		ctx   RuleContext
		want  JobOutcome
	}{
		{"merge request", typical, RuleContext{Lookup: mr}, JobOutcome{Included: true, When: WhenOnSuccess}},
		{"default branch", typical, RuleContext{Lookup: mainPush},
			JobOutcome{Included: true, When: WhenOnSuccess, Variables: []Variable{{"DEPLOY", "staging"}}}},
		{"tag", typical, RuleContext{Lookup: tag}, JobOutcome{Included: true, When: WhenManual, AllowFailure: boolp(true)}},
		{"other branch: no rule matches", typical, RuleContext{Lookup: featurePush}, JobOutcome{}},

		{"docs changed", docsOnly, RuleContext{Lookup: featurePush, Changed: changedFiles("src/a.go", "docs/api/x.md")},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"readme changed", docsOnly, RuleContext{Lookup: featurePush, Changed: changedFiles("README.md")},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"only code changed", docsOnly, RuleContext{Lookup: featurePush, Changed: changedFiles("src/a.go", "src/README.md")},
			JobOutcome{}},
		{"nothing changed", docsOnly, RuleContext{Lookup: featurePush, Changed: changedFiles()}, JobOutcome{}},
		{"new branch: changes unknown, so true", docsOnly, RuleContext{Lookup: featurePush, Changed: unknownChanges},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"no change information at all", docsOnly, RuleContext{Lookup: featurePush},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"changes but not a push", docsOnly, RuleContext{Lookup: mr, Changed: changedFiles("docs/x")}, JobOutcome{}},

		{"Dockerfile exists", withDockerfile, RuleContext{FileExists: tree("Dockerfile", "main.go")},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"a nested dockerfile exists", withDockerfile, RuleContext{FileExists: tree("build/app.dockerfile")},
			JobOutcome{Included: true, When: WhenOnSuccess}},
		{"none exists", withDockerfile, RuleContext{FileExists: tree("main.go", "docker/Dockerfile")}, JobOutcome{}},
		{"no tree", withDockerfile, RuleContext{}, JobOutcome{}},

		{"when never", neverOnMain, RuleContext{Lookup: mainPush}, JobOutcome{}},
		{"rule without clauses", neverOnMain, RuleContext{Lookup: featurePush},
			JobOutcome{Included: true, When: WhenDelayed, StartIn: "5 minutes"}},
		{"no rules", nil, RuleContext{}, JobOutcome{Included: true, When: WhenOnSuccess}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := DecideJob(mustRules(t, c.rules...), c.ctx)
			if got.Included != c.want.Included || got.When != c.want.When || got.StartIn != c.want.StartIn ||
				!slices.Equal(got.Variables, c.want.Variables) ||
				(got.AllowFailure == nil) != (c.want.AllowFailure == nil) ||
				got.AllowFailure != nil && *got.AllowFailure != *c.want.AllowFailure {
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

func TestChangesCompareToAndVariables(t *testing.T) {
	rules := mustRules(t, RuleSpec{Changes: []string{"$APP_DIR/**/*"}, CompareTo: "refs/heads/main"})
	var asked string
	ctx := RuleContext{
		Lookup: vars(map[string]string{"APP_DIR": "services/api"}),
		Changed: func(compareTo string) ([]string, bool) {
			asked = compareTo
			return []string{"services/api/handler.go"}, true
		},
	}
	if _, ok := Evaluate(rules, ctx); !ok {
		t.Error("a change under the expanded directory did not match")
	}
	if asked != "refs/heads/main" {
		t.Errorf("changes compared to %q", asked)
	}
	ctx.Lookup = vars(map[string]string{"APP_DIR": "services/web"})
	if _, ok := Evaluate(rules, ctx); ok {
		t.Error("a change outside the expanded directory matched")
	}
	// Empty lists are clauses that never hold.
	empty := mustRules(t, RuleSpec{Changes: []string{}}, RuleSpec{Exists: []string{}})
	for i := range empty {
		if empty[i].Matches(RuleContext{Changed: changedFiles("a"), FileExists: tree("a")}) {
			t.Errorf("rule %d with an empty list matched", i)
		}
	}
	// A Rule written as a literal, not through NewRule, still works.
	literal := []Rule{{Exists: []string{"go.mod"}}}
	if _, ok := Evaluate(literal, RuleContext{FileExists: tree("go.mod")}); !ok {
		t.Error("a literal rule's exists did not match")
	}
}

func TestExpand(t *testing.T) {
	look := vars(map[string]string{"A": "x", "EMPTY": ""})
	for in, want := range map[string]string{
		"$A/b": "x/b", "${A}b": "xb", "$EMPTY/c": "/c", "$NONE/c": "/c", "$$A": "$A", "a$": "a$", "${A": "${A", "$-": "$-",
	} {
		if got := Expand(in, look); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewRuleRefuses(t *testing.T) {
	cases := []struct {
		spec RuleSpec
		want string
	}{
		{RuleSpec{If: `$A ==`}, "if invalid expression syntax"},
		{RuleSpec{When: "sometimes"}, "when unknown value: sometimes"},
		{RuleSpec{When: "<script>alert(1)</script>" + strings.Repeat("x", 100)}, "when unknown value: <script>alert(1)</script>xxxxxxxxxxxxxxx..."},
		{RuleSpec{When: WhenDelayed}, "start_in should be a duration"},
		{RuleSpec{When: WhenManual, StartIn: "1 hour"}, "start_in should be blank"},
		{RuleSpec{CompareTo: "main"}, "changes compare_to needs paths"},
		{RuleSpec{Changes: make([]string, MaxRulePaths+1)}, "changes config has too many entries (maximum 50)"},
		{RuleSpec{Exists: make([]string, MaxRulePaths+1)}, "exists config has too many entries (maximum 50)"},
		{RuleSpec{Exists: []string{""}}, "exists empty path pattern"},
		{RuleSpec{Changes: []string{strings.Repeat("{", 20) + strings.Repeat("a}", 20)}}, "changes path pattern braces nested deeper than 8"},
		{RuleSpec{Variables: []Variable{{"", "x"}}}, "variables config uses invalid data keys: (empty)"},
	}
	for _, c := range cases {
		_, err := NewRule(c.spec)
		var re *RuleError
		if !errors.As(err, &re) || err.Error() != c.want {
			t.Errorf("NewRule(%+v) = %v, want %q", c.spec, err, c.want)
		}
	}
	for _, spec := range []RuleSpec{{When: WhenManual}, {AllowFailure: boolp(true)}, {StartIn: "1m", When: WhenDelayed}} {
		if _, err := NewWorkflowRule(spec); err == nil {
			t.Errorf("NewWorkflowRule(%+v) accepted a job-only value", spec)
		}
	}
}

func TestEvaluateWorkflow(t *testing.T) {
	workflow := func(specs ...RuleSpec) []Rule {
		out := make([]Rule, len(specs))
		for i, s := range specs {
			r, err := NewWorkflowRule(s)
			if err != nil {
				t.Fatalf("NewWorkflowRule(%+v): %v", s, err)
			}
			out[i] = r
		}
		return out
	}
	// The docs' "merge request pipelines, or branch pipelines when no
	// merge request is open" shape.
	rules := workflow(
		RuleSpec{If: `$CI_PIPELINE_SOURCE == "merge_request_event"`, Variables: []Variable{{"KIND", "mr"}}},
		RuleSpec{If: `$CI_COMMIT_BRANCH && $CI_OPEN_MERGE_REQUESTS`, When: WhenNever},
		RuleSpec{If: `$CI_COMMIT_BRANCH`, When: WhenAlways, Variables: []Variable{{"KIND", "branch"}}},
	)
	cases := []struct {
		name   string
		env    map[string]string
		create bool
		kind   string
	}{
		{"merge request event", map[string]string{"CI_PIPELINE_SOURCE": "merge_request_event"}, true, "mr"},
		{"branch with an open MR", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "x", "CI_OPEN_MERGE_REQUESTS": "g/p!1"}, false, ""},
		{"branch alone", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "x"}, true, "branch"},
		{"tag: no rule matches", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_TAG": "v1"}, false, ""},
	}
	for _, c := range cases {
		d := EvaluateWorkflow(rules, RuleContext{Lookup: vars(c.env)})
		kind := ""
		if len(d.Variables) == 1 {
			kind = d.Variables[0].Value
		}
		if d.Create != c.create || kind != c.kind {
			t.Errorf("%s: create %v with KIND %q, want %v with %q", c.name, d.Create, kind, c.create, c.kind)
		}
	}
	if d := EvaluateWorkflow(nil, RuleContext{}); !d.Create || d.Rule != nil {
		t.Errorf("no workflow rules: %+v", d)
	}
	if ErrWorkflowFiltered.Error() != "Pipeline filtered out by workflow rules." {
		t.Errorf("wording %q", ErrWorkflowFiltered)
	}
}

func TestChangesKnown(t *testing.T) {
	const zero, sha = "0000000000000000000000000000000000000000", "fedcba9876543210fedcba9876543210fedcba98"
	cases := []struct {
		source, before string
		tag            bool
		want           bool
	}{
		{"push", sha, false, true},
		{"push", zero, false, false}, // a new branch
		{"push", "", false, false},
		{"push", sha, true, false}, // a tag
		{"merge_request_event", "", false, true},
		{"schedule", sha, false, false},
		{"web", sha, false, false},
		{"api", sha, false, false},
		{"trigger", sha, false, false},
		{"parent_pipeline", sha, false, false},
	}
	for _, c := range cases {
		if got := ChangesKnown(c.source, c.before, c.tag); got != c.want {
			t.Errorf("ChangesKnown(%q, %.8q, %v) = %v, want %v", c.source, c.before, c.tag, got, c.want)
		}
	}
}
