package pipeline

import (
	"reflect"
	"strings"
	"testing"
)

func TestRunsFor(t *testing.T) {
	t.Parallel()
	branch := func(name string) RefInfo {
		return RefInfo{Name: name, Source: SourcePush, ProjectPath: "group/project"}
	}
	tag := func(name string) RefInfo {
		return RefInfo{Name: name, IsTag: true, Source: SourcePush, ProjectPath: "group/project"}
	}
	from := func(src Source) RefInfo {
		return RefInfo{Name: "master", Source: src, ProjectPath: "group/project"}
	}
	tests := []struct {
		name         string
		only, except []string
		ref          RefInfo
		want         bool
	}{
		{"no policy runs everywhere", nil, nil, tag("v1"), true},
		{"branch name", []string{"master"}, nil, branch("master"), true},
		{"other branch name", []string{"master"}, nil, branch("develop"), false},
		{"a name matches a tag too", []string{"v1.0"}, nil, tag("v1.0"), true},
		{"names are exact", []string{"master"}, nil, branch("master-2"), false},
		{"regexp", []string{"/^release-.*$/"}, nil, branch("release-1.2"), true},
		{"regexp miss", []string{"/^release-.*$/"}, nil, branch("hotfix"), false},
		{"regexp is a search, not anchored", []string{"/feat/"}, nil, branch("my-feature"), true},
		{"branches keyword", []string{"branches"}, nil, branch("x"), true},
		{"branches keyword on a tag", []string{"branches"}, nil, tag("x"), false},
		{"tags keyword", []string{"tags"}, nil, tag("v2"), true},
		{"tags keyword on a branch", []string{"tags"}, nil, branch("v2"), false},
		{"pushes", []string{"pushes"}, nil, from(SourcePush), true},
		{"pushes on a web pipeline", []string{"pushes"}, nil, from(SourceWeb), false},
		{"api", []string{"api"}, nil, from(SourceAPI), true},
		{"web", []string{"web"}, nil, from(SourceWeb), true},
		{"triggers", []string{"triggers"}, nil, from(SourceTrigger), true},
		{"schedules", []string{"schedules"}, nil, from(SourceSchedule), true},
		{"pipelines", []string{"pipelines"}, nil, from(SourcePipeline), true},
		{"external", []string{"external"}, nil, from(SourceExternal), true},
		{"no source matches no source keyword", []string{"pushes", "api"}, nil, RefInfo{Name: "master"}, false},
		{"a branch called api is still a name", []string{"api"}, nil, RefInfo{Name: "api", Source: SourcePush}, true},
		{"any of several", []string{"develop", "tags", "master"}, nil, branch("master"), true},
		{"path filter on this project", []string{"master@group/project"}, nil, branch("master"), true},
		{"path filter on a fork", []string{"master@someone/project"}, nil, branch("master"), false},
		{"keyword with path", []string{"branches@group/project"}, nil, branch("x"), true},
		{"regexp with path", []string{"/^rel/@group/project"}, nil, branch("release"), true},
		{"regexp containing @", []string{"/^user@/"}, nil, branch("user@host"), true},
		{"except a branch", nil, []string{"master"}, branch("master"), false},
		{"except another branch", nil, []string{"master"}, branch("develop"), true},
		{"except tags", nil, []string{"tags"}, tag("v1"), false},
		{"except schedules", nil, []string{"schedules"}, from(SourceSchedule), false},
		{"except on a fork only", nil, []string{"branches@group/project"}, RefInfo{Name: "x", ProjectPath: "fork/project"}, true},
		{"only and except both match", []string{"branches"}, []string{"/^wip-/"}, branch("wip-1"), false},
		{"only matches, except does not", []string{"branches"}, []string{"/^wip-/"}, branch("feature"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := Job{Name: "j", Only: tt.only, Except: tt.except}
			if got := j.RunsFor(tt.ref); got != tt.want {
				t.Errorf("RunsFor(%+v) with only %v except %v = %v, want %v", tt.ref, tt.only, tt.except, got, tt.want)
			}
		})
	}
}

func TestJobsForAndDependencies(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
compile: {stage: build, script: x}
docs: {stage: build, script: x, only: [tags]}
test: {script: x}
deploy: {stage: deploy, script: x, dependencies: [compile, docs]}
`)
	jobs := cfg.JobsFor(RefInfo{Name: "master", Source: SourcePush})
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if !reflect.DeepEqual(names, []string{"compile", "test", "deploy"}) {
		t.Fatalf("jobs = %v", names)
	}
	// Dependencies keep only jobs of the pipeline.
	if got := jobs[1].DependenciesIn(jobs); !reflect.DeepEqual(got, []string{"compile"}) {
		t.Errorf("test depends on %v", got)
	}
	if got := jobs[2].DependenciesIn(jobs); !reflect.DeepEqual(got, []string{"compile"}) {
		t.Errorf("deploy depends on %v", got)
	}
	tagJobs := cfg.JobsFor(RefInfo{Name: "v1", IsTag: true})
	if len(tagJobs) != 4 {
		t.Fatalf("tag pipeline has %d jobs", len(tagJobs))
	}
	if got := tagJobs[3].DependenciesIn(tagJobs); !reflect.DeepEqual(got, []string{"compile", "docs"}) {
		t.Errorf("deploy on a tag depends on %v", got)
	}
	if got := tagJobs[2].DependenciesIn(tagJobs); !reflect.DeepEqual(got, []string{"compile", "docs"}) {
		t.Errorf("test on a tag depends on %v", got)
	}
}

func TestJobsForNothing(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "j: {script: x, only: [tags]}")
	if jobs := cfg.JobsFor(RefInfo{Name: "master"}); len(jobs) != 0 {
		t.Errorf("jobs = %+v; the caller answers %q", jobs, NoJobsMessage)
	}
}

// only/except `variables` expressions, evaluated when the pipeline's
// variables are given, left unevaluated (only's holding, except's not)
// when they are not.
func TestOnlyExceptVariables(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
variables: {DEPLOY: "no"}
deploy:
  script: x
  only: {refs: [main], variables: [$DEPLOY == "yes", $FORCE]}
lint:
  script: x
  except: {variables: [$SKIP_LINT]}
docs:
  script: x
  variables: {DOCS: "1"}
  except: {refs: [tags], variables: ['$DOCS == "1"']}
`)
	pipelineVars := func(vars map[string]string) func(string) (string, bool) {
		return func(name string) (string, bool) {
			v, ok := vars[name]
			return v, ok
		}
	}
	names := func(ref RefInfo) string {
		var out []string
		for _, j := range cfg.JobsFor(ref) {
			out = append(out, j.Name)
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		ref  RefInfo
		want string
	}{
		{RefInfo{Name: "main", Source: SourcePush}, "deploy lint docs"},
		{RefInfo{Name: "main", Source: SourcePush, Variables: pipelineVars(nil)}, "lint docs"},
		{RefInfo{Name: "main", Source: SourcePush, Variables: pipelineVars(map[string]string{"FORCE": "1", "SKIP_LINT": "1"})}, "deploy docs"},
		{RefInfo{Name: "main", Source: SourcePush, Variables: pipelineVars(map[string]string{"DEPLOY": "yes"})}, "deploy lint docs"},
		{RefInfo{Name: "v1", IsTag: true, Source: SourcePush, Variables: pipelineVars(nil)}, "lint"},
		{RefInfo{Name: "v1", IsTag: true, Source: SourcePush}, "lint docs"},
	} {
		if got := names(tt.ref); got != tt.want {
			t.Errorf("%s (variables given: %v): jobs %q, want %q", tt.ref.Name, tt.ref.Variables != nil, got, tt.want)
		}
	}
	if _, err := Parse([]byte("j: {script: x, only: {variables: ['$A ==']}}\n")); err == nil ||
		err.Error() != "jobs:j:only:variables config should be an array of valid expressions" {
		t.Errorf("err = %v", err)
	}
}
