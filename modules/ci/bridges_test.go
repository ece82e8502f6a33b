package ci_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const parentCI = `variables: {GLOBAL: g}
stages: [build, child, after]
build: {stage: build, script: [echo build]}
child:
  stage: child
  variables: {PASSED: "from-$CI_COMMIT_REF_NAME"}
  trigger: {include: ci/child.yml, strategy: depend}
after: {stage: after, script: [echo after]}
`

// pipelineOf waits for the pipeline of sha made by source to reach one of
// the statuses (a child has its parent's sha).
func pipelineOf(t testing.TB, c *gitlab.Client, project int64, sha, source string, want ...string) *gitlab.Pipeline {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range list {
			if pi.SHA != sha || pi.Source != source {
				continue
			}
			p, _, err := c.Pipelines.GetPipeline(project, pi.ID)
			if err != nil {
				t.Fatal(err)
			}
			last = p.Status
			for _, w := range want {
				if p.Status == w {
					return p
				}
			}
		}
	}
	t.Fatalf("%s pipeline of %s: status %q, want one of %v", source, sha, last, want)
	return nil
}

// onlyBridge lists a pipeline's trigger jobs and returns the one there is.
func onlyBridge(t testing.TB, c *gitlab.Client, project, pipeline int64) *gitlab.Bridge {
	t.Helper()
	list, _, err := c.Jobs.ListPipelineBridges(project, pipeline, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("bridges of %d: %+v", pipeline, list)
	}
	return list[0]
}

// A trigger job with include makes a child pipeline of the same commit:
// its jobs see CI_PIPELINE_SOURCE=parent_pipeline and the bridge's
// variables; the bridge is listed apart from the jobs, with its
// downstream pipeline; with strategy: depend it mirrors the child, a
// failing child failing the parent; a child whose file is invalid fails
// the bridge; canceling the parent cancels the child.
func TestChildPipelines(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "parent", "private")

	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": parentCI,
		"ci/child.yml": `show: {script: ['echo "source=$CI_PIPELINE_SOURCE passed=$PASSED global=${GLOBAL:-none}"']}` + "\n"})
	parent := pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed")
	if parent.Status != "success" || parent.Source != "push" {
		t.Fatalf("parent %s from %s", parent.Status, parent.Source)
	}
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	if child.Status != "success" || child.Ref != "master" || child.ID == parent.ID {
		t.Fatalf("child %+v", child)
	}
	jobs := jobsByName(t, c, p.ID, parent.ID)
	if len(jobs) != 2 || jobs["build"] == nil || jobs["after"] == nil || jobs["after"].Status != "success" {
		t.Fatalf("the parent's jobs list the bridge or lack one: %+v", jobs)
	}
	bridge := onlyBridge(t, c, p.ID, parent.ID)
	d := bridge.DownstreamPipeline
	if bridge.Name != "child" || bridge.Stage != "child" || bridge.Status != "success" || bridge.Pipeline.ID != parent.ID ||
		d == nil || d.ID != child.ID || d.Status != "success" || d.Source != "parent_pipeline" || d.SHA != commit.ID ||
		d.ProjectID != p.ID || !strings.HasSuffix(d.WebURL, "/-/pipelines/"+strconv.FormatInt(child.ID, 10)) {
		t.Fatalf("bridge %+v, downstream %+v", bridge, d)
	}
	show := jobsByName(t, c, p.ID, child.ID)["show"]
	if got := trace(t, c, p.ID, show.ID); !strings.Contains(got, "source=parent_pipeline passed=from-master global=g") {
		t.Errorf("child job trace:\n%s", got)
	}
	if list, _, err := c.Jobs.ListPipelineBridges(p.ID, child.ID, nil); err != nil || len(list) != 0 {
		t.Errorf("the child's bridges: %+v %v", list, err)
	}
	// A single job is a build's, as in GitLab.
	if resp, raw := s.JSON(t, "GET", "/api/v4/projects/"+strconv.FormatInt(p.ID, 10)+"/jobs/"+strconv.FormatInt(bridge.ID, 10),
		nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Job Not Found"}` {
		t.Errorf("GET the bridge as a job: %d %s", resp.StatusCode, raw)
	}

	// A merge request's pipeline is the parent, not the newer child of
	// the same commit.
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	feature := stocktest.CommitFiles(t, c, p.ID, "feature", "feature", map[string]string{"README": "x"})
	fparent := pipelineOf(t, c, p.ID, feature.ID, "push", "success", "failed")
	fchild := pipelineOf(t, c, p.ID, feature.ID, "parent_pipeline", "success", "failed")
	mr := stocktest.OpenMergeRequest(t, c, p.ID, "feature", "master", "feature")
	mr, _, err := c.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil || mr.Pipeline == nil || mr.Pipeline.ID != fparent.ID || fchild.ID < fparent.ID {
		t.Fatalf("merge request pipeline %+v (parent %d, child %d), %v", mr.Pipeline, fparent.ID, fchild.ID, err)
	}

	// depend: a failing child fails the bridge and the parent; the stage
	// after it is skipped.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "failing child", map[string]string{"ci/child.yml": "fail: {script: [exit 3]}\n"})
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed")
	child = pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	bridge = onlyBridge(t, c, p.ID, parent.ID)
	if parent.Status != "failed" || child.Status != "failed" || bridge.Status != "failed" || bridge.FailureReason != "" ||
		bridge.DownstreamPipeline.Status != "failed" {
		t.Fatalf("parent %s, child %s, bridge %s (%s)", parent.Status, child.Status, bridge.Status, bridge.FailureReason)
	}
	if after := jobsByName(t, c, p.ID, parent.ID)["after"]; after.Status != "skipped" {
		t.Errorf("after a failed bridge: %s", after.Status)
	}

	// An invalid child file: the child is a failed pipeline with its
	// errors, the bridge fails with GitLab's reason.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "invalid child", map[string]string{"ci/child.yml": "bad: {scrip: [x]}\n"})
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "failed", "success")
	child = pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "failed")
	bridge = onlyBridge(t, c, p.ID, parent.ID)
	if parent.Status != "failed" || bridge.Status != "failed" || bridge.FailureReason != "downstream_pipeline_creation_failed" ||
		child.YamlErrors != "jobs:bad config contains unknown keys: scrip" {
		t.Fatalf("parent %s, bridge %s (%s), child errors %q", parent.Status, bridge.Status, bridge.FailureReason, child.YamlErrors)
	}

	// Cancel the parent while the child runs: the child is canceled too.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "slow child", map[string]string{"ci/child.yml": "slow: {script: [sleep 60]}\n"})
	child = pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "running")
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "running")
	if b := onlyBridge(t, c, p.ID, parent.ID); b.Status != "running" {
		t.Fatalf("a depend bridge while its child runs: %s", b.Status)
	}
	if _, _, err := c.Pipelines.CancelPipelineBuild(p.ID, parent.ID); err != nil {
		t.Fatal(err)
	}
	child = pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "canceled")
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "canceled")
	if slow := jobsByName(t, c, p.ID, child.ID)["slow"]; slow.Status != "canceled" {
		t.Errorf("the child's job: %s", slow.Status)
	}
}

// Child pipelines nest two levels below the parent; a third is refused
// with GitLab's reason.
func TestChildPipelineDepth(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "nested", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": "down: {trigger: {include: ci/1.yml, strategy: depend}}\n",
		"ci/1.yml":       "down: {trigger: {include: ci/2.yml, strategy: depend}}\n",
		"ci/2.yml":       "down: {trigger: {include: ci/3.yml, strategy: depend}}\n",
		"ci/3.yml":       "never: {script: [echo never]}\n",
	})
	root := pipelineOf(t, c, p.ID, commit.ID, "push", "failed", "success")
	if root.Status != "failed" {
		t.Fatalf("root %s", root.Status)
	}
	depth, bridge := 0, onlyBridge(t, c, p.ID, root.ID)
	for bridge.DownstreamPipeline != nil {
		depth++
		bridge = onlyBridge(t, c, p.ID, bridge.DownstreamPipeline.ID)
	}
	if depth != 2 || bridge.Status != "failed" || bridge.FailureReason != "reached_max_descendant_pipelines_depth" {
		t.Fatalf("depth %d, last bridge %s (%s)", depth, bridge.Status, bridge.FailureReason)
	}
}

// A multi-project trigger runs the other project's pipeline as the
// pipeline's user, who must be allowed to run pipelines there.
func TestMultiProjectTrigger(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.Client
	dev := s.CreateUser(t, "")
	c := s.NewClient(t, dev.Token)
	up := stocktest.NewProject(t, admin, "upstream", "private")
	down := stocktest.NewProject(t, admin, "downstream", "private")
	stocktest.AddMember(t, admin, up.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.CommitFiles(t, admin, down.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": `run: {script: ['echo "source=$CI_PIPELINE_SOURCE version=$VERSION"']}` + "\n"})
	ci := "deploy:\n  variables: {VERSION: \"1.$CI_PIPELINE_ID\"}\n  trigger: {project: " + down.PathWithNamespace + ", strategy: depend}\n"

	// Not a member of the downstream project: it is not found.
	commit := stocktest.CommitFiles(t, c, up.ID, "master", "ci", map[string]string{".gitlab-ci.yml": ci})
	pl := pipelineOf(t, c, up.ID, commit.ID, "push", "failed", "success")
	if b := onlyBridge(t, c, up.ID, pl.ID); pl.Status != "failed" || b.Status != "failed" ||
		b.FailureReason != "downstream_bridge_project_not_found" || b.DownstreamPipeline != nil {
		t.Fatalf("pipeline %s, bridge %+v", pl.Status, b)
	}

	// A Reporter may read it but not run its pipelines.
	stocktest.AddMember(t, admin, down.ID, dev.ID, gitlab.ReporterPermissions)
	commit = stocktest.CommitFiles(t, c, up.ID, "master", "again", map[string]string{"README": "1"})
	pl = pipelineOf(t, c, up.ID, commit.ID, "push", "failed", "success")
	if b := onlyBridge(t, c, up.ID, pl.ID); b.Status != "failed" || b.FailureReason != "insufficient_bridge_permissions" {
		t.Fatalf("pipeline %s, bridge %+v", pl.Status, b)
	}

	// A Developer may: the downstream pipeline runs on its default branch,
	// from source pipeline, with the bridge's variables.
	if _, _, err := admin.ProjectMembers.EditProjectMember(down.ID, dev.ID,
		&gitlab.EditProjectMemberOptions{AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	commit = stocktest.CommitFiles(t, c, up.ID, "master", "once more", map[string]string{"README": "2"})
	pl = pipelineOf(t, c, up.ID, commit.ID, "push", "failed", "success")
	b := onlyBridge(t, c, up.ID, pl.ID)
	if pl.Status != "success" || b.Status != "success" || b.DownstreamPipeline == nil ||
		b.DownstreamPipeline.ProjectID != down.ID || b.DownstreamPipeline.Source != "pipeline" || b.DownstreamPipeline.Ref != "master" {
		t.Fatalf("pipeline %s, bridge %+v, downstream %+v", pl.Status, b, b.DownstreamPipeline)
	}
	dp, _, err := c.Pipelines.GetPipeline(down.ID, b.DownstreamPipeline.ID)
	if err != nil || dp.Source != "pipeline" || dp.User == nil || dp.User.ID != dev.ID {
		t.Fatalf("downstream pipeline %+v %v", dp, err)
	}
	run := jobsByName(t, c, down.ID, dp.ID)["run"]
	if got := trace(t, c, down.ID, run.ID); !strings.Contains(got, "source=pipeline version=1."+strconv.FormatInt(pl.ID, 10)) {
		t.Errorf("downstream trace:\n%s", got)
	}
}

// forward: pipeline_variables passes the variables a pipeline was run
// with (here a trigger's) down to the child, whose rules see them and
// CI_PIPELINE_SOURCE; forward: yaml_variables: false keeps the bridge's
// own.
func TestChildForwardsPipelineVariables(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "forward", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": `child:
  variables: {OWN: bridge}
  trigger: {include: child.yml, strategy: depend, forward: {yaml_variables: false, pipeline_variables: true}}
`,
		"child.yml": `show:
  rules: [{if: '$CI_PIPELINE_SOURCE == "parent_pipeline" && $DEPLOY == "prod"'}]
  script: ['echo "deploy=$DEPLOY own=${OWN:-none}"']
never:
  rules: [{if: '$CI_PIPELINE_SOURCE == "trigger"'}]
  script: [exit 1]
`})
	tr, _, err := c.PipelineTriggers.AddPipelineTrigger(p.ID, &gitlab.AddPipelineTriggerOptions{Description: gitlab.Ptr("deploy")})
	if err != nil {
		t.Fatal(err)
	}
	parent, _, err := c.PipelineTriggers.RunPipelineTrigger(p.ID, &gitlab.RunPipelineTriggerOptions{Ref: gitlab.Ptr("master"),
		Token: gitlab.Ptr(tr.Token), Variables: map[string]string{"DEPLOY": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	parent = pipelineOf(t, c, p.ID, parent.SHA, "trigger", "success", "failed")
	bridge := onlyBridge(t, c, p.ID, parent.ID)
	if parent.Status != "success" || bridge.DownstreamPipeline == nil {
		t.Fatalf("parent %s, bridge %+v", parent.Status, bridge)
	}
	jobs := jobsByName(t, c, p.ID, bridge.DownstreamPipeline.ID)
	if len(jobs) != 1 || jobs["show"] == nil {
		t.Fatalf("child jobs %+v", jobs)
	}
	if got := trace(t, c, p.ID, jobs["show"].ID); !strings.Contains(got, "deploy=prod own=none") {
		t.Errorf("child trace:\n%s", got)
	}
}

// A server stopped after a bridge became pending and before its child was
// made makes the child at the next start, on the same data.
func TestPendingBridgeSurvivesRestart(t *testing.T) {
	t.Parallel()
	data, password := t.TempDir(), "bridge-restart-pw"
	var projectID int64
	var sha string
	t.Run("before", func(t *testing.T) {
		reached := make(chan struct{}, 1)
		hold := fennectest.WithModules(fennec.NewModule("ci-test-bridge-gate",
			fennec.Invoke(func(s *internal.Service) {
				s.SetDownstreamGate(func(ctx context.Context) error {
					select {
					case reached <- struct{}{}:
					default:
					}
					<-ctx.Done() // until the server stops
					return ctx.Err()
				})
			})))
		s := startWith(t, fennectest.WithDataDir(data, password), hold)
		c := s.Client
		p := stocktest.NewProject(t, c, "bridge-restart", "private")
		projectID = p.ID
		sha = stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": parentCI,
			"ci/child.yml": "show: {script: ['echo child ran']}\n"}).ID
		parent := pipelineOf(t, c, p.ID, sha, "push", "running")
		select {
		case <-reached:
		case <-time.After(60 * time.Second):
			t.Fatal("the bridge was never taken up")
		}
		if b := onlyBridge(t, c, p.ID, parent.ID); b.Status != "pending" || b.DownstreamPipeline != nil {
			t.Fatalf("bridge before the stop: %+v", b)
		}
	})
	s := startWith(t, fennectest.WithDataDir(data, password))
	c := s.Client
	parent := pipelineOf(t, c, projectID, sha, "push", "success", "failed")
	child := pipelineOf(t, c, projectID, sha, "parent_pipeline", "success", "failed")
	if parent.Status != "success" || child.Status != "success" {
		t.Fatalf("after the restart: parent %s, child %s", parent.Status, child.Status)
	}
	if b := onlyBridge(t, c, projectID, parent.ID); b.DownstreamPipeline == nil || b.DownstreamPipeline.ID != child.ID {
		t.Fatalf("bridge %+v", b)
	}
	if got := trace(t, c, projectID, jobsByName(t, c, projectID, child.ID)["show"].ID); !strings.Contains(got, "child ran") {
		t.Errorf("child trace:\n%s", got)
	}
}

// A real gitlab-runner runs the parent's and the child's jobs and is
// never handed the trigger job, which the server runs.
func TestRunnerNeverGetsTheBridge(t *testing.T) {
	t.Parallel()
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "runner-bridge", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "3", "--wait-timeout", "60")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": parentCI,
		"ci/child.yml": `show: {script: ['echo "source=$CI_PIPELINE_SOURCE passed=$PASSED"']}` + "\n"})
	parent := pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed")
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	if parent.Status != "success" || child.Status != "success" {
		t.Fatalf("parent %s, child %s", parent.Status, child.Status)
	}
	show := jobsByName(t, c, p.ID, child.ID)["show"]
	if got := trace(t, c, p.ID, show.ID); show.Runner.ID != r.ID || !strings.Contains(got, "source=parent_pipeline passed=from-master") {
		t.Errorf("child job by runner %d:\n%s", show.Runner.ID, got)
	}
	ran, _, err := c.Runners.ListRunnerJobs(r.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range ran {
		names = append(names, j.Name)
	}
	if strings.Join(names, ",") != "show,after,build" { // newest first; the child's job is made after the parent's
		t.Errorf("the runner's jobs: %v", names)
	}
}

// A manual trigger job waits to be played; played, it makes its child as
// the player.
func TestManualBridge(t *testing.T) {
	t.Parallel()
	s := start(t)
	admin := s.Client
	dev := s.CreateUser(t, "")
	c := s.NewClient(t, dev.Token)
	p := stocktest.NewProject(t, admin, "manual-bridge", "private")
	stocktest.AddMember(t, admin, p.ID, dev.ID, gitlab.DeveloperPermissions)
	commit := stocktest.CommitFiles(t, admin, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": "build: {script: [echo build]}\nrelease: {trigger: {include: child.yml}, when: manual}\n",
		"child.yml":      "show: {script: ['echo \"user=$GITLAB_USER_ID\"']}\n"})
	parent := pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed", "manual")
	bridge := onlyBridge(t, c, p.ID, parent.ID)
	if bridge.Status != "manual" || !bridge.AllowFailure || bridge.DownstreamPipeline != nil {
		t.Fatalf("pipeline %s, bridge %+v", parent.Status, bridge)
	}
	if _, _, err := c.Jobs.PlayJob(p.ID, bridge.ID, nil); err != nil {
		t.Fatal(err)
	}
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	if bridge = onlyBridge(t, c, p.ID, parent.ID); bridge.Status != "success" || bridge.DownstreamPipeline == nil ||
		bridge.DownstreamPipeline.ID != child.ID || child.User == nil || child.User.ID != dev.ID {
		t.Fatalf("bridge %+v, child %+v", bridge, child)
	}
	show := jobsByName(t, c, p.ID, child.ID)["show"]
	if got := trace(t, c, p.ID, show.ID); !strings.Contains(got, "user="+strconv.FormatInt(dev.ID, 10)) {
		t.Errorf("child trace:\n%s", got)
	}
}

// A project that triggers its own branch stops once the same project,
// ref and source run a third time up the chain, as GitLab stops it.
func TestSelfTriggerLoopStops(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "loop", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "again: {trigger: " + p.PathWithNamespace + "}\n"})
	var list []*gitlab.PipelineInfo
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		list, _, err = c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Sort: gitlab.Ptr("asc")})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 4 && list[3].Status == "failed" {
			break
		}
		if time.Now().After(deadline) || len(list) > 4 {
			t.Fatalf("pipelines %+v", list)
		}
	}
	for i, pl := range list {
		wantSource, wantStatus := "pipeline", "success"
		if i == 0 {
			wantSource = "push"
		}
		if i == 3 {
			wantStatus = "failed"
		}
		if pl.Source != wantSource || pl.Status != wantStatus {
			t.Errorf("pipeline %d: %s from %s", i, pl.Status, pl.Source)
		}
	}
	if b := onlyBridge(t, c, p.ID, list[3].ID); b.FailureReason != "pipeline_loop_detected" || b.DownstreamPipeline != nil {
		t.Errorf("the last bridge: %+v", b)
	}
	time.Sleep(300 * time.Millisecond)
	if again, _, _ := c.Pipelines.ListProjectPipelines(p.ID, nil); len(again) != 4 {
		t.Errorf("%d pipelines after the loop stopped", len(again))
	}
}

// A depend bridge follows its child when a failed job of the child is
// retried: it runs again, and the parent's stages its failure skipped run
// once the child succeeds.
func TestDependBridgeFollowsChildRetry(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "follow", "private")
	marker := t.TempDir() + "/failed-once"
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": parentCI,
		"ci/child.yml": "flaky: {script: ['if [ -e " + marker + " ]; then echo second; else touch " + marker + "; exit 1; fi']}\n"})
	parent := pipelineOf(t, c, p.ID, commit.ID, "push", "failed", "success")
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "failed", "success")
	if parent.Status != "failed" || child.Status != "failed" {
		t.Fatalf("first run: parent %s, child %s", parent.Status, child.Status)
	}
	if after := jobsByName(t, c, p.ID, parent.ID)["after"]; after.Status != "skipped" {
		t.Fatalf("after a failed child: %s", after.Status)
	}
	flaky := jobsByName(t, c, p.ID, child.ID)["flaky"]
	if _, _, err := c.Jobs.RetryJob(p.ID, flaky.ID); err != nil {
		t.Fatal(err)
	}
	child = pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success")
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed")
	bridge := onlyBridge(t, c, p.ID, parent.ID)
	after := jobsByName(t, c, p.ID, parent.ID)["after"]
	if parent.Status != "success" || bridge.Status != "success" || bridge.DownstreamPipeline.ID != child.ID || after.Status != "success" {
		t.Fatalf("after the retry: parent %s, bridge %s, after %s", parent.Status, bridge.Status, after.Status)
	}
}

// A merge request pipeline's child runs for the merge request too: its
// jobs see CI_MERGE_REQUEST_*, and the merge request's head pipeline is
// the parent.
func TestMergeRequestPipelineChild(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "mr-child", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{
		".gitlab-ci.yml": "child:\n  trigger: {include: child.yml, strategy: depend}\n  rules: [{if: $CI_PIPELINE_SOURCE == \"merge_request_event\"}]\n" +
			"branch: {script: [echo branch], rules: [{if: $CI_PIPELINE_SOURCE == \"push\"}]}\n",
		"child.yml": "show: {script: ['echo \"mr=$CI_MERGE_REQUEST_IID target=$CI_MERGE_REQUEST_TARGET_BRANCH_NAME source=$CI_PIPELINE_SOURCE\"']}\n"})
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "feature", "change", map[string]string{"README": "x"})
	pipelineOf(t, c, p.ID, commit.ID, "push", "success")
	mr := stocktest.OpenMergeRequest(t, c, p.ID, "feature", "master", "change")
	parent := pipelineOf(t, c, p.ID, commit.ID, "merge_request_event", "success", "failed")
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	if parent.Status != "success" || child.Ref != "feature" {
		t.Fatalf("parent %s, child %+v", parent.Status, child)
	}
	show := jobsByName(t, c, p.ID, child.ID)["show"]
	want := "mr=" + strconv.FormatInt(mr.IID, 10) + " target=master source=parent_pipeline"
	if got := trace(t, c, p.ID, show.ID); !strings.Contains(got, want) {
		t.Errorf("child trace lacks %q:\n%s", want, got)
	}
	got, _, err := c.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil || got.Pipeline == nil || got.Pipeline.ID != parent.ID {
		t.Errorf("head pipeline %+v (parent %d, child %d) %v", got.Pipeline, parent.ID, child.ID, err)
	}
}
