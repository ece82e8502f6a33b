package ci_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// parallelFile has a matrix job of four instances and a parallel: 2 job,
// each writing an artifact named for itself, and a job of the next stage
// that depends on the matrix job by its written name: it must receive all
// four archives, and none of the other job's.
const parallelFile = `variables:
  OS: global
  LEVEL: global
stages: [build, collect]
build:
  stage: build
  variables:
    LEVEL: job
  parallel:
    matrix:
      - OS: [linux, mac]
        ARCH: [amd64, arm64]
  script:
    - mkdir -p out
    - echo "$OS-$ARCH" > "out/$OS-$ARCH.txt"
    - echo "matrix:$OS:$ARCH:$LEVEL:$CI_NODE_INDEX/$CI_NODE_TOTAL:$CI_JOB_NAME"
  artifacts:
    paths: [out/]
shard:
  stage: build
  parallel: 2
  script:
    - mkdir -p shards
    - echo "$CI_NODE_INDEX" > "shards/$CI_NODE_INDEX.txt"
    - echo "shard:$CI_NODE_INDEX/$CI_NODE_TOTAL:$CI_JOB_NAME"
  artifacts:
    paths: [shards/]
collect:
  stage: collect
  dependencies: [build]
  script:
    - echo "collected:$(ls out | tr '\n' ' ')"
    - echo "shards:$(ls shards 2>/dev/null | wc -l)"
    - echo "node:${CI_NODE_INDEX:-none}/$CI_NODE_TOTAL"
pick:
  stage: collect
  needs:
    - job: build
      parallel:
        matrix:
          - OS: mac
            ARCH: arm64
  script:
    - echo "picked:$(ls out | tr '\n' ' ')"
`

func TestParallelMatrixOnTheShellExecutor(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-parallel")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": parallelFile})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s: %q", pl.Status, pl.YamlErrors)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	var names []string
	for name := range jobs {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{
		"build: [linux, amd64]", "build: [linux, arm64]", "build: [mac, amd64]", "build: [mac, arm64]",
		"collect", "pick", "shard 1/2", "shard 2/2",
	}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("jobs %q", names)
	}
	// Each instance sees its own values over the global and job ones,
	// and its place among the instances, in GitLab's order.
	for i, combo := range []string{"linux:amd64", "linux:arm64", "mac:amd64", "mac:arm64"} {
		os, arch, _ := strings.Cut(combo, ":")
		name := fmt.Sprintf("build: [%s, %s]", os, arch)
		j := jobs[name]
		if j.Status != "success" || j.Stage != "build" {
			t.Errorf("%s: %s in %s", name, j.Status, j.Stage)
		}
		line := fmt.Sprintf("matrix:%s:%s:job:%d/4:%s", os, arch, i+1, name)
		if got := trace(t, c, p.ID, j.ID); !strings.Contains(got, line) {
			t.Errorf("%s's trace lacks %q:\n%s", name, line, got)
		}
	}
	for i := 1; i <= 2; i++ {
		name := fmt.Sprintf("shard %d/2", i)
		line := fmt.Sprintf("shard:%d/2:%s", i, name)
		if got := trace(t, c, p.ID, jobs[name].ID); !strings.Contains(got, line) {
			t.Errorf("%s's trace lacks %q:\n%s", name, line, got)
		}
	}
	// The later job fetched every instance's archive of the job it named,
	// none of the other's, and is not parallel itself.
	got := trace(t, c, p.ID, jobs["collect"].ID)
	for _, line := range []string{"collected:linux-amd64.txt linux-arm64.txt mac-amd64.txt mac-arm64.txt \n", "shards:0\n", "node:none/1\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("collect's trace lacks %q:\n%s", line, got)
		}
	}
	// needs with a matrix: the one instance it names, and its artifacts.
	if got := trace(t, c, p.ID, jobs["pick"].ID); !strings.Contains(got, "picked:mac-arm64.txt \n") {
		t.Errorf("pick's trace:\n%s", got)
	}
	// Artifacts by ref and name take the instance's name.
	resp := s.Do(t, "GET", fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/raw/out/mac-arm64.txt?job=%s", p.ID, "build%3A%20%5Bmac%2C%20arm64%5D"), nil, "PRIVATE-TOKEN", s.RootToken)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("an instance's artifact by name: %d", resp.StatusCode)
	}
}

// Out-of-bounds parallel fails the pipeline with GitLab's yaml error and
// makes no job.
func TestParallelYAMLErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-parallel-errors")})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct{ file, want string }{
		{"t: {script: x, parallel: 201}\n", "jobs:t:parallel config must be less than or equal to 200"},
		{"t: {script: x, parallel: {matrix: [{A: [" + strings.Repeat("a,", 20) + "a], B: [" + strings.Repeat("b,", 9) + "b]}]}}\n",
			"jobs:t:parallel:matrix config generates too many jobs (maximum is 200)"},
	} {
		commit := stocktest.CommitFiles(t, c, p.ID, "master", fmt.Sprint("ci ", i), map[string]string{".gitlab-ci.yml": tt.file})
		pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
		if pl.YamlErrors != tt.want {
			t.Errorf("yaml_errors %q, want %q", pl.YamlErrors, tt.want)
		}
		if jobs, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil); err != nil || len(jobs) != 0 {
			t.Errorf("jobs of an invalid pipeline: %v %v", jobs, err)
		}
	}
}
