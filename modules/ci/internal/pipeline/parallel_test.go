package pipeline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// instanceSummary is what a test of parallel compares: the name, the
// node index and total, and the variables in order.
type instanceSummary struct {
	name         string
	index, total int
	vars         string
}

func summarize(cfg *Config) []instanceSummary {
	out := make([]instanceSummary, 0, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		var vars []string
		for _, v := range j.Variables {
			vars = append(vars, v.Key+"="+v.Value)
		}
		out = append(out, instanceSummary{j.Name, j.NodeIndex, j.NodeTotal, strings.Join(vars, " ")})
	}
	return out
}

func TestParallelExpansion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []instanceSummary
	}{
		{"a number", "test: {script: x, parallel: 3}\n", []instanceSummary{
			{"test 1/3", 1, 3, ""}, {"test 2/3", 2, 3, ""}, {"test 3/3", 3, 3, ""},
		}},
		{"one", "test: {script: x, parallel: 1}\n", []instanceSummary{{"test 1/1", 1, 1, ""}}},
		{"the limit", "t: {script: x, parallel: 200}\n", nil}, // counted below
		{"jobs around keep their place", "a: {script: x}\nb: {script: x, parallel: 2}\nc: {script: x}\n", []instanceSummary{
			{"a", 0, 0, ""}, {"b 1/2", 1, 2, ""}, {"b 2/2", 2, 2, ""}, {"c", 0, 0, ""},
		}},
		// GitLab's documented example: the product of each entry, entry
		// after entry, the last variable varying fastest.
		{"matrix", `deploystacks:
  script: x
  parallel:
    matrix:
      - PROVIDER: aws
        STACK: [monitoring, app1, app2]
      - PROVIDER: ovh
        STACK: [monitoring, backup, app]
      - PROVIDER: [gcp, vultr]
        STACK: [data, processing]
`, []instanceSummary{
			{"deploystacks: [aws, monitoring]", 1, 10, "PROVIDER=aws STACK=monitoring"},
			{"deploystacks: [aws, app1]", 2, 10, "PROVIDER=aws STACK=app1"},
			{"deploystacks: [aws, app2]", 3, 10, "PROVIDER=aws STACK=app2"},
			{"deploystacks: [ovh, monitoring]", 4, 10, "PROVIDER=ovh STACK=monitoring"},
			{"deploystacks: [ovh, backup]", 5, 10, "PROVIDER=ovh STACK=backup"},
			{"deploystacks: [ovh, app]", 6, 10, "PROVIDER=ovh STACK=app"},
			{"deploystacks: [gcp, data]", 7, 10, "PROVIDER=gcp STACK=data"},
			{"deploystacks: [gcp, processing]", 8, 10, "PROVIDER=gcp STACK=processing"},
			{"deploystacks: [vultr, data]", 9, 10, "PROVIDER=vultr STACK=data"},
			{"deploystacks: [vultr, processing]", 10, 10, "PROVIDER=vultr STACK=processing"},
		}},
		{"one-dimensional matrix of numbers", "t: {script: x, parallel: {matrix: [{V: [1, '2.0']}]}}\n", []instanceSummary{
			{"t: [1]", 1, 2, "V=1"}, {"t: [2.0]", 2, 2, "V=2.0"},
		}},
		// Matrix variables are the job's own, over the global ones and
		// over those the job wrote (in place), new ones after them.
		{"matrix variables win", "variables: {A: global, B: global}\nt: {script: x, variables: {B: job, C: job}, parallel: {matrix: [{C: m, A: m, D: m}]}}\n", []instanceSummary{
			{"t: [m, m, m]", 1, 1, "A=m B=job C=m D=m"},
		}},
		// A job named like an instance is replaced where it stands, as
		// GitLab's hash of jobs by name does.
		{"a job named like an instance", "t 1/2: {script: first}\nt: {script: x, parallel: 2}\n", []instanceSummary{
			{"t 1/2", 1, 2, ""}, {"t 2/2", 2, 2, ""},
		}},
		{"two entries making the same name", "t: {script: x, parallel: {matrix: [{A: a}, {B: a}]}}\n", []instanceSummary{
			{"t: [a]", 2, 2, "B=a"},
		}},
		{"an empty matrix makes no job", "a: {script: x}\nt: {script: x, parallel: {matrix: []}}\n", []instanceSummary{{"a", 0, 0, ""}}},
		{"from a template", ".t: {parallel: {matrix: [{A: [x, y]}]}}\nj: {extends: .t, script: x}\n", []instanceSummary{
			{"j: [x]", 1, 2, "A=x"}, {"j: [y]", 2, 2, "A=y"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := mustParse(t, tt.src)
			if tt.want == nil {
				if len(cfg.Jobs) != maxParallel || cfg.Jobs[199].Name != "t 200/200" {
					t.Fatalf("%d jobs, the last %q", len(cfg.Jobs), cfg.Jobs[len(cfg.Jobs)-1].Name)
				}
				return
			}
			if got := summarize(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("jobs:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// Instances keep everything else the job wrote.
func TestParallelInstancesKeepTheJob(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "stages: [build, test]\nt: {stage: build, script: [a, b], tags: [docker], when: manual, artifacts: {paths: [out]}, parallel: 2}\n")
	for _, j := range cfg.Jobs {
		if j.Stage != "build" || j.StageIndex != 0 || !reflect.DeepEqual(j.Script, []string{"a", "b"}) ||
			!reflect.DeepEqual(j.Tags, []string{"docker"}) || !j.Manual() || !j.AllowFailure ||
			j.Artifacts == nil || j.Artifacts.Paths[0] != "out" {
			t.Errorf("instance %+v", j)
		}
	}
}

func TestParallelDependencies(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `stages: [build, test]
b: {stage: build, script: x, parallel: {matrix: [{OS: [linux, mac]}]}}
n: {stage: build, script: x, parallel: 2}
one: {stage: build, script: x}
t: {stage: test, script: x, dependencies: [one, b, n]}
all: {stage: test, script: x}
`)
	want := []string{"one", "b: [linux]", "b: [mac]", "n 1/2", "n 2/2"}
	if got := jobNamed(t, cfg, "t").Dependencies; !reflect.DeepEqual(got, want) {
		t.Errorf("dependencies = %q", got)
	}
	all := jobNamed(t, cfg, "all")
	if got := all.DependenciesIn(cfg.Jobs); len(got) != 5 {
		t.Errorf("the jobs of earlier stages = %q", got)
	}
}

// only/except apply to each instance, which sees its own variables.
func TestParallelPolicyPerInstance(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "t: {script: x, only: {variables: ['$OS == \"linux\"']}, parallel: {matrix: [{OS: [linux, mac]}]}}\nu: {script: x, only: [main], parallel: 2}\n")
	ref := RefInfo{Name: "main", Source: SourcePush, Variables: func(string) (string, bool) { return "", false }}
	var names []string
	for _, j := range cfg.JobsFor(ref) {
		names = append(names, j.Name)
	}
	if want := []string{"t: [linux]", "u 1/2", "u 2/2"}; !reflect.DeepEqual(names, want) {
		t.Errorf("jobs for main = %q", names)
	}
	ref.Name = "other"
	names = nil
	for _, j := range cfg.JobsFor(ref) {
		names = append(names, j.Name)
	}
	if want := []string{"t: [linux]"}; !reflect.DeepEqual(names, want) {
		t.Errorf("jobs for other = %q", names)
	}
}

func TestParallelErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 250)
	tests := []struct{ name, src, want string }{
		{"zero", "t: {script: x, parallel: 0}\n", "jobs:t:parallel config must be greater than or equal to 1"},
		{"negative", "t: {script: x, parallel: -3}\n", "jobs:t:parallel config must be greater than or equal to 1"},
		{"above the limit", "t: {script: x, parallel: 201}\n", "jobs:t:parallel config must be less than or equal to 200"},
		{"huge", "t: {script: x, parallel: 99999999999999999999999}\n", "jobs:t:parallel config must be less than or equal to 200"},
		{"a float", "t: {script: x, parallel: 2.5}\n", "jobs:t:parallel config must be an integer"},
		{"a string", "t: {script: x, parallel: '3'}\n", "jobs:t:parallel should be an integer or a hash"},
		{"a list", "t: {script: x, parallel: [3]}\n", "jobs:t:parallel should be an integer or a hash"},
		{"a boolean", "t: {script: x, parallel: true}\n", "jobs:t:parallel should be an integer or a hash"},
		{"no matrix", "t: {script: x, parallel: {}}\n", "jobs:t:parallel config missing required keys: matrix"},
		{"unknown key", "t: {script: x, parallel: {matrix: [{A: b}], max: 2}}\n", "jobs:t:parallel config contains unknown keys: max"},
		{"matrix a hash", "t: {script: x, parallel: {matrix: {A: b}}}\n", "jobs:t:parallel:matrix config should be an array of hashes"},
		{"matrix of strings", "t: {script: x, parallel: {matrix: [A]}}\n", "jobs:t:parallel:matrix config should be an array of hashes"},
		{"matrix null", "t: {script: x, parallel: {matrix: null}}\n", "jobs:t:parallel:matrix config should be an array of hashes"},
		{"empty entry", "t: {script: x, parallel: {matrix: [{}]}}\n", "jobs:t:parallel:matrix:variables config requires at least 1 items"},
		{"empty list", "t: {script: x, parallel: {matrix: [{A: []}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"empty string", "t: {script: x, parallel: {matrix: [{A: ''}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"null value", "t: {script: x, parallel: {matrix: [{A: null}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"float value", "t: {script: x, parallel: {matrix: [{A: 1.5}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"boolean value", "t: {script: x, parallel: {matrix: [{A: [a, true]}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"nested list", "t: {script: x, parallel: {matrix: [{A: [a, [b]]}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"hash value", "t: {script: x, parallel: {matrix: [{A: {b: c}}]}}\n", "jobs:t:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"one entry too large", "t: {script: x, parallel: {matrix: [{A: " + seq(15) + ", B: " + seq(14) + "}]}}\n", "jobs:t:parallel:matrix config generates too many jobs (maximum is 200)"},
		// The bound is on the sum over the entries.
		{"entries too many together", "t: {script: x, parallel: {matrix: [{A: " + seq(100) + "}, {B: " + seq(101) + "}]}}\n", "jobs:t:parallel:matrix config generates too many jobs (maximum is 200)"},
		{"a product that would overflow", "t: {script: x, parallel: {matrix: [{A: " + seq(1000) + ", B: " + seq(1000) + ", C: " + seq(1000) + ", D: " + seq(1000) + ", E: " + seq(1000) + ", F: " + seq(1000) + ", G: " + seq(1000) + "}]}}\n", "jobs:t:parallel:matrix config generates too many jobs (maximum is 200)"},
		{"job name too long", strings.Repeat("a", 256) + ": {script: x}\n", "jobs:" + strings.Repeat("a", 256) + " name is too long (maximum is 255 characters)"},
		{"instance name too long", long + ": {script: x, parallel: 10}\n", "jobs:" + long + " 10/10 name is too long (maximum is 255 characters)"},
		{"matrix name too long", "t: {script: x, parallel: {matrix: [{A: " + strings.Repeat("v", 252) + "}]}}\n", "jobs:t: [" + strings.Repeat("v", 252) + "] name is too long (maximum is 255 characters)"},
		{"dependency on a parallel job of a later stage", "a: {script: x, parallel: 2, stage: deploy}\nb: {script: x, dependencies: [a]}\n", "b job: dependency a 1/2 is not defined in current or prior stages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse accepted it: %d jobs", len(cfg.Jobs))
			}
			if !errors.Is(err, ErrInvalidConfig) || err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
		})
	}
}

// seq is a YAML list of n distinct values.
func seq(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint("v", i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// Exactly 200 over several entries is allowed.
func TestParallelMatrixAtTheLimit(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, "t: {script: x, parallel: {matrix: [{A: "+seq(10)+", B: "+seq(10)+"}, {C: "+seq(100)+"}]}}\n")
	if len(cfg.Jobs) != 200 || cfg.Jobs[0].Name != "t: [v0, v0]" || cfg.Jobs[199].Name != "t: [v99]" || cfg.Jobs[199].NodeIndex != 200 {
		t.Errorf("%d jobs: %q ... %q", len(cfg.Jobs), cfg.Jobs[0].Name, cfg.Jobs[len(cfg.Jobs)-1].Name)
	}
}

func TestNodeVariables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		job  Job
		want []Variable
	}{
		{Job{Name: "a"}, []Variable{{Key: "CI_NODE_TOTAL", Value: "1", Public: true}}},
		{Job{Name: "a 2/5", NodeIndex: 2, NodeTotal: 5}, []Variable{
			{Key: "CI_NODE_INDEX", Value: "2", Public: true}, {Key: "CI_NODE_TOTAL", Value: "5", Public: true},
		}},
	}
	for _, tt := range tests {
		if got := NodeVariables(&tt.job); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v", tt.job.Name, got)
		}
	}
}

// rules: decide each instance with its own variables, and workflow rule
// variables replace the global ones, not the matrix's.
func TestParallelRulesPerInstance(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `variables: {OS: global, LEVEL: global}
workflow:
  rules:
    - variables: {OS: workflow, LEVEL: workflow}
t:
  script: x
  parallel:
    matrix:
      - OS: [linux, mac]
  rules:
    - if: '$OS == "mac"'
      when: manual
    - when: on_success
`)
	_, jobs, err := cfg.ForPipeline(RefInfo{Name: "main", Source: SourcePush, Variables: func(string) (string, bool) { return "", false }}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		vars := map[string]string{}
		for _, v := range j.Variables {
			vars[v.Key] = v.Value
		}
		got = append(got, fmt.Sprintf("%s %s OS=%s LEVEL=%s", j.Name, j.When, vars["OS"], vars["LEVEL"]))
	}
	want := []string{"t: [linux] on_success OS=linux LEVEL=workflow", "t: [mac] manual OS=mac LEVEL=workflow"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs:\n got %q\nwant %q", got, want)
	}
}

// needs: of a parallel job need every instance; with parallel: matrix,
// the instances its combinations name.
func TestParallelNeeds(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `stages: [build, test]
build:
  stage: build
  script: x
  parallel:
    matrix:
      - OS: [linux, mac]
        ARCH: [amd64, arm64]
shard: {stage: build, script: x, parallel: 2}
all: {stage: test, script: x, needs: [build, {job: shard, artifacts: false}]}
some:
  stage: test
  script: x
  needs:
    - job: build
      parallel:
        matrix:
          - OS: linux
            ARCH: [amd64, arm64]
          - OS: mac
            ARCH: arm64
  dependencies: ["build: [mac, arm64]"]
`)
	names := func(needs []Need) []string {
		var out []string
		for _, n := range needs {
			out = append(out, fmt.Sprintf("%s/%v", n.Job, n.Artifacts))
		}
		return out
	}
	if got, want := names(jobNamed(t, cfg, "all").Needs), []string{
		"build: [linux, amd64]/true", "build: [linux, arm64]/true", "build: [mac, amd64]/true", "build: [mac, arm64]/true",
		"shard 1/2/false", "shard 2/2/false",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("all needs %q", got)
	}
	if got, want := names(jobNamed(t, cfg, "some").Needs), []string{
		"build: [linux, amd64]/true", "build: [linux, arm64]/true", "build: [mac, arm64]/true",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("some needs %q", got)
	}
}

func TestParallelNeedsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"a combination that is no instance", "a: {stage: build, script: x, parallel: {matrix: [{A: [x, y]}]}}\nb: {script: x, needs: [{job: a, parallel: {matrix: [{A: z}]}}]}\n", "b job: undefined need: a: [z]"},
		{"a number", "a: {stage: build, script: x, parallel: 2}\nb: {script: x, needs: [{job: a, parallel: 2}]}\n", "jobs:b:needs:need:parallel config cannot use \"parallel: <number>\"."},
		{"a bad matrix", "a: {stage: build, script: x, parallel: 2}\nb: {script: x, needs: [{job: a, parallel: {matrix: [{A: []}]}}]}\n", "jobs:b:needs:need:parallel:matrix:variables config should be a hash of key value pairs, value can be an array"},
		{"too many instances needed", "a: {stage: build, script: x, parallel: 51}\nb: {script: x, needs: [a]}\n", "b: one job can only need 50 others, but you have listed 51. See needs keyword documentation for more details"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.src))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
}
