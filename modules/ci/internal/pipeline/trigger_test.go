package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
)

func TestParseTriggerForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      Trigger
	}{
		{"a project's path", "b: {trigger: my/group/project}\n",
			Trigger{Project: "my/group/project", ForwardYAMLVariables: true}},
		{"project, branch and depend", "b: {trigger: {project: g/p, branch: stable, strategy: depend}}\n",
			Trigger{Project: "g/p", Branch: "stable", Depend: true, ForwardYAMLVariables: true}},
		{"a local file", "b: {trigger: {include: ci/child.yml}}\n",
			Trigger{Include: []string{"ci/child.yml"}, ForwardYAMLVariables: true}},
		{"locals of both spellings", "b: {trigger: {include: [a.yml, {local: b.yml}], strategy: depend}}\n",
			Trigger{Include: []string{"a.yml", "b.yml"}, Depend: true, ForwardYAMLVariables: true}},
		{"include as a mapping", "b: {trigger: {include: {local: a.yml}}}\n",
			Trigger{Include: []string{"a.yml"}, ForwardYAMLVariables: true}},
		{"forward", "b: {trigger: {include: a.yml, forward: {yaml_variables: false, pipeline_variables: true}}}\n",
			Trigger{Include: []string{"a.yml"}, ForwardPipelineVariables: true}},
		{"forward on a project", "b: {trigger: {project: g/p, forward: {pipeline_variables: true}}}\n",
			Trigger{Project: "g/p", ForwardYAMLVariables: true, ForwardPipelineVariables: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := jobNamed(t, mustParse(t, tc.src), "b")
			if !b.Bridge() || !reflect.DeepEqual(*b.Trigger, tc.want) {
				t.Errorf("trigger = %+v, want %+v", b.Trigger, tc.want)
			}
			if b.Script != nil || b.DependsOnAllEarlier {
				t.Errorf("a trigger job with a script or dependencies: %+v", b)
			}
		})
	}
}

func TestParseTriggerJobKeywords(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
variables: {G: g, H: h}
stages: [build, test, deploy]
build: {stage: build, script: make}
child:
  stage: deploy
  trigger: {include: child.yml}
  variables: {H: own, C: c}
  when: manual
  only: [main]
other:
  trigger: g/p
  inherit: {variables: [G]}
  allow_failure: true
  when: on_failure
  except: [tags]
  needs: [build]
`)
	child := jobNamed(t, cfg, "child")
	wantVars := []Variable{{Key: "G", Value: "g", Public: true}, {Key: "H", Value: "own", Public: true}, {Key: "C", Value: "c", Public: true}}
	if child.Stage != "deploy" || child.StageIndex != 2 || child.When != cistatus.WhenManual || !child.AllowFailure ||
		!reflect.DeepEqual(child.Only, []string{"main"}) || !reflect.DeepEqual(child.Variables, wantVars) {
		t.Errorf("child = %+v", child)
	}
	other := jobNamed(t, cfg, "other")
	if other.Stage != "test" || other.When != cistatus.WhenOnFailure || !other.AllowFailure ||
		!reflect.DeepEqual(other.Except, []string{"tags"}) || len(other.Needs) != 1 || other.Needs[0].Job != "build" ||
		!reflect.DeepEqual(other.Variables, []Variable{{Key: "G", Value: "g", Public: true}}) {
		t.Errorf("other = %+v", other)
	}
	if !child.RunsFor(RefInfo{Name: "main", Source: SourcePush}) || child.RunsFor(RefInfo{Name: "dev", Source: SourcePush}) {
		t.Error("only: is not applied to a trigger job")
	}
}

func TestParseTriggerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"script and trigger", "b: {script: x, trigger: g/p}\n", "jobs:b config contains unknown keys: trigger"},
		{"job keywords", "b: {trigger: g/p, image: ruby, tags: [a]}\n", "jobs:b config contains unknown keys: image, tags"},
		{"not yet", "b: {trigger: g/p, parallel: 2}\n", "jobs:b parallel is not supported yet"},
		{"needs an unknown job", "b: {trigger: g/p, needs: [nope]}\n", "b job: undefined need: nope"},
		{"blank", "b: {trigger: ''}\n", "jobs:b:trigger config can't be blank"},
		{"null", "b: {trigger: }\n", "jobs:b:trigger config can't be blank"},
		{"a list", "b: {trigger: [a]}\n", "jobs:b:trigger has to be either a string or a hash"},
		{"no project", "b: {trigger: {strategy: depend}}\n", "jobs:b:trigger project can't be blank"},
		{"project not a string", "b: {trigger: {project: [a]}}\n", "jobs:b:trigger project should be a string"},
		{"branch not a string", "b: {trigger: {project: a, branch: [b]}}\n", "jobs:b:trigger branch should be a string"},
		{"strategy", "b: {trigger: {project: a, strategy: wait}}\n", "jobs:b:trigger strategy should be depend"},
		{"strategy of a child", "b: {trigger: {include: a.yml, strategy: 1}}\n", "jobs:b:trigger strategy should be a string"},
		{"unknown trigger key", "b: {trigger: {project: a, include2: x}}\n", "jobs:b:trigger config contains unknown keys: include2"},
		{"branch with include", "b: {trigger: {include: a.yml, branch: main}}\n", "jobs:b:trigger config contains unknown keys: branch"},
		{"forward not a hash", "b: {trigger: {include: a.yml, forward: yes}}\n", "jobs:b:trigger:forward config should be a hash"},
		{"forward key", "b: {trigger: {include: a.yml, forward: {secrets: true}}}\n", "jobs:b:trigger:forward config contains unknown keys: secrets"},
		{"forward value", "b: {trigger: {include: a.yml, forward: {yaml_variables: maybe}}}\n", "jobs:b:trigger:forward yaml_variables should be a boolean value"},
		{"too many includes", "b: {trigger: {include: [a, b, c, d]}}\n", "jobs:b:trigger:include config is too long (maximum is 3)"},
		{"no includes", "b: {trigger: {include: []}}\n", "jobs:b:trigger:include config can't be blank"},
		{"include of a project", "b: {trigger: {include: [{project: g/p, file: a.yml}]}}\n", "jobs:b:trigger:include project is not supported yet"},
		{"include of a template", "b: {trigger: {include: {template: A.yml}}}\n", "jobs:b:trigger:include template is not supported yet"},
		{"include of an artifact", "b: {trigger: {include: [{artifact: a.yml, job: j}]}}\n", "jobs:b:trigger:include artifact is not supported yet"},
		{"include of a URL", "b: {trigger: {include: 'https://example.com/a.yml'}}\n", "jobs:b:trigger:include remote is not supported yet"},
		{"local not a string", "b: {trigger: {include: [{local: [a]}]}}\n", "jobs:b:trigger:include local should be a string"},
		{"include item", "b: {trigger: {include: [[a]]}}\n", "jobs:b:trigger:include config should be a hash or a string"},
		{"when delayed", "b: {trigger: g/p, when: delayed}\n", "jobs:b when should be one of: on_success, on_failure, always, manual"},
		{"allow_failure codes", "b: {trigger: g/p, allow_failure: {exit_codes: 1}}\n", "jobs:b allow failure should be a boolean value"},
		{"unknown stage", "b: {trigger: g/p, stage: nope}\n", "b job: chosen stage nope does not exist; available stages are .pre, build, test, deploy, .post"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}

// A child's CI file is its includes, read as `include: local` is.
func TestChildConfig(t *testing.T) {
	t.Parallel()
	files := &mapFiles{files: map[string]string{"ci/a.yml": "a: {script: x}\n", "ci/b: 'x'.yml": "b: {script: y}\n"}}
	cfg, err := ParseFiles(context.Background(), ChildConfig([]string{"ci/a.yml", "ci/b: 'x'.yml"}), files)
	if err != nil || len(cfg.Jobs) != 2 || cfg.Jobs[0].Name != "a" || cfg.Jobs[1].Name != "b" {
		t.Fatalf("cfg %+v, err %v", cfg, err)
	}
	_, err = ParseFiles(context.Background(), ChildConfig([]string{"missing.yml"}), files)
	if err == nil || err.Error() != "Local file `missing.yml` does not exist!" {
		t.Errorf("err = %v", err)
	}
}

// A file of nothing but trigger jobs with their longest include lists
// parses within the same bounds as any other: the parser reads no child.
func TestManyTriggerJobs(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < MaxConfigBytes-200; i++ {
		fmt.Fprintf(&b, "t%d: {trigger: {include: [a%d.yml, {local: b.yml}, c.yml], strategy: depend, forward: {pipeline_variables: true}}, variables: {A: b}}\n", i, i)
	}
	if err := parseBounded(t, b.String(), maxWork, 512<<20); err != nil {
		t.Fatal(err)
	}
}
