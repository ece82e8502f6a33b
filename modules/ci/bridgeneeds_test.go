package ci_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A trigger job with needs waits for what it needs, even in the first
// stage, and makes its child once that is done: while the needed job is
// held by a file handshake the bridge stays created and no child exists.
func TestBridgeWithNeedsWaitsThenMakesChild(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "bridge-needs", "private")
	gate := filepath.Join(t.TempDir(), "go")
	ci := `stages: [build, later]
gate:
  stage: build
  script: ['while [ ! -f ` + gate + ` ]; do sleep 0.05; done', echo gate passed]
child:
  stage: build
  needs: [gate]
  trigger: {include: ci/child.yml, strategy: depend}
later: {stage: later, script: [echo later]}
`
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": ci,
		"ci/child.yml": "hello: {script: [echo child ran]}\n"})
	parent := pipelineOf(t, c, p.ID, commit.ID, "push", "running")
	gateJob := jobsByName(t, c, p.ID, parent.ID)["gate"]
	waitJob(t, c, p.ID, gateJob.ID, "running")
	if b := onlyBridge(t, c, p.ID, parent.ID); b.Status != "created" || b.DownstreamPipeline != nil {
		t.Fatalf("a bridge whose need runs: %s, downstream %+v", b.Status, b.DownstreamPipeline)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	child := pipelineOf(t, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
	parent = pipelineOf(t, c, p.ID, commit.ID, "push", "success", "failed")
	b := onlyBridge(t, c, p.ID, parent.ID)
	if child.Status != "success" || parent.Status != "success" || b.Status != "success" ||
		b.DownstreamPipeline == nil || b.DownstreamPipeline.ID != child.ID {
		t.Fatalf("child %s, parent %s, bridge %s %+v", child.Status, parent.Status, b.Status, b.DownstreamPipeline)
	}
	gateJob = jobsByName(t, c, p.ID, parent.ID)["gate"]
	if child.CreatedAt.Before(*gateJob.FinishedAt) {
		t.Errorf("child made at %v, before its bridge's need finished at %v", child.CreatedAt, gateJob.FinishedAt)
	}
}
