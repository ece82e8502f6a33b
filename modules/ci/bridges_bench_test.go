package ci_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkChildPipelineStart: from the end of a pipeline's first stage
// to its child's job running on the shell executor, against the same
// stage's plain job in the same pipelines (the baseline): what making a
// child pipeline adds (the bridge loop's wake-up, reading the child's
// file at the commit, storing and deciding the child).
//
//	go test -run '^$' -bench BenchmarkChildPipelineStart -benchtime 1x ./modules/ci/
func BenchmarkChildPipelineStart(b *testing.B) {
	const pipelines = 10
	s := startWith(b, benchLogger())
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-child", "private")
	var plain, child []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < pipelines; k++ {
			n := i*pipelines + k
			commit := stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{
				".gitlab-ci.yml": fmt.Sprintf("stages: [a, b]\nfirst: {stage: a, script: ['echo %d']}\nplain: {stage: b, script: ['true']}\n"+
					"child: {stage: b, trigger: {include: child.yml}}\n", n),
				"child.yml": "show: {script: ['true']}\n"})
			parent := pipelineOf(b, c, p.ID, commit.ID, "push", "success", "failed")
			childPipeline := pipelineOf(b, c, p.ID, commit.ID, "parent_pipeline", "success", "failed")
			jobs := jobsByName(b, c, p.ID, parent.ID)
			done := *jobs["first"].FinishedAt
			show := jobsByName(b, c, p.ID, childPipeline.ID)["show"]
			plain = append(plain, float64(jobs["plain"].StartedAt.Sub(done).Microseconds())/1000)
			child = append(child, float64(show.StartedAt.Sub(done).Microseconds())/1000)
		}
	}
	b.StopTimer()
	slices.Sort(plain)
	slices.Sort(child)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(plain), "plain-median-ms")
	b.ReportMetric(fennectest.Median(child), "child-median-ms")
	b.ReportMetric(fennectest.Median(child)/fennectest.Median(plain), "child/plain")
	b.Logf("stage end to plain job running, ms, sorted: %v", plain)
	b.Logf("stage end to child job running, ms, sorted: %v", child)
}
