package pipeline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseNeedsForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		job  string
		want []Need
	}{
		{"absent", "a: {script: x}\n", "a", nil},
		{"null is absent", "a: {script: x, needs: }\n", "a", nil},
		{"empty: starts at once", "a: {script: x, needs: []}\n", "a", []Need{}},
		{"names", "b: {stage: build, script: x}\nc: {stage: build, script: x}\na: {script: x, needs: [b, c]}\n", "a",
			[]Need{{Job: "b", Artifacts: true}, {Job: "c", Artifacts: true}}},
		{"hashes", "b: {stage: build, script: x}\na: {script: x, needs: [{job: b, artifacts: false}, {job: c, optional: true}]}\n", "a",
			[]Need{{Job: "b"}, {Job: "c", Artifacts: true, Optional: true}}},
		{"same stage", "b: {script: x}\na: {script: x, needs: [{job: b, artifacts: true, optional: false}]}\n", "a",
			[]Need{{Job: "b", Artifacts: true}}},
		{"YAML 1.1 booleans", "b: {script: x}\na: {script: x, needs: [{job: b, artifacts: no}]}\n", "a", []Need{{Job: "b"}}},
		{"not from default", "default: {image: i}\nb: {script: x}\na: {script: x}\n", "a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range cfg.Jobs {
				if j.Name != tt.job {
					continue
				}
				if !reflect.DeepEqual(j.Needs, tt.want) || (j.Needs == nil) != (tt.want == nil) {
					t.Errorf("needs = %#v, want %#v", j.Needs, tt.want)
				}
				return
			}
			t.Fatalf("no job %s", tt.job)
		})
	}
}

func TestParseNeedsErrors(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxNeeds+1)
	for i := range many {
		many[i] = fmt.Sprintf("n%d", i)
	}
	tests := []struct{ name, src, want string }{
		{"a string", "a: {script: x, needs: b}\n", "jobs:a:needs config should be an array"},
		{"a hash", "a: {script: x, needs: {job: b}}\n", "jobs:a:needs config should be an array"},
		{"a number entry", "a: {script: x, needs: [1]}\n", "jobs:a:needs:need config can only be a string or a hash"},
		{"a list entry", "a: {script: x, needs: [[b]]}\n", "jobs:a:needs:need config can only be a string or a hash"},
		{"no job", "a: {script: x, needs: [{artifacts: true}]}\n", "jobs:a:needs:need job should be a string"},
		{"job a list", "a: {script: x, needs: [{job: [b]}]}\n", "jobs:a:needs:need job should be a string"},
		{"artifacts not a boolean", "b: {script: x}\na: {script: x, needs: [{job: b, artifacts: maybe}]}\n", "jobs:a:needs:need artifacts should be a boolean value"},
		{"optional not a boolean", "b: {script: x}\na: {script: x, needs: [{job: b, optional: 1}]}\n", "jobs:a:needs:need optional should be a boolean value"},
		{"unknown key", "b: {script: x}\na: {script: x, needs: [{job: b, when: always}]}\n", "jobs:a:needs:need config contains unknown keys: when"},
		{"another project", "a: {script: x, needs: [{project: g/p, job: b, ref: main}]}\n", "jobs:a:needs:need project is not supported yet: Fennec needs jobs of the same pipeline only"},
		{"another pipeline", "a: {script: x, needs: [{pipeline: $PARENT_PIPELINE_ID, job: b}]}\n", "jobs:a:needs:need pipeline is not supported yet: Fennec needs jobs of the same pipeline only"},
		{"parallel matrix of no parallel job", "a: {script: x, needs: [{job: b, parallel: {matrix: []}}]}\n", "a job: undefined need: b"},
		{"duplicated", "b: {script: x}\na: {script: x, needs: [b, {job: b}]}\n", "jobs:a:needs config has the following needs duplicated: b."},
		{"too many", "a: {script: x, needs: [" + strings.Join(many, ", ") + "]}\n",
			"a: one job can only need 50 others, but you have listed 51. See needs keyword documentation for more details"},
		{"undefined", "a: {script: x, needs: [nope]}\n", "a job: undefined need: nope"},
		{"later stage", "a: {stage: build, script: x, needs: [b]}\nb: {stage: test, script: x}\n", "a job: need b is not defined in current or prior stages"},
		{"self", "a: {script: x, needs: [a]}\n", "The pipeline has circular dependencies: self-dependency: a"},
		{"cycle", "a: {script: x, needs: [b]}\nb: {script: x, needs: [c]}\nc: {script: x, needs: [a]}\n",
			`The pipeline has circular dependencies: topological sort failed: ["a", "b", "c"]`},
		{"cycle behind a chain", "z: {script: x, needs: [a]}\na: {script: x, needs: [b]}\nb: {script: x, needs: [a]}\n",
			`The pipeline has circular dependencies: topological sort failed: ["a", "b"]`},
		{"dependencies outside needs", "b: {stage: build, script: x}\nc: {stage: build, script: x}\na: {script: x, needs: [b], dependencies: [b, c]}\n",
			"jobs:a dependencies the c should be part of needs"},
		{"dependency in a later stage with needs", "b: {stage: deploy, script: x}\na: {script: x, needs: [], dependencies: [b]}\n",
			"a job: dependency b is not defined in current or prior stages"},
		{"default does not carry needs", "default: {needs: []}\na: {script: x}\n", "default config contains unknown keys: needs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", cfg)
			}
			if !errors.Is(err, ErrInvalidConfig) || err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}

// Optional needs of jobs that are not in the file, and same-stage needs
// and dependencies, are valid.
func TestParseNeedsValid(t *testing.T) {
	t.Parallel()
	src := "b: {script: x}\na: {script: x, needs: [b, {job: gone, optional: true}], dependencies: [b]}\n"
	if _, err := Parse([]byte(src)); err != nil {
		t.Fatal(err)
	}
}

// A need of a job the pipeline leaves out (only/except) refuses the
// pipeline in GitLab's words, unless it is optional; artifacts come only
// from needed jobs that keep them.
func TestForPipelineNeeds(t *testing.T) {
	t.Parallel()
	src := `
stages: [build, test, deploy]
tagged: {stage: build, script: x, only: [tags]}
build: {stage: build, script: x}
lint: {stage: build, script: x}
unit: {stage: test, script: x, needs: [build, {job: tagged, optional: true}, {job: lint, artifacts: false}]}
narrow: {stage: test, script: x, needs: [build, lint], dependencies: [lint]}
late: {stage: deploy, script: x}
strict: {stage: deploy, script: x, needs: [tagged]}
`
	cfg, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = cfg.ForPipeline(RefInfo{Name: "main"}, 100)
	var ce *ConfigError
	want := "'strict' job needs 'tagged' job, but 'tagged' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional."
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Messages, []string{want}) {
		t.Fatalf("err = %v", err)
	}
	_, jobs, err := cfg.ForPipeline(RefInfo{Name: "v1", IsTag: true}, 100)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Job{}
	for _, j := range jobs {
		byName[j.Name] = j
	}
	for name, want := range map[string][]string{
		"unit":   {"tagged", "build"},
		"narrow": {"lint"},
		"late":   {"tagged", "build", "lint", "unit", "narrow"},
		"strict": {"tagged"},
		"build":  {},
	} {
		j := byName[name]
		if got := j.DependenciesIn(jobs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s fetches from %v, want %v", name, got, want)
		}
	}
}

// A file of as many jobs as fit, each needing the maximum of the jobs
// before it in its stage, is read in bounded work and memory, and its
// cycle check is linear (a chain of needs thousands long).
func TestManyNeeds(t *testing.T) {
	var b strings.Builder
	b.WriteString("j0: {script: x}\n")
	for i := 1; b.Len() < MaxConfigBytes-2000; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, needs: [", i)
		for k := max(0, i-MaxNeeds); k < i; k++ {
			fmt.Fprintf(&b, "j%d,", k)
		}
		b.WriteString("]}\n")
	}
	if err := parseBounded(t, b.String(), maxWork, 512<<20); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.WriteString("j0: {script: x, needs: [j9999]}\n")
	for i := 1; i < 10000; i++ {
		fmt.Fprintf(&b, "j%d: {script: x, needs: [j%d]}\n", i, i-1)
	}
	err := parseBounded(t, b.String(), maxWork, 512<<20)
	if err == nil || !strings.HasPrefix(err.Error(), `The pipeline has circular dependencies: topological sort failed: ["j0", "j9999", "j9998"`) {
		t.Errorf("err = %.200v", err)
	}
}
