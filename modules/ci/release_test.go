package ci_test

import (
	"fmt"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// releaseCI has a release job for version tags and one for branches,
// which makes its own tag, and one whose tag the tags API refuses.
const releaseCI = `
tagged:
  script: [echo packaging $CI_COMMIT_TAG]
  variables: {NOTES: first of its name}
  rules: [{if: '$CI_COMMIT_TAG =~ /^v/'}]
  release:
    tag_name: $CI_COMMIT_TAG
    name: Release $CI_COMMIT_TAG
    description: 'notes: $NOTES'
    milestones: [m1]
    assets:
      links:
        - {name: bin, url: 'https://example.com/$CI_COMMIT_TAG/bin', link_type: package, filepath: /bin/app}
branch:
  script: [echo branch]
  rules: [{if: $CI_COMMIT_BRANCH}]
  release:
    tag_name: rel-$CI_PIPELINE_ID
    description: from a branch
refused:
  script: [echo refused]
  rules: [{if: $CI_COMMIT_BRANCH}]
  release:
    tag_name: 'bad..tag'
    description: never
`

// A release job makes its release when its script succeeds: on a tag
// pipeline for the tag, on a branch pipeline with a tag made at the
// pipeline's commit; a refused release or one that exists fails the job.
func TestReleaseJobs(t *testing.T) {
	t.Parallel()
	releasePipelines(t, start(t))
}

// The same pipelines on the real gitlab-runner: the release is made when
// the runner reports success, and a refused one answers the runner
// failed.
func TestRunnerReleaseJobs(t *testing.T) {
	t.Parallel() // mostly waiting on the runner
	gitlabRunner(t)
	s := startRunners(t)
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "4", "--wait-timeout", "60")
	releasePipelines(t, s)
}

// releasePipelines runs releaseCI's pipelines on s and checks their
// releases.
func releasePipelines(t *testing.T, s *fennectest.Server) {
	c := s.Client
	p := stocktest.NewProject(t, c, "releases", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": releaseCI})

	// The branch pipeline: its release job makes the tag and the release.
	bp := waitRefPipeline(t, c, p.ID, "master", "success", "failed")
	jobs := jobsByName(t, c, p.ID, bp.ID)
	if bp.Status != "failed" || jobs["branch"] == nil || jobs["branch"].Status != "success" {
		t.Fatalf("branch pipeline %s, jobs %v", bp.Status, jobs)
	}
	tag := fmt.Sprintf("rel-%d", bp.ID)
	if tr := trace(t, c, p.ID, jobs["branch"].ID); !strings.Contains(tr, "Release "+tag+" created") {
		t.Errorf("branch release trace:\n%s", tr)
	}
	rel, _, err := c.Releases.GetRelease(p.ID, tag)
	if err != nil || rel.Description != "from a branch" || rel.Commit.ID != commit.ID || rel.Name != tag {
		t.Fatalf("branch release %+v, %v", rel, err)
	}
	if tg, _, err := c.Tags.GetTag(p.ID, tag); err != nil || tg.Commit.ID != commit.ID {
		t.Fatalf("branch release's tag %+v, %v", tg, err)
	}

	// The refused release fails its job, saying why.
	bad := jobs["refused"]
	if bad == nil || bad.Status != "failed" {
		t.Fatalf("refused job %+v", bad)
	}
	if tr := trace(t, c, p.ID, bad.ID); !strings.Contains(tr, "echo refused") ||
		!strings.Contains(tr, "ERROR: Job failed: the release could not be created: Tag name invalid") {
		t.Errorf("refused trace:\n%s", tr)
	}

	// A tag pipeline: the release of the tag, with its link, through the API.
	if _, _, err := c.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.0"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	tp := waitRefPipeline(t, c, p.ID, "v1.0", "success", "failed")
	if tp.Status != "success" {
		t.Fatalf("tag pipeline %s, jobs %v", tp.Status, jobsByName(t, c, p.ID, tp.ID))
	}
	list, _, err := c.Releases.ListReleases(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v1 *gitlab.Release
	for _, r := range list {
		if r.TagName == "v1.0" {
			v1 = r
		}
	}
	if v1 == nil || v1.Name != "Release v1.0" || v1.Description != "notes: first of its name" || v1.Commit.ID != commit.ID {
		t.Fatalf("v1.0 release %+v in %d releases", v1, len(list))
	}
	if links := v1.Assets.Links; len(links) != 1 || links[0].Name != "bin" || links[0].URL != "https://example.com/v1.0/bin" ||
		links[0].LinkType != "package" {
		t.Errorf("v1.0 links %+v", links)
	}
	tj := jobsByName(t, c, p.ID, tp.ID)["tagged"]
	if tr := trace(t, c, p.ID, tj.ID); !strings.Contains(tr, "WARNING: milestones are not kept with releases on this server") {
		t.Errorf("tag release trace:\n%s", tr)
	}

	// The same release again: it exists, as release-cli says.
	again, _, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("v1.0")})
	if err != nil {
		t.Fatal(err)
	}
	aj := jobsByName(t, c, p.ID, again.ID)["tagged"]
	if aj == nil {
		t.Fatalf("second tag pipeline has no release job")
	}
	aj = waitJob(t, c, p.ID, aj.ID, "success", "failed")
	if aj.Status != "failed" {
		t.Fatalf("second release job %+v", aj)
	}
	if tr := trace(t, c, p.ID, aj.ID); !strings.Contains(tr, "ERROR: Job failed: the release could not be created: Release already exists") {
		t.Errorf("second release trace:\n%s", tr)
	}
}
