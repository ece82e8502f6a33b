package pipeline

import (
	"slices"
	"testing"
)

// Current GitLab accepts `dependencies` naming a job of the same stage,
// with needs or without; only a later stage is refused. Without needs such
// a job runs beside the one it names and fetches nothing from it; with
// needs it waits for it and fetches its artifacts.
func TestDependenciesOfTheSameStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		src   string
		job   string
		fetch []string
	}{
		{"same stage, no needs: accepted, nothing fetched",
			"check: {stage: deploy, script: x}\nship: {stage: deploy, script: x, dependencies: [check]}\n",
			"ship", []string{}},
		{"same stage beside an earlier one: only the earlier is fetched",
			"compile: {stage: build, script: x}\ncheck: {stage: deploy, script: x}\nship: {stage: deploy, script: x, dependencies: [compile, check]}\n",
			"ship", []string{"compile"}},
		{"same stage with needs: fetched",
			"check: {stage: deploy, script: x}\nship: {stage: deploy, script: x, needs: [check], dependencies: [check]}\n",
			"ship", []string{"check"}},
		{"same stage of a parallel job: accepted, nothing fetched",
			"check: {stage: deploy, script: x, parallel: 2}\nship: {stage: deploy, script: x, dependencies: [check]}\n",
			"ship", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			jobs := cfg.JobsFor(RefInfo{Name: "main"})
			i := slices.IndexFunc(jobs, func(j Job) bool { return j.Name == tt.job })
			if i < 0 {
				t.Fatalf("no job %s in %d jobs", tt.job, len(jobs))
			}
			if got := jobs[i].DependenciesIn(jobs); !slices.Equal(got, tt.fetch) {
				t.Errorf("%s fetches from %v, want %v", tt.job, got, tt.fetch)
			}
		})
	}
}
