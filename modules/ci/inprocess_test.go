package ci_test

import (
	"context"
	"io"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// echoExecutor runs a job in the server's own process: it writes each
// step's script to the trace and succeeds, or fails a job whose name is
// "broken".
type echoExecutor struct {
	mu  sync.Mutex
	ran []string
}

func (e *echoExecutor) Describe(context.Context) (plugin.Description, error) {
	return plugin.Description{Name: "echo", Version: "1", APIVersions: []string{executor.APIVersion}}, nil
}

func (e *echoExecutor) Configure(context.Context, []byte) error { return nil }

func (e *echoExecutor) Capabilities(context.Context) (executor.Capabilities, error) {
	return executor.Capabilities{Tags: []string{"echo"}, RunUntagged: true, Concurrency: 2}, nil
}

func (e *echoExecutor) Run(ctx context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	e.mu.Lock()
	e.ran = append(e.ran, job.Name)
	e.mu.Unlock()
	var out []byte
	for _, st := range job.Steps {
		for _, line := range st.Script {
			out = append(out, "$ "+line+"\n"...)
		}
	}
	if err := trace(executor.TraceChunk{Data: out}); err != nil {
		return executor.Result{}, err
	}
	if job.Name == "broken" {
		return executor.Result{ExitCode: 1, Failure: executor.FailureScript, Message: "broken on purpose"}, nil
	}
	return executor.Result{}, nil
}

func (e *echoExecutor) Cancel(context.Context, int64) error { return nil }

func (e *echoExecutor) Artifacts(context.Context, int64, io.Writer) (int64, error) {
	return 0, executor.ErrNoArtifacts
}

func (e *echoExecutor) Cleanup(context.Context, int64) error { return nil }

var _ executor.Executor = (*echoExecutor)(nil)

// TestWithExecutorRunsJobsInProcess: an embedder's executor given with
// fennec.WithExecutor takes the jobs, with no plugin process, and the API
// shows their traces and statuses as for a plugin's.
func TestWithExecutorRunsJobsInProcess(t *testing.T) {
	echo := &echoExecutor{}
	s := stocktest.Start(t,
		fennectest.WithConfig(func(c *config.Config) { c.PluginDir = t.TempDir() }), // no executor plugins
		fennectest.WithOptions(fennec.WithExecutor("echo", echo)))
	p := newProject(t, s.Client, "inproc")
	_, _, err := s.Client.RepositoryFiles.CreateFile(p.ID, ".gitlab-ci.yml", &gitlab.CreateFileOptions{
		Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("ci"),
		Content: gitlab.Ptr("good:\n  script:\n    - echo hello in process\nbroken:\n  script:\n    - exit 1\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	pl := waitRefPipeline(t, s.Client, p.ID, "master", "failed", "success")
	if pl.Status != "failed" {
		t.Fatalf("pipeline %s, want failed (one job breaks)", pl.Status)
	}
	jobs, _, err := s.Client.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range jobs {
		got[j.Name] = j.Status
		if j.Name == "good" {
			waitTrace(t, s.Client, p.ID, j.ID, "$ echo hello in process")
		}
	}
	if got["good"] != "success" || got["broken"] != "failed" || len(got) != 2 {
		t.Fatalf("jobs: %v", got)
	}
	echo.mu.Lock()
	defer echo.mu.Unlock()
	if len(echo.ran) != 2 {
		t.Fatalf("the executor ran %q", echo.ran)
	}
}
