package ci_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The real gitlab-runner runs a matrix pipeline: each instance receives
// its matrix variables and CI_NODE_INDEX/CI_NODE_TOTAL, the job that
// depends on the matrix job by its written name downloads every
// instance's artifacts, and one that needs one instance by its matrix
// downloads that one's.
func TestRunnerParallelMatrix(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "runner-matrix", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "4", "--wait-timeout", "60")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `stages: [build, collect]
build:
  stage: build
  variables: {GO: job}
  parallel:
    matrix:
      - GO: ["1.21", "1.22"]
  script:
    - mkdir -p out
    - echo "$GO" > "out/go-$GO.txt"
    - echo "instance:$GO:$CI_NODE_INDEX/$CI_NODE_TOTAL:$CI_JOB_NAME"
  artifacts:
    paths: [out/]
collect:
  stage: collect
  dependencies: [build]
  script:
    - echo "collected:$(cat out/*.txt | tr '\n' ' ')"
    - echo "total:$CI_NODE_TOTAL"
pick:
  stage: collect
  needs:
    - job: build
      parallel:
        matrix:
          - GO: "1.22"
  script:
    - echo "picked:$(cat out/*.txt | tr '\n' ' ')"
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if len(jobs) != 4 {
		t.Fatalf("jobs %v", jobs)
	}
	for i, goVersion := range []string{"1.21", "1.22"} {
		name := fmt.Sprintf("build: [%s]", goVersion)
		j := jobs[name]
		if j == nil || j.Runner.ID != r.ID {
			t.Fatalf("%s: %+v", name, j)
		}
		line := fmt.Sprintf("instance:%s:%d/2:%s", goVersion, i+1, name)
		if got := trace(t, c, p.ID, j.ID); !strings.Contains(got, line) {
			t.Errorf("%s's trace lacks %q:\n%s", name, line, got)
		}
	}
	// A need of one matrix instance downloads that instance's archive only.
	if got := trace(t, c, p.ID, jobs["pick"].ID); !strings.Contains(got, "picked:1.22 \n") {
		t.Errorf("pick's trace:\n%s", got)
	}
	got := trace(t, c, p.ID, jobs["collect"].ID)
	for _, line := range []string{"collected:1.21 1.22 \n", "total:1\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("collect's trace lacks %q:\n%s", line, got)
		}
	}
}
