package pipeline

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestExtends pins the job extends produces: deep merge of hashes, lists
// and scalars replaced, several bases in order (the later wins), the job's
// own keys on top, several levels.
func TestExtends(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
.base:
  image: golang:1.22
  variables: {GOFLAGS: -mod=readonly, CGO_ENABLED: "0"}
  tags: [docker]
  script: [go build ./...]
.tested:
  extends: .base
  stage: test
  variables: {CGO_ENABLED: "1"}
  script: [go test ./...]
.linux:
  tags: [linux, amd64]
  variables: {GOOS: linux}
unit:
  extends: [.tested, .linux]
  variables: {RACE: "1"}
build:
  extends: .base
  stage: build
  artifacts: {paths: [bin/]}
`)
	unit := jobNamed(t, cfg, "unit")
	wantVars := []Variable{{"GOFLAGS", "-mod=readonly", true}, {"CGO_ENABLED", "1", true}, {"GOOS", "linux", true}, {"RACE", "1", true}}
	if !reflect.DeepEqual(unit.Variables, wantVars) {
		t.Errorf("unit variables = %v", unit.Variables)
	}
	if !reflect.DeepEqual(unit.Tags, []string{"linux", "amd64"}) || !reflect.DeepEqual(unit.Script, []string{"go test ./..."}) ||
		unit.Stage != "test" || unit.Image == nil || unit.Image.Name != "golang:1.22" {
		t.Errorf("unit = %+v", unit)
	}
	build := jobNamed(t, cfg, "build")
	if build.Stage != "build" || !reflect.DeepEqual(build.Script, []string{"go build ./..."}) || build.Artifacts == nil {
		t.Errorf("build = %+v", build)
	}
	if names := jobNames(cfg); names != "unit build" {
		t.Errorf("jobs = %s", names)
	}
}

// A visible job can be a base too, and a job's extends key may name a job
// defined after it.
func TestExtendsVisibleJobDefinedLater(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "b:\n  extends: a\n  stage: deploy\na:\n  script: [x]\n  when: manual\n")
	b := jobNamed(t, cfg, "b")
	if b.Stage != "deploy" || b.When != "manual" || b.Script[0] != "x" {
		t.Errorf("b = %+v", b)
	}
}

// !reference copies values after extends, in scripts (flattened), lists
// and variables, and may chain through another !reference.
func TestReference(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
.setup:
  script: [apt-get update, apt-get install -y make]
  variables: {DEBIAN_FRONTEND: noninteractive}
.inherited:
  extends: .setup
  after_script: [echo done]
.chain:
  script:
    - !reference [.setup, script]
    - echo chained
job:
  variables: !reference [.setup, variables]
  before_script:
    - !reference [.chain, script]
  script:
    - !reference [.inherited, script]
    - make
  after_script: !reference [.inherited, after_script]
`)
	j := jobNamed(t, cfg, "job")
	want := map[string][]string{
		"before": {"apt-get update", "apt-get install -y make", "echo chained"},
		"script": {"apt-get update", "apt-get install -y make", "make"},
		"after":  {"echo done"},
	}
	got := map[string][]string{"before": j.BeforeScript, "script": j.Script, "after": j.AfterScript}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scripts = %q", got)
	}
	if !reflect.DeepEqual(j.Variables, []Variable{{"DEBIAN_FRONTEND", "noninteractive", true}}) {
		t.Errorf("variables = %v", j.Variables)
	}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
variables: {A: "1", B: "2"}
default:
  image: node:20
  services: [redis]
  before_script: [npm ci]
  after_script: [echo bye]
  cache: {key: {files: [package-lock.json], prefix: npm}, paths: [.npm/]}
  tags: [docker]
  timeout: 1h 30m
  retry: {max: 2, when: [runner_system_failure, stuck_or_timeout_failure]}
  interruptible: true
  artifacts: {expire_in: 1 week}
lint:
  script: npm run lint
own:
  image: node:18
  tags: []
  retry: 0
  interruptible: false
  script: npm test
bare:
  inherit: {default: [tags, image], variables: [B]}
  script: make
`)
	lint := jobNamed(t, cfg, "lint")
	if lint.Image.Name != "node:20" || lint.Services[0].Name != "redis" || lint.BeforeScript[0] != "npm ci" ||
		lint.AfterScript[0] != "echo bye" || lint.Cache.Key != "npm" || lint.Cache.KeyFiles[0] != "package-lock.json" ||
		lint.Tags[0] != "docker" || lint.Timeout != "1h 30m" || lint.TimeoutAfter.Minutes() != 90 ||
		lint.Retry != 2 || len(lint.RetryWhen) != 2 || !lint.Interruptible || lint.Artifacts.ExpireIn != "1 week" {
		t.Errorf("lint = %+v", lint)
	}
	own := jobNamed(t, cfg, "own")
	if own.Image.Name != "node:18" || len(own.Tags) != 0 || own.Retry != 0 || own.RetryWhen != nil || own.Interruptible {
		t.Errorf("own = %+v", own)
	}
	bare := jobNamed(t, cfg, "bare")
	if bare.Image.Name != "node:20" || bare.Tags[0] != "docker" || bare.Services != nil || bare.BeforeScript != nil ||
		bare.Cache != nil || bare.Retry != 0 || !reflect.DeepEqual(bare.Variables, []Variable{{"B", "2", true}}) {
		t.Errorf("bare = %+v", bare)
	}
}

// The forms of job keywords current files use.
func TestCurrentJobKeywordForms(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
variables:
  DEPLOY_ENV: {value: staging, description: Where to deploy}
  PLAIN: x
.steps: &steps [make a, make b]
prepare:
  stage: .pre
  before_script: echo prepare
  script: [*steps, [nested, [deeper]], last]
report:
  stage: .post
  script: echo report
  when: always
test:
  script: go test
  timeout: 3h
  allow_failure: {exit_codes: [137, 255]}
  only: {refs: [main, merge_requests], variables: [$RUN_TESTS], changes: [go.mod]}
  except: {refs: [tags]}
  artifacts:
    reports: {junit: report.xml, coverage_report: {coverage_format: cobertura, path: cov.xml}}
    expose_as: Test report
    exclude: [tmp/**]
    paths: [report.xml]
  cache:
    - {key: go-mod, paths: [.go/], when: always, fallback_keys: [go-mod-main]}
    - {key: lint, paths: [.lint/], policy: pull}
later:
  stage: deploy
  when: delayed
  start_in: 30 minutes
  script: deploy
  environment: {name: review/$CI_COMMIT_REF_SLUG, action: start, auto_stop_in: 1 day, on_stop: stop, kubernetes: {namespace: review}}
stop:
  stage: deploy
  script: stop
  when: manual
  environment: {name: review/$CI_COMMIT_REF_SLUG, action: stop}
k8s:
  script: kubectl apply
  only: {kubernetes: active}
`)
	if !reflect.DeepEqual(cfg.Stages, []string{".pre", "build", "test", "deploy", ".post"}) {
		t.Errorf("stages = %v", cfg.Stages)
	}
	prep := jobNamed(t, cfg, "prepare")
	if !reflect.DeepEqual(prep.Script, []string{"make a", "make b", "nested", "deeper", "last"}) ||
		!reflect.DeepEqual(prep.BeforeScript, []string{"echo prepare"}) || prep.StageIndex != 0 {
		t.Errorf("prepare = %+v", prep)
	}
	if r := jobNamed(t, cfg, "report"); r.StageIndex != 4 {
		t.Errorf("report = %+v", r)
	}
	test := jobNamed(t, cfg, "test")
	if test.Variables[0] != (Variable{"DEPLOY_ENV", "staging", true}) || test.TimeoutAfter.Hours() != 3 ||
		!reflect.DeepEqual(test.AllowFailureExitCodes, []int{137, 255}) || test.AllowFailure ||
		!reflect.DeepEqual(test.Only, []string{"main", "merge_requests"}) || test.OnlyVariables[0] != "$RUN_TESTS" ||
		test.OnlyChanges[0] != "go.mod" || test.Except[0] != "tags" {
		t.Errorf("test = %+v", test)
	}
	a := test.Artifacts
	if a.ExposeAs != "Test report" || a.Exclude[0] != "tmp/**" || a.Reports["junit"][0] != "report.xml" || a.Reports["coverage_report"][0] != "cov.xml" {
		t.Errorf("artifacts = %+v", a)
	}
	if len(test.Caches) != 2 || test.Cache.Key != "go-mod" || test.Caches[0].When != "always" ||
		test.Caches[0].FallbackKeys[0] != "go-mod-main" || test.Caches[1].Policy != "pull" {
		t.Errorf("caches = %+v", test.Caches)
	}
	later := jobNamed(t, cfg, "later")
	if later.StartIn != "30 minutes" || later.StartAfter.Minutes() != 30 || later.Environment.AutoStopIn != "1 day" ||
		later.Environment.KubernetesNamespace != "review" {
		t.Errorf("later = %+v", later)
	}
	// Selection: only refs of a map, kubernetes never active.
	var names []string
	for _, j := range cfg.JobsFor(RefInfo{Name: "main", Source: SourcePush}) {
		names = append(names, j.Name)
	}
	if strings.Join(names, " ") != "prepare report test later stop" {
		t.Errorf("jobs for main = %v", names)
	}
}

// Errors of the new constructs, worded as GitLab words them where it has
// a wording.
func TestCurrentSyntaxErrors(t *testing.T) {
	t.Parallel()
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString(".l0: {script: x}\n")
		for i := 1; i <= n; i++ {
			b.WriteString(".l" + itoa(i) + ": {extends: .l" + itoa(i-1) + "}\n")
		}
		b.WriteString("j: {extends: .l" + itoa(n) + "}\n")
		return b.String()
	}
	tests := []struct{ name, src, want string }{
		{"default not a job", "default: {image: a}\n", "jobs config should contain at least one visible job"},
		{"include without repository", "include: ci/a.yml\nj: {script: x}\n", "Local file `ci/a.yml` cannot be included: this configuration is not read from a repository"},
		{"include remote alone", "include: https://example.com/a.yml\nj: {script: x}\n", "Remote file `https://example.com/a.yml` could not be fetched: remote includes are disabled on this server"},
		{"include template", "include: [{template: Auto-DevOps.gitlab-ci.yml}]\nj: {script: x}\n", "include:template is not supported yet (`Auto-DevOps.gitlab-ci.yml`); only include:local, include:project and include:remote are"},
		{"include two accessors", "include: [{local: a.yml, remote: b}]\nj: {script: x}\n", "Include `{local, remote}` needs to match exactly one accessor!"},
		{"trigger with resource_group", "j: {trigger: a/b, resource_group: r}\n", "jobs:j resource_group is not supported yet"},
		{"extends unknown", "j: {extends: .nope, script: x}\n", "j: unknown keys in `extends` (.nope)"},
		{"extends cycle", ".a: {extends: .b}\n.b: {extends: .a}\nj: {extends: .a}\n", ".a: circular dependency detected in `extends`"},
		{"extends self", "j: {extends: j, script: x}\n", "j: circular dependency detected in `extends`"},
		{"extends not a hash", ".a: [x]\nj: {extends: .a, script: x}\n", "j: invalid base hash in `extends`"},
		{"extends a number", "j: {extends: 1, script: x}\n", "jobs:j extends should be an array of strings or a string"},
		{"extends ten levels", chain(9), ""},
		{"extends eleven levels", chain(10), ": nesting too deep in `extends`"},
		{"reference missing", "j: {script: !reference [.nope, script]}\n", "!reference [\".nope\", \"script\"] could not be found"},
		{"reference not a list", "j: {script: !reference .nope}\n", "!reference tags must be a non-empty array of strings, at line 1 column 13"},
		{"reference cycle", ".a: {script: !reference [.b, script]}\n.b: {script: !reference [.a, script]}\nj: {script: !reference [.a, script]}\n", "is nested more than 10 references deep"},
		{"default unknown key", "default: {stage: a}\nj: {script: x}\n", "default config contains unknown keys: stage"},
		{"default and top-level", "image: a\ndefault: {image: b}\nj: {script: x}\n", "image is defined in top-level and `default:` entry"},
		{"retry when", "j: {script: x, retry: {max: 1, when: [oops]}}\n", "jobs:j retry when is unknown: oops"},
		{"retry max", "j: {script: x, retry: {max: 3}}\n", "jobs:j retry must be less than or equal to 2"},
		{"timeout", "j: {script: x, timeout: soon}\n", "jobs:j:timeout config should be a duration"},
		{"start_in without delayed", "j: {script: x, start_in: 1 hour}\n", "jobs:j start in must be blank when not delayed"},
		{"delayed without start_in", "j: {script: x, when: delayed}\n", "jobs:j start in should be a duration"},
		{"delayed more than a week", "j: {script: x, when: delayed, start_in: 8 days}\n", "jobs:j start in should be a duration of up to one week"},
		{"exit codes", "j: {script: x, allow_failure: {exit_codes: [a]}}\n", "jobs:j:allow_failure exit codes should be an array of integers or an integer"},
		{"five caches", "j: {script: x, cache: [{}, {}, {}, {}, {}]}\n", "jobs:j:cache config no more than 4 caches can be created"},
		{"inherit", "j: {script: x, inherit: {default: maybe}}\n", "jobs:j:inherit:default config should be a boolean value or an array of strings"},
		{"pre stage declared is kept first", "stages: [.post, a]\nj: {script: x, stage: nope}\n", "j job: chosen stage nope does not exist; available stages are .pre, a, .post"},
		{"inputs past the budget", "spec:\n  inputs: {x: {default: " + strings.Repeat("y", 1000) + "}}\n---\nj: {script: [" + strings.Repeat("'$[[ inputs.x ]]',", 1100) + "a]}\n", "too large once its inputs are interpolated"},
		{"input without default", "spec:\n  inputs: {env: {}}\n---\nj: {script: x}\n", "`env` input: required value has not been provided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}

func TestSpecInputsHeader(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "spec:\n  inputs:\n    stage: {default: test}\n    image: {default: 'alpine:3'}\n---\nj:\n  stage: $[[ inputs.stage ]]\n  image: $[[inputs.image]]\n  script: echo\n")
	j := jobNamed(t, cfg, "j")
	if j.Stage != "test" || j.Image.Name != "alpine:3" {
		t.Errorf("j = %+v", j)
	}
}

func jobNames(cfg *Config) string {
	names := make([]string, len(cfg.Jobs))
	for i, j := range cfg.Jobs {
		names[i] = j.Name
	}
	return strings.Join(names, " ")
}

func itoa(i int) string { return strconv.Itoa(i) }

// Images and services take current GitLab's options.
func TestImageAndServiceOptions(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
default:
  image: {name: golang:1.22, pull_policy: if-not-present, docker: {platform: linux/amd64}}
  services:
    - name: postgres:16
      alias: db
      variables: {POSTGRES_PASSWORD: secret}
      pull_policy: [always, if-not-present]
j: {script: x}
`)
	j := jobNamed(t, cfg, "j")
	if !reflect.DeepEqual(j.Image.PullPolicy, []string{"if-not-present"}) ||
		!reflect.DeepEqual(j.Services[0].Variables, []Variable{{"POSTGRES_PASSWORD", "secret", true}}) ||
		!reflect.DeepEqual(j.Services[0].PullPolicy, []string{"always", "if-not-present"}) {
		t.Errorf("image %+v services %+v", j.Image, j.Services)
	}
	for src, want := range map[string]string{
		"image: {name: a, pull_policy: sometimes}\nj: {script: x}\n": "image pull_policy should be always, if-not-present or never, or an array of them",
		"services: [{name: a, docker: linux}]\nj: {script: x}\n":     "services:service docker config should be a hash",
		"services: [{name: a, variables: [A]}]\nj: {script: x}\n":    "services:service:variables config should be a hash of key value pairs",
	} {
		if _, err := Parse([]byte(src)); err == nil || err.Error() != want {
			t.Errorf("%q: err = %v, want %s", src, err, want)
		}
	}
}
