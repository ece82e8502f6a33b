package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// FuzzParse checks that no input makes Parse panic (its internal recover
// would report "internal error", which fails here), run long, or return a
// configuration that breaks the model's invariants.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./modules/ci/internal/pipeline/
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"rspec:\n  script: rake spec\n",
		"stages: [a, b]\nx: {stage: a, script: [c]}\ny: {stage: b, script: d, dependencies: [x]}\n",
		".t: &t {script: x}\nj:\n  <<: *t\n",
		"a: &a [*a]\n",
		billionLaughs(),
		"j: {script: x, only: ['/^re/', tags, 'm@g/p'], except: [api]}\n",
		"j: {script: x, environment: {name: a, url: 'https://$X', on_stop: s}}\ns: {script: y, environment: {name: a, action: stop}}\n",
		"j: {script: x, artifacts: {paths: [a], expire_in: 3 days 4 hrs}, coverage: '/(\\d+)%/', retry: 2}\n",
		"image: {name: a, entrypoint: [b]}\nservices: [c, {name: d, alias: e}]\ncache: {key: k, paths: [p]}\nj: {script: x}\n",
		"? [a]\n: b\n",
		"j: !!binary aGVsbG8=\n",
		"%YAML 1.1\n---\nj: {script: x}\n",
		// Current GitLab's structure and its bounds.
		".a: {script: [x], variables: {A: b}}\n.b: {extends: .a, tags: [t]}\nj: {extends: [.b, .a], stage: .pre}\n",
		".a: {extends: .b}\n.b: {extends: .a}\nj: {extends: .a}\n",
		".s: {script: [a, [b, [c]]]}\nj: {script: [!reference [.s, script], d], variables: !reference [.s, variables]}\n",
		".a: {script: !reference [.b, script]}\n.b: {script: !reference [.a, script]}\nj: {script: !reference [.a, script]}\n",
		"default: {image: a, before_script: b, retry: {max: 2, when: [script_failure]}, timeout: 1h}\nj: {script: x, inherit: {default: [image]}}\n",
		"include: [a.yml, {local: b.yml}, {remote: 'https://x'}]\nj: {script: x}\n",
		"spec:\n  inputs: {s: {default: test}}\n---\nj: {stage: $[[ inputs.s ]], script: x}\n",
		"workflow: {rules: [{when: always}]}\nj: {script: x, rules: [{if: $A}], needs: [], parallel: 2}\n",
		"workflow: {name: n, rules: [{if: '$A =~ /x+/', variables: {B: c}}, {when: never}]}\nj: {script: x, rules: [{if: $B == \"c\", changes: {paths: ['**/*.go'], compare_to: main}, exists: [a], when: delayed, start_in: 1 day, allow_failure: true, variables: {D: e}}, {when: manual}]}\n",
		".r: &r [{if: $A}, [{changes: [a]}]]\nj: {script: x, rules: [*r, {when: never}]}\nk: {script: y, rules: []}\n",
		"j: {script: x, only: {refs: [main], variables: [$A], changes: [a], kubernetes: active}, when: delayed, start_in: 1 hour}\n",
		"j: {script: x, cache: [{key: {files: [a]}, when: always, fallback_keys: [b]}], allow_failure: {exit_codes: 1}, artifacts: {reports: {junit: a}}}\n",
		"include: [a.yml]\nj: {script: x}\n",
		"include: [a.yml, b/a.yml, 'b/*.yml', '**/*.yml']\nj: {script: x}\n",
		"include: {local: '*.yml'}\n.t: {script: x}\nj: {extends: .t}\n",
		"a: {script: x, needs: [b, {job: c, artifacts: false, optional: true}]}\nb: {script: x, stage: build, needs: []}\n",
		"a: {script: x, needs: [b]}\nb: {script: x, needs: [c]}\nc: {script: x, needs: [a]}\n",
		"a: {script: x, needs: [{job: b, pipeline: p}], dependencies: [b]}\nb: {script: x, needs: [a, a]}\n",
		// Release jobs.
		"r: {script: x, release: {tag_name: $CI_COMMIT_TAG, description: d, ref: main, released_at: '2026-01-01', milestones: [a], assets: {links: [{name: a, url: 'https://x', link_type: image, filepath: /a}]}}}\n",
		"r: {script: x, release: {tag_name: [v], description: {}, assets: {links: [a, {url: 'ftp://x'}]}}}\n",
		// Resource groups.
		"a: {script: x, resource_group: 'prod-$CI_COMMIT_REF_SLUG'}\nb: {script: y, resource_group: [a]}\nc: {trigger: g/p, resource_group: r}\n",
		// Trigger jobs.
		"b: {trigger: {include: a.yml}, needs: [j, {job: k, optional: true}]}\nj: {script: x}\n",
		"b: {trigger: {include: [a.yml, {local: b.yml}], strategy: depend, forward: {yaml_variables: false}}, variables: {A: b}}\n",
		"b: {trigger: g/p, stage: deploy, when: manual}\nc: {trigger: {project: g/p, branch: main}}\n",
		"b: {trigger: {include: [a, b, c, d]}}\nc: {trigger: {strategy: x}, script: y}\n",
		"b: {trigger: {include: a.yml}, rules: [{if: $A == 'x', when: manual, variables: {B: c}}]}\nj: {script: x}\n",
		"include: [{project: g/p, ref: v1, file: [a.yml, b/c.yml]}, {project: g/p, file: a.yml}]\nj: {script: x}\n",
		"include: ['https://a.example/x.yml', {remote: 'https://b.example/y.yml'}, {remote: 'http://c'}]\nj: {script: x}\n",
		// parallel, its matrix and their bounds.
		"stages: [a, b]\nx: {stage: a, script: x, parallel: 3}\ny: {stage: b, script: x, dependencies: [x]}\n",
		"variables: {A: g}\nx: {script: x, variables: {A: j}, parallel: {matrix: [{A: [1, b], B: c}, {C: [d, e]}]}}\n",
		"x: {script: x, parallel: {matrix: []}}\n",
		"x 1/2: {script: x}\nx: {script: x, parallel: 2}\n",
		"x: {stage: build, script: x, parallel: {matrix: [{A: [a, b]}]}}\ny: {script: x, needs: [x, {job: x, parallel: {matrix: [{A: b}]}}]}\n",
		"x: {script: x, parallel: {matrix: [{A: [a, b, c, d, e, f, g], B: [a, b, c, d, e, f, g], C: [a, b, c, d, e]}]}}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		// A watchdog, because a Parse that never returns would otherwise
		// stall the fuzzer silently instead of reporting the input.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("Parse has run for 10 s on %d bytes: %q", len(src), src))
			}
		}()
		start := time.Now()
		// Every included path reads the input itself, and every directory
		// lists two files and a directory: includes, wildcards, their
		// cycles and their bounds are fuzzed with the rest.
		cfg, err := ParseFiles(context.Background(), src, selfFiles(src))
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Fatalf("Parse took %v on %d bytes", elapsed, len(src))
		}
		if err != nil {
			if cfg != nil {
				t.Fatal("a config came back with an error")
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("Parse panicked: %v", err)
			}
			return
		}
		checkInvariants(t, cfg, src)
	})
}

// selfFiles is a repository whose every file holds the same text.
type selfFiles []byte

func (f selfFiles) Read(context.Context, string) ([]byte, error) { return f, nil }

// Project answers every project and ref with the same files, so that
// include: project is fuzzed too.
func (f selfFiles) Project(context.Context, string, string) (Files, error) { return f, nil }

// Fetch answers every URL with the same text: include: remote is fuzzed
// too.
func (f selfFiles) Fetch(context.Context, string) ([]byte, error) { return f, nil }

func (f selfFiles) List(_ context.Context, dir string) ([]string, error) {
	if strings.Count(dir, "/") > 3 {
		return nil, fs.ErrNotExist
	}
	return []string{"a.yml", "c.yml", "b/"}, nil
}

func checkInvariants(t *testing.T, cfg *Config, src []byte) {
	t.Helper()
	// An empty matrix makes no job of its job, as in GitLab.
	if len(cfg.Jobs) == 0 && !strings.Contains(string(src), "matrix") || len(cfg.Stages) == 0 {
		t.Fatalf("a valid config without jobs or stages: %+v", cfg)
	}
	byName := map[string]Job{}
	for _, j := range cfg.Jobs {
		if _, dup := byName[j.Name]; dup {
			t.Fatalf("two jobs named %q", j.Name)
		}
		byName[j.Name] = j
		if len(j.Name) > maxJobNameLength || j.NodeIndex < 0 || j.NodeIndex > j.NodeTotal || j.NodeTotal > maxParallel ||
			(j.NodeIndex == 0) != (j.NodeTotal == 0) {
			t.Fatalf("job %q: node %d of %d", j.Name, j.NodeIndex, j.NodeTotal)
		}
	}
	if len(cfg.Jobs) > maxParallelInstances+len(src)/2 {
		t.Fatalf("%d jobs from %d bytes", len(cfg.Jobs), len(src))
	}
	for _, j := range cfg.Jobs {
		switch {
		case j.Bridge() && (len(j.Script) > 0 || (j.Trigger.Project == "") == (len(j.Trigger.Include) == 0) ||
			len(j.Trigger.Include) > MaxTriggerIncludes):
			t.Fatalf("trigger job %q: %+v %+v", j.Name, j, j.Trigger)
		case !j.Bridge() && len(j.Script) == 0:
			t.Fatalf("job %q has no script", j.Name)
		}
		if j.StageIndex < 0 || j.StageIndex >= len(cfg.Stages) || cfg.Stages[j.StageIndex] != j.Stage {
			t.Fatalf("job %q: stage %q at %d of %v", j.Name, j.Stage, j.StageIndex, cfg.Stages)
		}
		if j.Cache != nil && len(j.Caches) > 0 && j.Cache.Key != j.Caches[0].Key {
			t.Fatalf("job %q: cache %+v is not the first of %+v", j.Name, j.Cache, j.Caches)
		}
		if !j.When.Valid() || j.Retry < 0 || j.Retry > 2 || (j.DependsOnAllEarlier && j.Dependencies != nil) {
			t.Fatalf("job %q: %+v", j.Name, j)
		}
		for _, d := range j.Dependencies {
			dep, ok := byName[d]
			if !ok || dep.StageIndex > j.StageIndex || (!j.HasNeeds() && dep.StageIndex == j.StageIndex) {
				t.Fatalf("job %q depends on %q", j.Name, d)
			}
		}
		if len(j.Needs) > MaxNeeds {
			t.Fatalf("job %q has %d needs", j.Name, len(j.Needs))
		}
		seen := map[string]bool{}
		for _, n := range j.Needs {
			other, ok := byName[n.Job]
			if seen[n.Job] || (!ok && !n.Optional) || (ok && other.StageIndex > j.StageIndex) || n.Job == j.Name {
				t.Fatalf("job %q needs %+v", j.Name, n)
			}
			seen[n.Job] = true
		}
		// Selecting jobs for any ref must not panic either.
		j.RunsFor(RefInfo{Name: j.Name, Source: SourcePush})
	}
	// Nor deciding a pipeline with rules and workflow, every variable
	// set, changes known and every file present.
	_, _, _ = cfg.ForPipeline(RefInfo{Name: "main", Source: SourcePush,
		Variables:  func(name string) (string, bool) { return name, true },
		Changed:    func(string) ([]string, bool) { return []string{"a.go", "docs/b.md"}, true },
		FileExists: func(*ciexpr.Glob) bool { return true }}, 1000)
}
