package ci_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const rulesCI = `workflow:
  name: "$KIND pipeline of $CI_COMMIT_BRANCH"
  rules:
    - if: $CI_COMMIT_MESSAGE =~ /skip-pipeline/
      when: never
    - if: $CI_COMMIT_BRANCH
      variables: {FROM_WORKFLOW: wf, KIND: Branch}
build:
  script: echo "build sees FROM_WORKFLOW=$FROM_WORKFLOW"
docs:
  script: echo docs
  rules:
    - changes: ["docs/**/*"]
backend:
  script: echo "backend MODE=$MODE"
  rules:
    - changes: ["src/*.go"]
      variables: {MODE: changed}
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE == "push"
      when: manual
      variables: {MODE: manual}
probe:
  script: echo probe
  rules:
    - exists: ["Makefile", "cmd/*/main.go"]
      allow_failure: true
`

// rules: and workflow: decide a push's pipeline on the shell executor:
// changes against the push's before-SHA (all hold for a new branch),
// exists against the commit's files, the matched rule's when,
// allow_failure and variables, the workflow rule's variables in every
// job, and a commit the workflow filters out gets no pipeline (and the
// API says why when asked for one).
func TestRulesDecidePushPipelines(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-rules")})
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		status string
		allow  bool
	}
	check := func(sha string, want map[string]job, status string) map[string]*gitlab.Job {
		t.Helper()
		pl := waitPipeline(t, c, p.ID, sha, status)
		jobs := jobsByName(t, c, p.ID, pl.ID)
		if len(jobs) != len(want) {
			t.Fatalf("jobs of %s: %v, want %v", sha[:8], names(jobs), want)
		}
		for name, w := range want {
			j := jobs[name]
			if j == nil {
				t.Fatalf("no job %s in %v", name, names(jobs))
			}
			jobs[name] = waitJob(t, c, p.ID, j.ID, w.status)
		}
		// allow_failure shows in the commit's statuses (the 9.x job
		// resource has no such field).
		statuses, _, err := c.Commits.GetCommitStatuses(p.ID, sha, &gitlab.GetCommitStatusesOptions{All: gitlab.Ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range statuses {
			if w, ok := want[st.Name]; ok && st.AllowFailure != w.allow {
				t.Errorf("%s: allow_failure %v", st.Name, st.AllowFailure)
			}
		}
		return jobs
	}

	// A new branch: no before-SHA, so every `changes` holds.
	first := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": rulesCI, "README.md": "hi"})
	jobs := check(first.ID, map[string]job{"build": {"success", false}, "docs": {"success", false}, "backend": {"success", false}}, "success")
	if pl, _, err := c.Pipelines.GetPipeline(p.ID, jobs["build"].Pipeline.ID); err != nil || pl.Name != "Branch pipeline of master" {
		t.Errorf("the pipeline's name: %+v %v", pl, err)
	}
	if tr := trace(t, c, p.ID, jobs["build"].ID); !strings.Contains(tr, "build sees FROM_WORKFLOW=wf") {
		t.Errorf("build:\n%s", tr)
	}
	if tr := trace(t, c, p.ID, jobs["backend"].ID); !strings.Contains(tr, "backend MODE=changed") {
		t.Errorf("backend:\n%s", tr)
	}

	// Go code and a Makefile: backend by its changes, probe exists, no docs.
	second := stocktest.CommitFiles(t, c, p.ID, "master", "code", map[string]string{"src/main.go": "package main", "Makefile": "all:"})
	check(second.ID, map[string]job{"build": {"success", false}, "backend": {"success", false}, "probe": {"success", true}}, "success")

	// Only the README: backend falls to its second rule, a manual job.
	third := stocktest.CommitFiles(t, c, p.ID, "master", "readme", map[string]string{"README.md": "hello"})
	// A manual job that may not fail blocks the pipeline: "manual".
	jobs = check(third.ID, map[string]job{"build": {"success", false}, "backend": {"manual", false}, "probe": {"success", true}}, "manual")
	played, _, err := c.Jobs.PlayJob(p.ID, jobs["backend"].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, p.ID, played.ID, "success")
	if tr := trace(t, c, p.ID, played.ID); !strings.Contains(tr, "backend MODE=manual") {
		t.Errorf("played backend:\n%s", tr)
	}

	// docs/ changes under a nested directory.
	fourth := stocktest.CommitFiles(t, c, p.ID, "master", "docs", map[string]string{"docs/guide/intro.md": "# Intro"})
	check(fourth.ID, map[string]job{"build": {"success", false}, "docs": {"success", false}, "backend": {"manual", false}, "probe": {"success", true}}, "manual")

	// A commit the workflow filters out: no pipeline. The next commit's
	// pipeline proves its push was handled (pushes are handled in order).
	skipped := stocktest.CommitFiles(t, c, p.ID, "master", "wip skip-pipeline", map[string]string{"notes.txt": "x"})
	_, resp, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master")})
	var apiErr *gitlab.ErrorResponse
	if resp == nil || resp.StatusCode != http.StatusBadRequest || !errors.As(err, &apiErr) ||
		!strings.Contains(apiErr.Message, "Pipeline filtered out by workflow rules.") {
		t.Fatalf("create on a filtered commit: %v %v", resp, err)
	}
	after := stocktest.CommitFiles(t, c, p.ID, "master", "more", map[string]string{"notes.txt": "y"})
	waitPipeline(t, c, p.ID, after.ID, "success", "manual", "running", "pending")
	list, _, err := c.Pipelines.ListProjectPipelines(p.ID, nil)
	if err != nil || len(list) != 5 {
		t.Fatalf("pipelines: %v %v", list, err)
	}
	for _, pl := range list {
		if pl.SHA == skipped.ID {
			t.Fatalf("the filtered commit has pipeline %+v", pl)
		}
	}
}

func names(jobs map[string]*gitlab.Job) []string {
	var out []string
	for n, j := range jobs {
		out = append(out, n+":"+j.Status)
	}
	return out
}
