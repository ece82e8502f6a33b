package ci_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const todayCI = `show:
  script:
    - echo "branch=${CI_COMMIT_BRANCH:-none} tag=${CI_COMMIT_TAG:-none} default=$CI_DEFAULT_BRANCH protected=$CI_COMMIT_REF_PROTECTED source=$CI_PIPELINE_SOURCE"
    - echo "title=$CI_PROJECT_TITLE root=$CI_PROJECT_ROOT_NAMESPACE short=$CI_COMMIT_SHORT_SHA subject=$CI_COMMIT_TITLE"
    - echo "server=$CI_SERVER_URL host=$CI_SERVER_HOST api=$CI_API_V4_URL created=${CI_PIPELINE_CREATED_AT:+yes}"
`

// Jobs receive the predefined variables of current GitLab next to the 9.x
// ones: a branch pipeline has CI_COMMIT_BRANCH and no CI_COMMIT_TAG, a tag
// pipeline the other way round, and both know the default branch, the
// project's title and the server's URL.
func TestJobsGetTodaysPredefinedVariables(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "Today Vars", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "Add CI\n\nWith today's variables.", map[string]string{".gitlab-ci.yml": todayCI})
	branchPipeline := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if branchPipeline.Status != "success" {
		t.Fatalf("branch pipeline %s", branchPipeline.Status)
	}
	protected := "false"
	if _, _, err := c.ProtectedBranches.GetProtectedBranch(p.ID, "master"); err == nil {
		protected = "true"
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	root, _, _ := strings.Cut(p.PathWithNamespace, "/")
	common := []string{
		fmt.Sprintf("title=Today Vars root=%s short=%s subject=Add CI", root, commit.ID[:8]),
		fmt.Sprintf("server=%s host=%s api=%s/api/v4 created=yes", s.URL, u.Hostname(), s.URL),
	}
	branchWant := append([]string{"branch=master tag=none default=master protected=" + protected + " source=push"}, common...)
	tr := trace(t, c, p.ID, jobsByName(t, c, p.ID, branchPipeline.ID)["show"].ID)
	for _, want := range branchWant {
		if !strings.Contains(tr, want) {
			t.Errorf("branch trace lacks %q:\n%s", want, tr)
		}
	}

	if _, _, err := c.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.0.0"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	var tagPipeline *gitlab.PipelineInfo
	for deadline := time.Now().Add(60 * time.Second); tagPipeline == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr("v1.0.0")})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && (list[0].Status == "success" || list[0].Status == "failed") {
			tagPipeline = list[0]
		}
	}
	if tagPipeline == nil || tagPipeline.Status != "success" {
		t.Fatalf("tag pipeline %+v", tagPipeline)
	}
	tagWant := append([]string{"branch=none tag=v1.0.0 default=master protected=false source=push"}, common...)
	tr = trace(t, c, p.ID, jobsByName(t, c, p.ID, tagPipeline.ID)["show"].ID)
	for _, want := range tagWant {
		if !strings.Contains(tr, want) {
			t.Errorf("tag trace lacks %q:\n%s", want, tr)
		}
	}
}
