package ci_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestSubgroupVariables: a job of a project two groups down receives the
// variables of every group above it; of one key, the nearer group's wins
// over the farther one's, and the project's over both.
func TestSubgroupVariables(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	top, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Top"), Path: gitlab.Ptr("top")})
	if err != nil {
		t.Fatal(err)
	}
	sub, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Sub"), Path: gitlab.Ptr("sub"), ParentID: gitlab.Ptr(top.ID)})
	if err != nil {
		t.Fatal(err)
	}
	set := func(group int64, key, value string) {
		t.Helper()
		resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/groups/%d/variables", group),
			strings.NewReader(fmt.Sprintf(`{"key":%q,"value":%q}`, key, value)), nil,
			"Content-Type", "application/json", "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("group %d variable %s: %d %s", group, key, resp.StatusCode, raw)
		}
	}
	set(top.ID, "ONLY_TOP", "t1")
	set(top.ID, "NEARER", "t2")
	set(top.ID, "OWN", "t3")
	set(sub.ID, "NEARER", "s2")
	set(sub.ID, "OWN", "s3")
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("deep"), NamespaceID: gitlab.Ptr(sub.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("OWN"), Value: gitlab.Ptr("p3")}); err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `show:
  script:
    - echo "vars=$ONLY_TOP,$NEARER,$OWN end"
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	tr := trace(t, c, p.ID, jobsByName(t, c, p.ID, pl.ID)["show"].ID)
	if pl.Status != "success" || !strings.Contains(tr, "\nvars=t1,s2,p3 end\n") {
		t.Fatalf("pipeline %s, trace:\n%s", pl.Status, tr)
	}
}
