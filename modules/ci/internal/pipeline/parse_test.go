package pipeline

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
)

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return cfg
}

func jobNamed(t *testing.T, cfg *Config, name string) Job {
	t.Helper()
	for _, j := range cfg.Jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no job %q in %+v", name, cfg.Jobs)
	return Job{}
}

func TestParseMinimalJobDefaults(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "rspec:\n  script: rake spec\n")
	if !reflect.DeepEqual(cfg.Stages, []string{"build", "test", "deploy"}) {
		t.Errorf("stages = %v", cfg.Stages)
	}
	want := Job{
		Name: "rspec", Stage: "test", StageIndex: 1, Script: []string{"rake spec"},
		When: cistatus.WhenOnSuccess, DependsOnAllEarlier: true,
	}
	if got := cfg.Jobs[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("job = %+v\nwant %+v", got, want)
	}
}

func TestParseGlobalsAreInherited(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
image: ruby:2.4
services: [postgres:9.6, {name: redis, alias: cache, command: [redis-server], entrypoint: [sh]}]
before_script: [bundle install]
after_script: [cleanup]
variables: {DB: postgres, PORT: 5432, VERSION: 1.10}
cache: {key: "$CI_COMMIT_REF_SLUG", paths: [vendor/], untracked: true, policy: pull}
plain:
  script: [a, b]
own:
  image: {name: golang:1.9, entrypoint: ["/bin/sh", "-c"]}
  services: []
  before_script: []
  after_script: [own-cleanup]
  cache: {paths: [x/]}
  variables: {PORT: "1", EXTRA: yes}
  script: c
`)
	plain := jobNamed(t, cfg, "plain")
	if plain.Image == nil || plain.Image.Name != "ruby:2.4" {
		t.Errorf("image = %+v", plain.Image)
	}
	wantServices := []Service{{Name: "postgres:9.6"}, {Name: "redis", Alias: "cache", Command: []string{"redis-server"}, Entrypoint: []string{"sh"}}}
	if !reflect.DeepEqual(plain.Services, wantServices) {
		t.Errorf("services = %+v", plain.Services)
	}
	if !reflect.DeepEqual(plain.BeforeScript, []string{"bundle install"}) || !reflect.DeepEqual(plain.AfterScript, []string{"cleanup"}) {
		t.Errorf("scripts = %v / %v", plain.BeforeScript, plain.AfterScript)
	}
	wantVars := []Variable{{"DB", "postgres", true}, {"PORT", "5432", true}, {"VERSION", "1.10", true}}
	if !reflect.DeepEqual(plain.Variables, wantVars) {
		t.Errorf("variables = %+v", plain.Variables)
	}
	wantCache := &Cache{Key: "$CI_COMMIT_REF_SLUG", Paths: []string{"vendor/"}, Untracked: true, Policy: "pull"}
	if !reflect.DeepEqual(plain.Cache, wantCache) {
		t.Errorf("cache = %+v", plain.Cache)
	}

	own := jobNamed(t, cfg, "own")
	if !reflect.DeepEqual(own.Image, &Image{Name: "golang:1.9", Entrypoint: []string{"/bin/sh", "-c"}}) {
		t.Errorf("own image = %+v", own.Image)
	}
	if len(own.Services) != 0 || len(own.BeforeScript) != 0 {
		t.Errorf("an explicit empty list must override the global one: %+v %+v", own.Services, own.BeforeScript)
	}
	if !reflect.DeepEqual(own.AfterScript, []string{"own-cleanup"}) || !reflect.DeepEqual(own.Script, []string{"c"}) {
		t.Errorf("own scripts = %v %v", own.AfterScript, own.Script)
	}
	if !reflect.DeepEqual(own.Cache, &Cache{Key: DefaultCacheKey, Paths: []string{"x/"}, Policy: "pull-push"}) {
		t.Errorf("own cache = %+v", own.Cache)
	}
	// Job keys replace global ones in place; new keys follow.
	wantOwn := []Variable{{"DB", "postgres", true}, {"PORT", "1", true}, {"VERSION", "1.10", true}, {"EXTRA", "true", true}}
	if !reflect.DeepEqual(own.Variables, wantOwn) {
		t.Errorf("own variables = %+v", own.Variables)
	}
}

// GitLab 9.x merges job variables over global ones even when the job's are
// empty (its documentation said `variables: {}` disabled the globals; the
// code never did).
func TestParseEmptyJobVariablesKeepGlobals(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "variables: {A: b}\nj:\n  variables: {}\n  script: x\n")
	if !reflect.DeepEqual(cfg.Jobs[0].Variables, []Variable{{"A", "b", true}}) {
		t.Errorf("variables = %+v", cfg.Jobs[0].Variables)
	}
}

func TestParseStagesAndTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src  string
		stages     []string
		stage      string
		stageIndex int
	}{
		{"stages", "stages: [a, b]\nj: {stage: b, script: x}", []string{"a", "b"}, "b", 1},
		{"types alias", "types: [a, b]\nj: {type: a, script: x}", []string{"a", "b"}, "a", 0},
		{"stages wins over types", "stages: [a]\ntypes: [b]\nj: {stage: a, script: x}", []string{"a"}, "a", 0},
		{"stage wins over type", "stages: [a, b]\nj: {stage: b, type: a, script: x}", []string{"a", "b"}, "b", 1},
		{"default stage is test", "j: {script: x}", []string{"build", "test", "deploy"}, "test", 1},
		{"null stages keep the default", "stages:\nj: {stage: deploy, script: x}", []string{"build", "test", "deploy"}, "deploy", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustParse(t, tt.src)
			j := cfg.Jobs[0]
			if !reflect.DeepEqual(cfg.Stages, tt.stages) || j.Stage != tt.stage || j.StageIndex != tt.stageIndex {
				t.Errorf("stages %v, job stage %q (%d)", cfg.Stages, j.Stage, j.StageIndex)
			}
		})
	}
}

func TestParseJobKeywords(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
stages: [build, test, deploy, cleanup]
build:
  stage: build
  script: make
  tags: [docker, linux]
  retry: 2
  coverage: '/(\d+\.\d+)% covered/'
  artifacts:
    name: "$CI_JOB_NAME"
    paths: [bin/, out.log]
    untracked: true
    when: always
    expire_in: 1 week
  only: [master, /^release-.*$/, tags, api@group/project]
  except: [schedules]
test:
  script: [make test]
  dependencies: [build]
  allow_failure: yes
  when: on_failure
lint:
  script: [make lint]
  dependencies: []
deploy:
  stage: deploy
  script: deploy
  when: manual
  environment:
    name: review/$CI_COMMIT_REF_NAME
    url: https://$CI_ENVIRONMENT_SLUG.example.com
    on_stop: stop
stop:
  stage: cleanup
  script: stop
  when: manual
  allow_failure: false
  environment: {name: review/$CI_COMMIT_REF_NAME, action: stop}
prod:
  stage: deploy
  script: deploy
  environment: production
`)
	build := jobNamed(t, cfg, "build")
	if !reflect.DeepEqual(build.Tags, []string{"docker", "linux"}) || build.Retry != 2 {
		t.Errorf("tags/retry = %v %d", build.Tags, build.Retry)
	}
	if build.Coverage != `(\d+\.\d+)% covered` {
		t.Errorf("coverage = %q", build.Coverage)
	}
	wantArtifacts := &Artifacts{Name: "$CI_JOB_NAME", Paths: []string{"bin/", "out.log"}, Untracked: true,
		When: "always", ExpireIn: "1 week", ExpireAfter: 7 * 24 * time.Hour}
	if !reflect.DeepEqual(build.Artifacts, wantArtifacts) {
		t.Errorf("artifacts = %+v", build.Artifacts)
	}
	if d, ok := build.Artifacts.Expires(); !ok || d != 7*24*time.Hour {
		t.Errorf("Expires = %v %v", d, ok)
	}
	if !reflect.DeepEqual(build.Only, []string{"master", "/^release-.*$/", "tags", "api@group/project"}) ||
		!reflect.DeepEqual(build.Except, []string{"schedules"}) {
		t.Errorf("only/except = %v %v", build.Only, build.Except)
	}
	if build.AllowFailure || build.When != cistatus.WhenOnSuccess || !build.DependsOnAllEarlier || build.Dependencies != nil {
		t.Errorf("build defaults: %+v", build)
	}

	test := jobNamed(t, cfg, "test")
	if !test.AllowFailure || test.When != cistatus.WhenOnFailure || !reflect.DeepEqual(test.Dependencies, []string{"build"}) || test.DependsOnAllEarlier {
		t.Errorf("test = %+v", test)
	}
	if lint := jobNamed(t, cfg, "lint"); lint.DependsOnAllEarlier || len(lint.Dependencies) != 0 || len(lint.DependenciesIn(cfg.Jobs)) != 0 {
		t.Errorf("dependencies: [] must mean none, got %#v", lint.Dependencies)
	}

	deploy := jobNamed(t, cfg, "deploy")
	if !deploy.AllowFailure || !deploy.Manual() {
		t.Error("a manual job must default to allow_failure: true")
	}
	wantEnv := &Environment{Name: "review/$CI_COMMIT_REF_NAME", URL: "https://$CI_ENVIRONMENT_SLUG.example.com", Action: "start", OnStop: "stop"}
	if !reflect.DeepEqual(deploy.Environment, wantEnv) {
		t.Errorf("environment = %+v", deploy.Environment)
	}
	// Unset dependencies are every job of the earlier stages, in file order.
	if got := deploy.DependenciesIn(cfg.Jobs); !deploy.DependsOnAllEarlier || !reflect.DeepEqual(got, []string{"build", "test", "lint"}) {
		t.Errorf("deploy dependencies = %v", got)
	}
	stop := jobNamed(t, cfg, "stop")
	if stop.AllowFailure || stop.Environment.Action != "stop" {
		t.Errorf("stop = %+v %+v", stop, stop.Environment)
	}
	if prod := jobNamed(t, cfg, "prod"); !reflect.DeepEqual(prod.Environment, &Environment{Name: "production", Action: "start"}) {
		t.Errorf("prod environment = %+v", prod.Environment)
	}
}

func TestParseHiddenJobsAnchorsAndMergeKeys(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
.job_template: &job_definition
  script: [common]
  tags: [shared]
  variables: {A: "1"}
.postgres: &postgres
  services: [postgres]
  tags: [pg]
test1:
  <<: *job_definition
  script: [own]
test2:
  <<: [*postgres, *job_definition]
  stage: build
`)
	if len(cfg.Jobs) != 2 {
		t.Fatalf("hidden jobs must not be jobs: %+v", cfg.Jobs)
	}
	t1 := jobNamed(t, cfg, "test1")
	if !reflect.DeepEqual(t1.Script, []string{"own"}) || !reflect.DeepEqual(t1.Tags, []string{"shared"}) {
		t.Errorf("explicit keys must win over merged ones: %+v", t1)
	}
	t2 := jobNamed(t, cfg, "test2")
	if !reflect.DeepEqual(t2.Tags, []string{"pg"}) || !reflect.DeepEqual(t2.Script, []string{"common"}) ||
		len(t2.Services) != 1 || t2.Stage != "build" {
		t.Errorf("the first merge source must win: %+v", t2)
	}
}

func TestParseYAML11Booleans(t *testing.T) {
	t.Parallel()
	for _, word := range []string{"true", "True", "yes", "on", "ON"} {
		cfg := mustParse(t, "j: {script: x, allow_failure: "+word+"}")
		if !cfg.Jobs[0].AllowFailure {
			t.Errorf("%s should read as true", word)
		}
	}
	for _, word := range []string{"false", "no", "off"} {
		cfg := mustParse(t, "j: {script: x, when: manual, allow_failure: "+word+"}")
		if cfg.Jobs[0].AllowFailure {
			t.Errorf("%s should read as false", word)
		}
	}
	if _, err := Parse([]byte("j: {script: x, allow_failure: 'yes'}")); err == nil {
		t.Error("a quoted 'yes' is a string, not a boolean")
	}
}

func TestParseDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "a: {script: one}\nb: {script: x}\na: {script: two}\n")
	if cfg.Jobs[0].Name != "a" || cfg.Jobs[0].Script[0] != "two" || len(cfg.Jobs) != 2 {
		t.Errorf("jobs = %+v", cfg.Jobs)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		// The document.
		{"empty", "", "Invalid configuration format"},
		{"only a comment", "# nothing\n", "Invalid configuration format"},
		{"a string", "just text", "Invalid configuration format"},
		{"a list", "- a\n- b", "Invalid configuration format"},
		{"syntax", "a:\n  b: c\n d: e\n", "(<unknown>): did not find expected key at line 2"},
		{"tab indentation", "a:\n\tb: c\n", "(<unknown>): found character that cannot start any token at line 2"},
		{"unknown alias", "a: *nope\n", "(<unknown>): unknown anchor 'nope' referenced"},
		{"no jobs", "stages: [a]\n", "jobs config should contain at least one visible job"},
		{"only hidden jobs", ".hidden: {script: x}\n", "jobs config should contain at least one visible job"},
		{"blank hidden job", ".hidden:\nj: {script: x}\n", "jobs:.hidden config can't be blank"},
		{"complex key", "? [a]\n: b\nj: {script: x}\n", "(<unknown>): a mapping key must be a scalar, not a array at line 1 column 3"},
		{"merge of a scalar", "j:\n  <<: 1\n  script: x\n", "(<unknown>): a merge key (<<) must be followed by a mapping or a list of mappings at line 2 column 7"},

		// Global keywords.
		{"stages not a list", "stages: build\nj: {script: x}", "stages config should be an array of strings"},
		{"stages with a number", "stages: [1]\nj: {script: x}", "stages config should be an array of strings"},
		{"types not a list", "types: build\nj: {script: x}", "types config should be an array of strings"},
		{"global before_script", "before_script: {a: b}\nj: {script: x}", "before_script config should be a string or a nested array of strings up to 10 levels deep"},
		{"global after_script number", "after_script: [1]\nj: {script: x}", "after_script config should be a string or a nested array of strings up to 10 levels deep"},
		{"global variables list", "variables: [a]\nj: {script: x}", "variables config should be a hash of key value pairs"},
		{"global variable value a hash", "variables: {A: {b: c}}\nj: {script: x}", "variables:A config contains unknown keys: b"},
		{"global variable value null", "variables: {A: }\nj: {script: x}", "variables config should be a hash of key value pairs, value can be a hash"},
		{"global image", "image: [a]\nj: {script: x}", "image config should be a hash or a string"},
		{"image unknown key", "image: {name: a, pull: always}\nj: {script: x}", "image config contains unknown keys: pull"},
		{"image without name", "image: {entrypoint: [sh]}\nj: {script: x}", "image name can't be blank"},
		{"image entrypoint", "image: {name: a, entrypoint: sh}\nj: {script: x}", "image entrypoint should be an array of strings"},
		{"services not a list", "services: postgres\nj: {script: x}", "services config should be an array"},
		{"service a list", "services: [[a]]\nj: {script: x}", "services:service config should be a hash or a string"},
		{"service unknown key", "services: [{name: a, port: 1}]\nj: {script: x}", "services:service config contains unknown keys: port"},
		{"service without name", "services: [{alias: a}]\nj: {script: x}", "services:service name can't be blank"},
		{"service alias", "services: [{name: a, alias: [b]}]\nj: {script: x}", "services:service alias should be a string"},
		{"service command", "services: [{name: a, command: run}]\nj: {script: x}", "services:service command should be an array of strings"},
		{"cache not a hash", "cache: [vendor]\nj: {script: x}", "cache config should be a hash"},
		{"cache unknown key", "cache: {paths: [a], nope: always}\nj: {script: x}", "cache config contains unknown keys: nope"},
		{"cache key", "cache: {key: [a]}\nj: {script: x}", "cache:key config should be a string, symbol or hash"},
		{"cache paths", "cache: {paths: vendor}\nj: {script: x}", "cache:paths config should be an array of strings"},
		{"cache untracked", "cache: {untracked: maybe}\nj: {script: x}", "cache:untracked config should be a boolean value"},
		{"cache policy", "cache: {policy: both}\nj: {script: x}", "cache policy should be pull-push, push, or pull"},

		// Jobs.
		{"job null", "rspec:\n", "jobs:rspec config can't be blank"},
		{"job empty", "rspec: {}\n", "jobs:rspec config can't be blank"},
		{"job without a name", "'': {script: x}\n", "jobs: name can't be blank"},
		{"job a string", "rspec: rake spec\n", "jobs:rspec config should be a hash"},
		{"job a list", "rspec: [a]\n", "jobs:rspec config should be a hash"},
		{"unknown keys", "rspec: {script: x, foo: 1, bar: 2}\n", "jobs:rspec config contains unknown keys: foo, bar"},
		{"no script", "build: {stage: build}\n", "jobs:build script can't be blank"},
		{"null script", "build: {script: }\n", "jobs:build script can't be blank"},
		{"empty script", "build: {script: []}\n", "jobs:build script can't be blank"},
		{"script a hash", "build: {script: {a: b}}\n", "jobs:build:script config should be a string or a nested array of strings up to 10 levels deep"},
		{"script with a number", "build: {script: [make, 1]}\n", "jobs:build:script config should be a string or a nested array of strings up to 10 levels deep"},
		{"script nested too deep", "build: {script: [[[[[[[[[[[a]]]]]]]]]]]}\n", "jobs:build:script config should be a string or a nested array of strings up to 10 levels deep"},
		{"job before_script", "j: {script: x, before_script: {a: b}}\n", "jobs:j:before_script config should be a string or a nested array of strings up to 10 levels deep"},
		{"job after_script", "j: {script: x, after_script: {a: b}}\n", "jobs:j:after_script config should be a string or a nested array of strings up to 10 levels deep"},
		{"stage a list", "j: {script: x, stage: [a]}\n", "jobs:j:stage config should be a string"},
		{"type a number", "j: {script: x, type: 1}\n", "jobs:j:type config should be a string"},
		{"stage not in stages", "j: {script: x, stage: release}\n", "j job: chosen stage release does not exist; available stages are .pre, build, test, deploy, .post"},
		{"type not in stages", "stages: [a]\nj: {script: x, type: b}\n", "j job: chosen stage b does not exist; available stages are .pre, a, .post"},
		{"bad when", "j: {script: x, when: later}\n", "jobs:j when should be one of: on_success, on_failure, always, manual, delayed"},
		{"when a list", "j: {script: x, when: [manual]}\n", "jobs:j when should be one of: on_success, on_failure, always, manual, delayed"},
		{"allow_failure a string", "j: {script: x, allow_failure: 'true'}\n", "jobs:j allow failure should be a boolean value"},
		{"allow_failure a number", "j: {script: x, allow_failure: 1}\n", "jobs:j allow failure should be a boolean value"},
		{"tags a string", "j: {script: x, tags: docker}\n", "jobs:j tags should be an array of strings"},
		{"tags with a number", "j: {script: x, tags: [1]}\n", "jobs:j tags should be an array of strings"},
		{"retry too high", "j: {script: x, retry: 3}\n", "jobs:j retry must be less than or equal to 2"},
		{"retry negative", "j: {script: x, retry: -1}\n", "jobs:j retry must be greater than or equal to 0"},
		{"retry a float", "j: {script: x, retry: 1.5}\n", "jobs:j retry must be an integer"},
		{"retry a word", "j: {script: x, retry: twice}\n", "jobs:j retry is not a number"},
		{"retry a list", "j: {script: x, retry: [1]}\n", "jobs:j retry is not a number"},
		{"job variables", "j: {script: x, variables: [A]}\n", "jobs:j:variables config should be a hash of key value pairs"},
		{"job image", "j: {script: x, image: 1}\n", "jobs:j:image config should be a hash or a string"},
		{"job services", "j: {script: x, services: {a: b}}\n", "jobs:j:services config should be an array"},
		{"job cache", "j: {script: x, cache: {key: a, nope: 1}}\n", "jobs:j:cache config contains unknown keys: nope"},
		{"dependencies a string", "j: {script: x, dependencies: build}\n", "jobs:j dependencies should be an array of strings"},
		{"undefined dependency", "j: {script: x, dependencies: [nope]}\n", "j job: undefined dependency: nope"},
		{"dependency in a later stage", "a: {script: x, stage: deploy}\nb: {script: x, dependencies: [a]}\n", "b job: dependency a is not defined in current or prior stages"},

		// only / except.
		{"only a string", "j: {script: x, only: master}\n", "jobs:j:only config should be an array of strings or regexps"},
		{"only refs a string", "j: {script: x, only: {refs: master}}\n", "jobs:j:only:refs config should be an array of strings or regexps"},
		{"only with a number", "j: {script: x, only: [1]}\n", "jobs:j:only config should be an array of strings or regexps"},
		{"only bad regexp", "j: {script: x, only: ['/(unclosed/']}\n", "jobs:j:only config should be an array of strings or regexps"},
		{"only Ruby-only regexp", "j: {script: x, only: ['/^(?!master)/']}\n", "jobs:j:only config should be an array of strings or regexps"},
		{"except bad regexp with path", "j: {script: x, except: ['/[/@group/project']}\n", "jobs:j:except config should be an array of strings or regexps"},

		// artifacts.
		{"artifacts a list", "j: {script: x, artifacts: [a]}\n", "jobs:j:artifacts config should be a hash"},
		{"artifacts unknown key", "j: {script: x, artifacts: {paths: [a], nope: {}}}\n", "jobs:j:artifacts config contains unknown keys: nope"},
		{"artifacts name", "j: {script: x, artifacts: {name: [a]}}\n", "jobs:j:artifacts name should be a string"},
		{"artifacts paths", "j: {script: x, artifacts: {paths: a}}\n", "jobs:j:artifacts paths should be an array of strings"},
		{"artifacts untracked", "j: {script: x, artifacts: {untracked: 'no'}}\n", "jobs:j:artifacts untracked should be a boolean value"},
		{"artifacts when", "j: {script: x, artifacts: {when: manual}}\n", "jobs:j:artifacts when should be on_success, on_failure or always"},
		{"artifacts expire_in", "j: {script: x, artifacts: {expire_in: soon}}\n", "jobs:j:artifacts expire in should be a duration"},
		{"artifacts expire_in a list", "j: {script: x, artifacts: {expire_in: [1 day]}}\n", "jobs:j:artifacts expire in should be a duration"},

		// environment.
		{"environment a list", "j: {script: x, environment: [a]}\n", "jobs:j:environment config should be a hash or a string"},
		{"environment unknown key", "j: {script: x, environment: {name: a, kind: b}}\n", "jobs:j:environment config contains unknown keys: kind"},
		{"environment without name", "j: {script: x, environment: {url: 'http://a'}}\n", "jobs:j:environment name can't be blank"},
		{"environment bad name", "j: {script: x, environment: 'prod!'}\n", "jobs:j:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"},
		{"environment name ends with slash", "j: {script: x, environment: 'review/'}\n", "jobs:j:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"},
		{"environment name too long", "j: {script: x, environment: " + strings.Repeat("a", 256) + "}\n", "jobs:j:environment name is too long (maximum is 255 characters)"},
		{"environment url", "j: {script: x, environment: {name: a, url: 'ftp://a'}}\n", "jobs:j:environment url must be a valid url"},
		{"environment url not a url", "j: {script: x, environment: {name: a, url: 'example.com'}}\n", "jobs:j:environment url must be a valid url"},
		{"environment action", "j: {script: x, environment: {name: a, action: restart}}\n", "jobs:j:environment action should be start, stop, prepare, verify, or access"},
		{"environment on_stop", "j: {script: x, environment: {name: a, on_stop: [b]}}\n", "jobs:j:environment on stop should be a string"},
		{"on_stop undefined", "j: {script: x, environment: {name: a, on_stop: b}}\n", "j job: on_stop job b is not defined"},
		{"on_stop without environment", "j: {script: x, environment: {name: a, on_stop: b}}\nb: {script: x}\n", "j job: on_stop job b does not have environment defined"},
		{"on_stop other environment", "j: {script: x, environment: {name: a, on_stop: b}}\nb: {script: x, environment: c}\n", "j job: on_stop job b have different environment name"},
		{"on_stop without stop action", "j: {script: x, environment: {name: a, on_stop: b}}\nb: {script: x, environment: a}\n", "j job: on_stop job b needs to have action stop defined"},

		// coverage.
		{"coverage without slashes", "j: {script: x, coverage: 'Total: (\\d+)%'}\n", "jobs:j:coverage config must be a regular expression"},
		{"coverage bad regexp", "j: {script: x, coverage: '/(/'}\n", "jobs:j:coverage config must be a regular expression"},
		{"coverage a number", "j: {script: x, coverage: 1}\n", "jobs:j:coverage config must be a regular expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			if cfg != nil {
				t.Error("a config came back with the error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v is not an ErrInvalidConfig", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}

// Every problem is reported, in order; Error gives the first as GitLab does.
func TestParseCollectsAllErrors(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte("a: {script: x, foo: 1}\nb: {when: never}\n"))
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"jobs:a config contains unknown keys: foo",
		"jobs:b script can't be blank",
		"jobs:b when should be one of: on_success, on_failure, always, manual, delayed",
	}
	if !reflect.DeepEqual(ce.Messages, want) {
		t.Errorf("messages = %q", ce.Messages)
	}
	if !strings.Contains(ce.All(), want[2]) {
		t.Errorf("All() = %q", ce.All())
	}
}

func TestParseEnvironmentURLWithVariables(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"https://$CI_ENVIRONMENT_SLUG.example.com", "http://${CI_COMMIT_REF_SLUG}.example.com/path", "HTTPS://Example.com"} {
		if _, err := Parse([]byte("j: {script: x, environment: {name: a, url: '" + url + "'}}")); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	src := "j: {script: x}\n#" + strings.Repeat("x", MaxConfigBytes)
	_, err := Parse([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("err = %v", err)
	}
}
