package ci_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// BenchmarkNeedsDAG: a 200-job file of 10 stages, each job of a stage
// after the first needing two of the stage before (the first's needing
// none), against the same 200 jobs gated by stages alone, in the same
// run, alternately: from the commit that creates the pipeline to its
// first job running, and to every job done, on an in-process executor
// that finishes each job at once (the figures are the server's
// scheduling, not bash's start-up).
//
//	go test ./modules/ci/ -run '^$' -bench BenchmarkNeedsDAG -benchtime 1x -timeout 900s
func BenchmarkNeedsDAG(b *testing.B) {
	const stages, perStage, rounds = 10, 20, 5
	exec := &clockedExecutors{}
	s := stocktest.Start(b, benchLogger(), fennectest.WithModules(fennec.NewModule("bench-clocked-executor",
		fennec.Supply[ci.Executors](exec))))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-needs", "private")
	file := func(dag bool) string {
		var y strings.Builder
		y.WriteString("stages: [")
		for st := range stages {
			if st > 0 {
				y.WriteString(", ")
			}
			fmt.Fprintf(&y, "s%d", st)
		}
		y.WriteString("]\n")
		for st := range stages {
			for k := range perStage {
				fmt.Fprintf(&y, "j%d_%d:\n  stage: s%d\n  script: [\"true\"]\n", st, k, st)
				switch {
				case dag && st == 0:
					y.WriteString("  needs: []\n")
				case dag:
					fmt.Fprintf(&y, "  needs: [j%d_%d, j%d_%d]\n", st-1, k, st-1, (k+1)%perStage)
				}
			}
		}
		return y.String()
	}
	files := map[bool]string{true: file(true), false: file(false)}
	first := map[bool][]float64{}
	all := map[bool][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := range 2 * rounds {
			dag := r%2 == 0
			before := exec.ran.Load()
			exec.first.Store(0)
			start := time.Now()
			commit := stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf("# run %d %d\n%s", i, r, files[dag])})
			pl := waitPipelineFor(b, c, p.ID, commit.ID, 5*time.Minute, "success", "failed")
			wall := time.Since(start)
			if pl.Status != "success" || exec.ran.Load()-before != stages*perStage {
				b.Fatalf("pipeline %s after %d jobs", pl.Status, exec.ran.Load()-before)
			}
			first[dag] = append(first[dag], float64(time.Unix(0, exec.first.Load()).Sub(start).Microseconds())/1000)
			all[dag] = append(all[dag], wall.Seconds())
		}
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(first[true]), "dag-first-ms")
	b.ReportMetric(fennectest.Median(first[false]), "staged-first-ms")
	b.ReportMetric(fennectest.Median(all[true]), "dag-all-s")
	b.ReportMetric(fennectest.Median(all[false]), "staged-all-s")
	b.ReportMetric(fennectest.Median(first[true])/fennectest.Median(first[false]), "first-ratio")
	b.ReportMetric(fennectest.Median(all[true])/fennectest.Median(all[false]), "all-ratio")
	b.Logf("commit to first job running, ms: DAG %v, staged %v", first[true], first[false])
	b.Logf("commit to every job done, s: DAG %v, staged %v", all[true], all[false])
}

// clockedExecutors is an executor with places for every job that
// succeeds at once after one line of trace, and notes when the first job
// since first was cleared ran.
type clockedExecutors struct {
	ran   atomic.Int64
	first atomic.Int64 // unix nanoseconds; 0 until a job runs
}

func (e *clockedExecutors) TryAcquire([]string) (ci.Slot, bool) { return &clockedSlot{e: e}, true }

type clockedSlot struct{ e *clockedExecutors }

func (s *clockedSlot) Executor() string { return "clocked" }

func (s *clockedSlot) Run(_ context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	s.e.first.CompareAndSwap(0, time.Now().UnixNano())
	s.e.ran.Add(1)
	return executor.Result{}, trace(executor.TraceChunk{Data: []byte("$ true\n")})
}

func (s *clockedSlot) Cancel(context.Context) error { return nil }

func (s *clockedSlot) Artifacts(context.Context, io.Writer) (int64, error) {
	return 0, executor.ErrNoArtifacts
}

func (s *clockedSlot) Release() {}
