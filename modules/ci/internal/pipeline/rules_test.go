package pipeline

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// Invalid rules and workflows are refused in GitLab's words.
func TestRulesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"with only", "j: {script: x, only: [main], rules: [{if: $A}]}\n", "jobs:j config key may not be used with `rules`: only"},
		{"with only and except", "j: {script: x, only: [main], except: [tags], rules: [{if: $A}]}\n", "jobs:j config key may not be used with `rules`: only, except"},
		{"not a list", "j: {script: x, rules: yes}\n", "jobs:j:rules config should be an array"},
		{"a string rule", "j: {script: x, rules: [always]}\n", "jobs:j:rules:rule config should be a hash"},
		{"unknown key", "j: {script: x, rules: [{if: $A, unless: $B}]}\n", "jobs:j:rules:rule config contains unknown keys: unless"},
		{"bad when", "j: {script: x, rules: [{when: sometimes}]}\n", "jobs:j:rules:rule when unknown value: sometimes"},
		{"bad expression", "j: {script: x, rules: [{if: '$A == '}]}\n", "jobs:j:rules:rule if "},
		{"if not a string", "j: {script: x, rules: [{if: [a]}]}\n", "jobs:j:rules:rule if should be a string"},
		{"changes not paths", "j: {script: x, rules: [{changes: {a: b}}]}\n", "jobs:j:rules:rule:changes config contains unknown keys: a"},
		{"delayed without start_in", "j: {script: x, rules: [{when: delayed}]}\n", "jobs:j:rules:rule start_in should be a duration"},
		{"start_in too long", "j: {script: x, rules: [{when: delayed, start_in: 2 weeks}]}\n", "jobs:j:rules:rule start_in should be a duration of up to one week"},
		{"allow_failure not a boolean", "j: {script: x, rules: [{allow_failure: maybe}]}\n", "jobs:j:rules:rule allow_failure should be a boolean value"},
		{"nested too deep", "j: {script: x, rules: " + strings.Repeat("[", 12) + "{if: $A}" + strings.Repeat("]", 12) + "}\n", "jobs:j:rules config should be an array of hashes nested at most 10 levels"},
		{"too many changes", "j: {script: x, rules: [{changes: [" + strings.Repeat("a,", 50) + "b]}]}\n", "jobs:j:rules:rule changes config has too many entries (maximum 50)"},
		{"exists of another project", "j: {script: x, rules: [{exists: {paths: [a], project: g/p}}]}\n", "jobs:j:rules:rule exists:project is not supported yet"},
		{"workflow not a hash", "workflow: [a]\nj: {script: x}\n", "workflow config should be a hash"},
		{"workflow unknown key", "workflow: {rule: []}\nj: {script: x}\n", "workflow config contains unknown keys: rule"},
		{"workflow manual", "workflow: {rules: [{when: manual}]}\nj: {script: x}\n", "workflow:rules:rule when unknown value: manual"},
		{"workflow allow_failure", "workflow: {rules: [{allow_failure: true}]}\nj: {script: x}\n", "workflow:rules:rule config contains unknown keys: allow_failure"},
		{"workflow auto_cancel", "workflow: {auto_cancel: {on_new_commit: sometimes}}\nj: {script: x}\n", "workflow:auto_cancel on new commit must be one of: conservative, interruptible, none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}

const rulesFile = `
variables:
  DEPLOY: "no"
build:
  script: make
  rules:
    - if: $CI_COMMIT_TAG
      when: never
    - if: $CI_COMMIT_BRANCH == "main" || $CI_COMMIT_BRANCH =~ /^release-/
    - if: $FORCE
      when: manual
docs:
  script: make docs
  rules:
    - changes: ["docs/**/*.md", README.md]
deploy:
  script: deploy
  when: manual
  rules:
    - if: $CI_COMMIT_BRANCH == "main"
      allow_failure: false
      variables: {DEPLOY: "yes", TARGET: prod}
    - when: never
probe:
  script: probe
  rules:
    - exists: ["go.mod", "cmd/*/main.go"]
      when: always
      allow_failure: true
never:
  script: nothing
  rules: []
legacy:
  script: old
  only:
    changes: [src/*]
`

// JobsFor decides jobs with rules as GitLab does: the first rule that
// matches decides when, allow_failure and variables; none, or never,
// leaves the job out; the job's own when is the default.
func TestRulesDecideJobs(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	vars := func(m map[string]string) func(string) (string, bool) {
		return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
	}
	changed := func(paths ...string) func(string) ([]string, bool) {
		return func(string) ([]string, bool) { return paths, true }
	}
	files := func(paths ...string) func(*ciexpr.Glob) bool {
		return func(g *ciexpr.Glob) bool {
			for _, p := range paths {
				if g.Match(p) {
					return true
				}
			}
			return false
		}
	}
	type want struct {
		when  cistatus.When
		allow bool
		vars  string
	}
	tests := []struct {
		name string
		ref  RefInfo
		jobs map[string]want
	}{
		{"main branch push changing docs",
			RefInfo{Name: "main", Variables: vars(map[string]string{"CI_COMMIT_BRANCH": "main"}), Changed: changed("docs/guide/a.md"), FileExists: files("go.mod")},
			map[string]want{
				"build":  {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
				"docs":   {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
				"deploy": {cistatus.WhenManual, false, "DEPLOY=yes TARGET=prod"},
				"probe":  {cistatus.WhenAlways, true, "DEPLOY=no"},
			}},
		{"release branch changing code",
			RefInfo{Name: "release-1", Variables: vars(map[string]string{"CI_COMMIT_BRANCH": "release-1"}), Changed: changed("src/a.go"), FileExists: files("cmd/fennec/main.go")},
			map[string]want{
				"build":  {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
				"probe":  {cistatus.WhenAlways, true, "DEPLOY=no"},
				"legacy": {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
			}},
		{"a tag, forced, changes unknown",
			RefInfo{Name: "v1", IsTag: true, Variables: vars(map[string]string{"CI_COMMIT_TAG": "v1", "FORCE": "1"})},
			map[string]want{
				"docs":   {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
				"legacy": {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
			}},
		{"a feature branch, forced",
			RefInfo{Name: "feature", Variables: vars(map[string]string{"CI_COMMIT_BRANCH": "feature", "FORCE": "yes"}), Changed: changed("README.md")},
			map[string]want{
				"build": {cistatus.WhenManual, false, "DEPLOY=no"},
				"docs":  {cistatus.WhenOnSuccess, false, "DEPLOY=no"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]want{}
			for _, j := range cfg.JobsFor(tt.ref) {
				var kv []string
				for _, v := range j.Variables {
					kv = append(kv, v.Key+"="+v.Value)
				}
				got[j.Name] = want{j.When, j.AllowFailure, strings.Join(kv, " ")}
			}
			if len(got) != len(tt.jobs) {
				t.Fatalf("jobs %v\nwant %v", got, tt.jobs)
			}
			for name, w := range tt.jobs {
				if got[name] != w {
					t.Errorf("%s: %+v, want %+v", name, got[name], w)
				}
			}
		})
	}
	// The parsed jobs are not changed by the decisions (they share slices).
	if v := cfg.Jobs[2].Variables; len(v) != 1 || v[0].Value != "no" {
		t.Fatalf("deploy's parsed variables changed: %v", v)
	}
}

// workflow: rules decide whether there is a pipeline and give every job
// their variables, over the global ones and under the job's own.
func TestWorkflowRules(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
workflow:
  name: "Pipeline for $CI_COMMIT_BRANCH"
  rules:
    - if: $CI_COMMIT_MESSAGE =~ /\[skip ci\]/
      when: never
    - if: $CI_COMMIT_BRANCH == "main"
      variables: {ENV: production, LEVEL: high}
    - if: $CI_PIPELINE_SOURCE == "web"
variables: {ENV: staging, LEVEL: low}
a:
  script: x
  variables: {LEVEL: mine}
b:
  script: y
  rules:
    - if: $ENV == "production"
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workflow.Name != "Pipeline for $CI_COMMIT_BRANCH" {
		t.Fatalf("name %q", cfg.Workflow.Name)
	}
	lookup := func(m map[string]string) func(string) (string, bool) {
		return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
	}
	_, _, err = cfg.ForPipeline(RefInfo{Name: "main", Variables: lookup(map[string]string{"CI_COMMIT_BRANCH": "main", "CI_COMMIT_MESSAGE": "wip [skip ci]"})}, 100)
	if !errors.Is(err, ciexpr.ErrWorkflowFiltered) {
		t.Fatalf("skip ci: %v", err)
	}
	_, _, err = cfg.ForPipeline(RefInfo{Name: "dev", Variables: lookup(map[string]string{"CI_COMMIT_BRANCH": "dev", "CI_PIPELINE_SOURCE": "push"})}, 100)
	if !errors.Is(err, ciexpr.ErrWorkflowFiltered) {
		t.Fatalf("no rule matches: %v", err)
	}
	_, jobs, err := cfg.ForPipeline(RefInfo{Name: "main", Variables: lookup(map[string]string{"CI_COMMIT_BRANCH": "main"})}, 100)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("main: %v %v", jobs, err)
	}
	got := func(j Job) []string {
		var out []string
		for _, v := range j.Variables {
			out = append(out, v.Key+"="+v.Value)
		}
		return out
	}
	if a := got(jobs[0]); !slices.Equal(a, []string{"ENV=production", "LEVEL=mine"}) {
		t.Errorf("a: %v", a)
	}
	if b := got(jobs[1]); !slices.Equal(b, []string{"ENV=production", "LEVEL=high"}) {
		t.Errorf("b: %v", b)
	}
	_, jobs, err = cfg.ForPipeline(RefInfo{Name: "dev", Variables: lookup(map[string]string{"CI_COMMIT_BRANCH": "dev", "CI_PIPELINE_SOURCE": "web"})}, 100)
	if err != nil || len(jobs) != 1 || jobs[0].Name != "a" {
		t.Fatalf("web: %v %v", jobs, err)
	}
}
