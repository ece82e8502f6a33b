package pipeline

import (
	"slices"
	"testing"
)

// Real files write `=~` with a quoted string on the right; GitLab takes
// "/re/" there as a pattern and any other text as one the left side must
// occur in. Both the job rules and the workflow rules read it so.
func TestRulesMatchAQuotedString(t *testing.T) {
	t.Parallel()
	const src = `
workflow:
  rules:
    - if: '$CI_PIPELINE_SOURCE =~ "push web"'
lint:
  script: x
  rules:
    - if: '$CI_PIPELINE_SOURCE =~ "merge_request_event"'
      when: never
    - when: on_success
release:
  script: x
  rules:
    - if: $CI_COMMIT_BRANCH =~ "/^release-[0-9]+$/"
nightly:
  script: x
  rules:
    - if: $CI_COMMIT_BRANCH !~ 'main'
`
	cfg, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tests := []struct {
		name   string
		vars   map[string]string
		create bool
		jobs   []string
	}{
		{"push to main", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"}, true, []string{"lint"}},
		{"push to a release branch", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "release-12"}, true, []string{"lint", "release", "nightly"}},
		{"a branch named like a release", map[string]string{"CI_PIPELINE_SOURCE": "web", "CI_COMMIT_BRANCH": "release-12b"}, true, []string{"lint", "nightly"}},
		{"a branch whose name is part of main", map[string]string{"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "ai"}, true, []string{"lint"}},
		{"a schedule", map[string]string{"CI_PIPELINE_SOURCE": "schedule", "CI_COMMIT_BRANCH": "main"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := RefInfo{Name: tt.vars["CI_COMMIT_BRANCH"], Source: Source(tt.vars["CI_PIPELINE_SOURCE"]),
				Variables: func(k string) (string, bool) { v, ok := tt.vars[k]; return v, ok }}
			if got := cfg.WorkflowFor(ref).Create; got != tt.create {
				t.Fatalf("workflow creates = %v, want %v", got, tt.create)
			}
			if !tt.create {
				return
			}
			var names []string
			for _, j := range cfg.JobsFor(ref) {
				names = append(names, j.Name)
			}
			if !slices.Equal(names, tt.jobs) {
				t.Errorf("jobs %v, want %v", names, tt.jobs)
			}
		})
	}
}
