package ci_test

// The CI figures of issue 13. Each benchmark does its whole measurement
// once per b.N iteration and reports its own metrics (ns/op is left at 0):
// one iteration takes longer than make bench's -benchtime 3s, so make
// bench runs each once; -benchtime 1x does the same.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// benchLogger keeps the server's log out of the figures and the output.
func benchLogger() fennectest.Option {
	return fennectest.WithLogger(zap.NewNop())
}

// BenchmarkPushToRunning: from the end of `git push` (the git CLI over
// HTTP) to the first job of its pipeline running on the shell executor,
// read from the job's started_at (the server's clock, which is this
// process's). Pushes one after another, each once the previous pipeline
// finished.
func BenchmarkPushToRunning(b *testing.B) {
	const pushes = 10
	s := startWith(b, benchLogger())
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-push", "private")
	g := newGitWork(b, s, p)
	var latencies, whole []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < pushes; k++ {
			n := i*pushes + k
			sha := g.commit(b, fmt.Sprintf("push %d", n), map[string]string{".gitlab-ci.yml": fmt.Sprintf("quick:\n  script: [\"echo %d\"]\n", n)})
			pushing := time.Now()
			g.push(b, "master")
			pushed := time.Now()
			pl := waitRefPipelineSHA(b, c, p.ID, sha)
			job := firstStartedJob(b, c, p.ID, pl)
			// Negative: the job was running before the git CLI exited (the
			// server answers the push, then git tidies up).
			latencies = append(latencies, float64(job.StartedAt.Sub(pushed).Microseconds())/1000)
			whole = append(whole, float64(job.StartedAt.Sub(pushing).Microseconds())/1000)
			waitPipeline(b, c, p.ID, pl.SHA, "success", "failed")
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(latencies), "median-ms")
	b.ReportMetric(latencies[len(latencies)-1], "max-ms")
	slices.Sort(whole)
	b.ReportMetric(fennectest.Median(whole), "from-push-start-median-ms")
	b.ReportMetric(whole[len(whole)-1], "from-push-start-max-ms")
	b.Logf("end of git push to job running, ms, sorted: %v", latencies)
	b.Logf("start of git push to job running, ms, sorted: %v", whole)
}

// waitRefPipelineSHA waits for the pipeline of sha to exist.
func waitRefPipelineSHA(b testing.TB, c *gitlab.Client, project int64, sha string) *gitlab.PipelineInfo {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{ListOptions: gitlab.ListOptions{PerPage: 1}})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) > 0 && list[0].SHA == sha {
			return list[0]
		}
	}
	b.Fatalf("no pipeline for %s", sha)
	return nil
}

// firstStartedJob waits until a job of the pipeline has started.
func firstStartedJob(b testing.TB, c *gitlab.Client, project int64, pl *gitlab.PipelineInfo) *gitlab.Job {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		list, _, err := c.Jobs.ListPipelineJobs(project, pl.ID, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range list {
			if j.StartedAt != nil {
				return j
			}
		}
	}
	b.Fatalf("no job of pipeline %d started", pl.ID)
	return nil
}

// BenchmarkFiftyJobsMegabyteTraces: 50 jobs at once on one shell executor
// (concurrency 50), each printing 1 MiB: all finish; the figures are the
// wall time, this process's heap and peak RSS (the server runs in it), and
// the executor plugin's peak RSS.
func BenchmarkFiftyJobsMegabyteTraces(b *testing.B) {
	const jobs = 50
	s := startWith(b, benchLogger(), withShell(map[string]any{"concurrency": jobs}))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-fifty", "private")
	var yaml strings.Builder
	for i := range jobs {
		// 16,384 lines of 64 bytes: 1 MiB of trace each (no pipe: the
		// steps run with pipefail, and yes | head ends in SIGPIPE).
		fmt.Fprintf(&yaml, "job%02d:\n  script: [\"printf '%%063d\\\\n' $(seq 1 16384)\"]\n", i)
	}
	var walls []float64
	var heapBefore, heapAfter, heapPeak, executorPeak uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heapBefore = ms.HeapInuse
		pids := executorPIDs(b)
		if len(pids) != 1 {
			b.Fatalf("executor processes %v", pids)
		}
		stop := make(chan struct{})
		var sampled sync.WaitGroup
		sampled.Add(1)
		go func() { // the heap's high-water mark while the jobs run
			defer sampled.Done()
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapPeak = max(heapPeak, m.HeapInuse)
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		commit := stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf("# run %d\n%s", i, yaml.String())})
		pl := waitPipeline(b, c, p.ID, commit.ID, "success", "failed")
		walls = append(walls, time.Since(start).Seconds())
		close(stop)
		sampled.Wait()
		if pl.Status != "success" {
			b.Fatalf("pipeline %s", pl.Status)
		}
		list, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, &gitlab.ListJobsOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
		if err != nil || len(list) != jobs {
			b.Fatalf("jobs %d %v", len(list), err)
		}
		for _, j := range list[:3] { // the traces are whole
			resp := s.Do(b, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/trace", p.ID, j.ID), nil, "PRIVATE-TOKEN", s.RootToken)
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n < 1<<20 {
				b.Fatalf("trace of %s: %d bytes", j.Name, n)
			}
		}
		executorPeak = max(executorPeak, uint64(peakRSSKB(pids[0])))
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapAfter = ms.HeapInuse
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(walls), "wall-s")
	b.ReportMetric(float64(heapBefore)/(1<<20), "heap-before-MiB")
	b.ReportMetric(float64(heapPeak)/(1<<20), "heap-peak-MiB")
	b.ReportMetric(float64(heapAfter)/(1<<20), "heap-after-MiB")
	b.ReportMetric(float64(peakRSSKB(0))/1024, "server-peak-rss-MiB")
	b.ReportMetric(float64(executorPeak)/1024, "executor-peak-rss-MiB")
}

// peakRSSKB is a process's peak resident set (VmHWM) in KiB; pid 0 is
// this process.
func peakRSSKB(pid int) int64 {
	path := "self"
	if pid != 0 {
		path = fmt.Sprint(pid)
	}
	return statusKB(path, "VmHWM:")
}

// BenchmarkThousandJobPipeline: a pipeline of 1,000 jobs in 10 stages,
// from the commit that creates it to every job decided, on an in-process
// executor that finishes each job at once, so the figure is the server's
// scheduling (stage gating, status bookkeeping, commit statuses, events)
// and not bash's start-up.
func BenchmarkThousandJobPipeline(b *testing.B) {
	const stages, perStage = 10, 100
	exec := &instantExecutors{}
	s := stocktest.Start(b, benchLogger(), fennectest.WithModules(fennec.NewModule("bench-instant-executor",
		fennec.Supply[ci.Executors](exec))))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-thousand", "private")
	var yaml strings.Builder
	yaml.WriteString("stages: [")
	for st := range stages {
		if st > 0 {
			yaml.WriteString(", ")
		}
		fmt.Fprintf(&yaml, "s%d", st)
	}
	yaml.WriteString("]\n")
	for st := range stages {
		for k := range perStage {
			fmt.Fprintf(&yaml, "j%d_%d:\n  stage: s%d\n  script: [\"true\"]\n", st, k, st)
		}
	}
	var walls []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before := exec.ran.Load()
		start := time.Now()
		commit := stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf("# run %d\n%s", i, yaml.String())})
		created := time.Since(start)
		pl := waitPipelineFor(b, c, p.ID, commit.ID, 10*time.Minute, "success", "failed")
		wall := time.Since(start)
		if pl.Status != "success" || exec.ran.Load()-before != stages*perStage {
			b.Fatalf("pipeline %s after %d jobs", pl.Status, exec.ran.Load()-before)
		}
		walls = append(walls, wall.Seconds())
		b.Logf("run %d: commit answered in %v (the pipeline follows from its push event), all 1,000 jobs decided after %v", i, created, wall)
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(walls), "wall-s")
	b.ReportMetric(1000*fennectest.Median(walls)/(stages*perStage), "ms/job")
}

// waitPipelineFor is waitPipeline with a deadline of one's own.
func waitPipelineFor(b testing.TB, c *gitlab.Client, project int64, sha string, d time.Duration, want ...string) *gitlab.Pipeline {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{ListOptions: gitlab.ListOptions{PerPage: 1}})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) == 0 || list[0].SHA != sha {
			continue
		}
		if slices.Contains(want, list[0].Status) {
			pl, _, err := c.Pipelines.GetPipeline(project, list[0].ID)
			if err != nil {
				b.Fatal(err)
			}
			return pl
		}
	}
	b.Fatalf("pipeline of %s not done in %v", sha, d)
	return nil
}

// instantExecutors is an executor with places for every job that
// succeeds at once after one line of trace.
type instantExecutors struct{ ran atomic.Int64 }

func (e *instantExecutors) TryAcquire([]string) (ci.Slot, bool) { return &instantSlot{e: e}, true }

type instantSlot struct{ e *instantExecutors }

func (s *instantSlot) Executor() string { return "instant" }

func (s *instantSlot) Run(_ context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	s.e.ran.Add(1)
	return executor.Result{}, trace(executor.TraceChunk{Data: []byte("$ true\n")})
}

func (s *instantSlot) Cancel(context.Context) error { return nil }

func (s *instantSlot) Artifacts(context.Context, io.Writer) (int64, error) {
	return 0, executor.ErrNoArtifacts
}

func (s *instantSlot) Release() {}
