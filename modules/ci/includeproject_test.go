package ci_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// include: project reads another project of the server as the pipeline's
// user may: a private project they cannot read is GitLab's "not found or
// access denied", the same project once they are a member is included,
// at its default branch or at the ref named, its own include: local
// naming its own files.
func TestIncludeProject(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	templates := stocktest.NewProject(t, c, "templates", "private")
	stocktest.CommitFiles(t, c, templates.ID, "master", "templates", map[string]string{
		"ci/go.yml":   "include: ci/base.yml\n.go:\n  extends: .base\n  variables: {FROM: templates-master}\n",
		"ci/base.yml": ".base:\n  before_script: [echo base-from-templates]\n",
	})
	if _, _, err := c.Branches.CreateBranch(templates.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("v1"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, c, templates.ID, "v1", "v1", map[string]string{
		"ci/go.yml": ".go:\n  variables: {FROM: templates-v1}\n",
	})
	app := stocktest.NewProject(t, c, "app", "private")
	dev := s.CreateUser(t, "incdev")
	stocktest.AddMember(t, c, app.ID, dev.ID, gitlab.DeveloperPermissions)

	file := func(ref string) string {
		inc := "include:\n  - project: " + templates.PathWithNamespace + "\n    file: ci/go.yml\n"
		if ref != "" {
			inc += "    ref: " + ref + "\n"
		}
		return inc + "build:\n  extends: .go\n  script: [echo \"from:$FROM\"]\n"
	}
	commit := stocktest.CommitFiles(t, dev.Client, app.ID, "master", "denied", map[string]string{".gitlab-ci.yml": file("")})
	pl := waitPipeline(t, c, app.ID, commit.ID, "failed")
	want := "Project `" + templates.PathWithNamespace + "` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined."
	if pl.YamlErrors != want {
		t.Fatalf("yaml_errors %q, want %q", pl.YamlErrors, want)
	}
	// Lint reads as its caller: the developer is refused, root is not.
	lint := func(token string) string {
		resp, raw := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/ci/lint", app.ID), nil, nil, "PRIVATE-TOKEN", token)
		if resp.StatusCode != 200 {
			t.Fatalf("lint: %d %s", resp.StatusCode, raw)
		}
		return strings.TrimSpace(string(raw))
	}
	if got := lint(dev.Token); got != `{"valid":false,"errors":["`+want+`"],"warnings":[]}` {
		t.Errorf("developer's lint: %s", got)
	}
	if got := lint(s.RootToken); got != `{"valid":true,"errors":[],"warnings":[]}` {
		t.Errorf("root's lint: %s", got)
	}

	stocktest.AddMember(t, c, templates.ID, dev.ID, gitlab.ReporterPermissions)
	commit = stocktest.CommitFiles(t, dev.Client, app.ID, "master", "allowed", map[string]string{".gitlab-ci.yml": file("") + "\n"})
	pl = waitPipeline(t, c, app.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s: %q", pl.Status, pl.YamlErrors)
	}
	got := trace(t, c, app.ID, jobsByName(t, c, app.ID, pl.ID)["build"].ID)
	for _, line := range []string{"\nbase-from-templates\n", "\nfrom:templates-master\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("trace lacks %q:\n%s", line, got)
		}
	}

	commit = stocktest.CommitFiles(t, dev.Client, app.ID, "master", "at v1", map[string]string{".gitlab-ci.yml": file("v1")})
	pl = waitPipeline(t, c, app.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline at v1 %s: %q", pl.Status, pl.YamlErrors)
	}
	if got := trace(t, c, app.ID, jobsByName(t, c, app.ID, pl.ID)["build"].ID); !strings.Contains(got, "\nfrom:templates-v1\n") || strings.Contains(got, "base-from-templates") {
		t.Errorf("trace at v1:\n%s", got)
	}

	commit = stocktest.CommitFiles(t, dev.Client, app.ID, "master", "no ref", map[string]string{".gitlab-ci.yml": file("nope")})
	pl = waitPipeline(t, c, app.ID, commit.ID, "failed")
	if want := "Project `" + templates.PathWithNamespace + "` reference `nope` does not exist!"; pl.YamlErrors != want {
		t.Errorf("yaml_errors %q, want %q", pl.YamlErrors, want)
	}
}
