package ci_test

import (
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A CI file written as people write them today, with its templates in an
// included file, runs on the shell executor: include: local brings the
// templates and a job (one through a wildcard), default: gives every job its before_script and
// variables, extends and !reference build the jobs, and the including
// file's own keys win over the included ones. A missing include fails the
// pipeline with GitLab's message.
func TestCurrentSyntaxPipelineRuns(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-current")})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".gitlab-ci.yml": `include:
  - local: ci/templates.yml
  - ci/lint.yml
  - local: 'ci/extra/*.yml'
stages: [build, test]
variables:
  WHO: main
default:
  before_script:
    - echo "before from default"
build:
  extends: .shell
  stage: build
  script:
    - !reference [.shell, script]
    - echo "build by $WHO with $TOOL"
test:
  extends: [.shell, .quiet]
  script: echo "test sees QUIET=$QUIET"
`,
		"ci/templates.yml": `variables:
  WHO: include
  TOOL: make
.shell:
  script: [echo "template step"]
.quiet:
  variables: {QUIET: "yes"}
`,
		"ci/extra/docs.yml": `docs:
  stage: test
  script: echo "docs from a wildcard include"
`,
		"ci/extra/notes.txt": "not yaml: [",
		"ci/lint.yml": `lint:
  stage: test
  inherit: {default: false}
  script: echo "lint without before_script"
`,
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", files)
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" || pl.YamlErrors != "" {
		t.Fatalf("pipeline %+v", pl)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if len(jobs) != 4 || jobs["build"] == nil || jobs["test"] == nil || jobs["lint"] == nil || jobs["docs"] == nil {
		t.Fatalf("jobs %v", jobs)
	}
	wants := map[string][]string{
		"build": {"before from default", "template step", "build by main with make"},
		"test":  {"before from default", "test sees QUIET=yes"},
		"lint":  {"lint without before_script"},
		"docs":  {"before from default", "docs from a wildcard include"},
	}
	for name, lines := range wants {
		j := jobs[name]
		if j.Status != "success" {
			t.Fatalf("%s: %s", name, j.Status)
		}
		got := trace(t, c, p.ID, j.ID)
		for _, line := range lines {
			if !strings.Contains(got, "\n"+line) {
				t.Errorf("%s's trace lacks %q:\n%s", name, line, got)
			}
		}
	}
	if got := trace(t, c, p.ID, jobs["lint"].ID); strings.Contains(got, "\nbefore from default") {
		t.Errorf("lint inherited the default before_script:\n%s", got)
	}
	if jobs["build"].Stage != "build" || jobs["lint"].Stage != "test" {
		t.Errorf("stages: build %s, lint %s", jobs["build"].Stage, jobs["lint"].Stage)
	}

	// An include of a file the commit does not have.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": "include: ci/missing.yml\nj: {script: x}\n",
	})
	pl = waitPipeline(t, c, p.ID, commit.ID, "failed")
	if pl.YamlErrors != "Local file `ci/missing.yml` does not exist!" {
		t.Fatalf("yaml_errors %q", pl.YamlErrors)
	}
}

// only/except `variables` expressions see the pipeline's predefined
// variables and the project's variables when the pipeline is created.
func TestOnlyVariablesSelectJobs(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-only-variables")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("DEPLOY"), Value: gitlab.Ptr("yes")}); err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `
variables: {FROM_FILE: "1"}
deploy:
  script: echo deploy
  only: {variables: [$DEPLOY == "yes"]}
master-only:
  script: echo master
  only: {variables: [$CI_COMMIT_REF_NAME == "master"]}
file-variable:
  script: echo file
  only: {variables: [$FROM_FILE]}
never:
  script: echo never
  only: {variables: [$NOT_SET]}
excluded:
  script: echo excluded
  except: {variables: [$DEPLOY =~ /^y/]}
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	var names []string
	for name := range jobs {
		names = append(names, name)
	}
	if len(jobs) != 3 || jobs["deploy"] == nil || jobs["master-only"] == nil || jobs["file-variable"] == nil || pl.Status != "success" {
		t.Fatalf("pipeline %s, jobs %v", pl.Status, names)
	}
}

// include: rules decide which files a pipeline includes, against the
// pipeline's variables and files; an invalid rule fails the pipeline with
// its yaml error.
func TestIncludeRules(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-include-rules")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": `include:
  - local: ci/default-branch.yml
    rules:
      - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  - local: ci/tags.yml
    rules:
      - if: $CI_COMMIT_TAG
  - local: ci/make.yml
    rules:
      - exists: [Makefile]
  - local: ci/go.yml
    rules:
      - exists: ["**/*.go"]
        when: never
      - when: always
base:
  script: echo base
`,
		"ci/default-branch.yml": "on-default:\n  script: echo default\n",
		"ci/tags.yml":           "on-tag:\n  script: echo tag\n",
		"ci/make.yml":           "make:\n  script: make\n",
		"ci/go.yml":             "no-go:\n  script: echo no go\n",
	})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if len(jobs) != 3 || jobs["base"] == nil || jobs["on-default"] == nil || jobs["no-go"] == nil {
		t.Fatalf("jobs %v", names(jobs))
	}
	// Go code now exists: no-go is not included.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "go", map[string]string{"cmd/main.go": "package main"})
	pl = waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if jobs := jobsByName(t, c, p.ID, pl.ID); len(jobs) != 2 || jobs["no-go"] != nil {
		t.Fatalf("jobs with Go code %v", names(jobs))
	}

	commit = stocktest.CommitFiles(t, c, p.ID, "master", "bad", map[string]string{".gitlab-ci.yml": `include:
  - local: ci/make.yml
    rules:
      - if: $X
        when: manual
base:
  script: echo base
`})
	pl = waitPipeline(t, c, p.ID, commit.ID, "failed")
	if pl.YamlErrors != "include:rules:rule when unknown value: manual" {
		t.Fatalf("yaml_errors %q", pl.YamlErrors)
	}
}
