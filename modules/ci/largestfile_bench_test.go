package ci_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// largestCurrentFile is a CI file of today's constructs as large as the
// limits allow: just under pipeline.MaxConfigBytes, jobs many templates
// extend, each with rules of regular expressions and changes globs, a
// needs chain, variables, and long scripts, for jobs pipeline jobs (the
// job limit).
func largestCurrentFile(jobs int) string {
	var b strings.Builder
	b.WriteString("workflow:\n  name: \"largest $CI_COMMIT_REF_NAME\"\n  rules:\n    - if: $CI_COMMIT_MESSAGE =~ /skip-ci/\n      when: never\n    - when: always\n")
	b.WriteString("default:\n  retry: {max: 1, when: [runner_system_failure]}\n  interruptible: true\n")
	b.WriteString("variables:\n  GLOBAL: one\n")
	for t := 0; t < 20; t++ {
		fmt.Fprintf(&b, ".t%d:\n  variables: {T%d: \"%d\"}\n  before_script: [echo template %d]\n  rules:\n", t, t, t, t)
		fmt.Fprintf(&b, "    - if: $CI_COMMIT_BRANCH =~ /^(main|master|largest|release-%d.*)$/ && $GLOBAL == \"one\"\n", t)
		fmt.Fprintf(&b, "    - changes: [\"src/m%d/**/*.go\", \"docs/*.md\"]\n      when: manual\n", t)
	}
	pad := strings.Repeat("x", 60)
	body := func(i int) string {
		need := ""
		if i > 0 {
			need = fmt.Sprintf("  needs: [j%d]\n", i-1)
		}
		return fmt.Sprintf("j%d:\n  extends: .t%d\n  stage: test\n%s  script:\n", i, i%20, need)
	}
	size := b.Len()
	for i := 0; i < jobs; i++ {
		size += len(body(i))
	}
	lines := (pipeline.MaxConfigBytes - size - 1024) / (len(pad) + 16) / jobs
	for i := 0; i < jobs; i++ {
		b.WriteString(body(i))
		for l := 0; l < lines; l++ {
			fmt.Fprintf(&b, "    - echo %s %d\n", pad, l)
		}
	}
	return b.String()
}

// BenchmarkLargestCIFileCreation: POST /projects/:id/pipeline for the
// largest file of today's constructs the limits allow (1 MiB, as many
// jobs as ci.max_pipeline_jobs) and, as the baseline in the same run,
// for a file of as many one-line jobs, on a server with no executor,
// until every job is stored and decided: the wall time of each, their
// ratio, and the heap's high-water mark during each creation. The
// plain file's jobs are all decided pending at once; the largest file's
// rules make its jobs on_success too, but its needs chain leaves all
// but the first waiting, so the ratio is of parsing and storing more
// than of deciding.
func BenchmarkLargestCIFileCreation(b *testing.B) {
	jobs := internal.DefaultMaxPipelineJobs
	observe, wait := settled()
	s := stocktest.Start(b, benchLogger(), withStepObserver(observe))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-largest", "private")
	var plain strings.Builder
	for i := 0; i < jobs; i++ {
		fmt.Fprintf(&plain, "j%d: {script: x}\n", i)
	}
	largest := largestCurrentFile(jobs)
	if len(largest) > pipeline.MaxConfigBytes || len(largest) < pipeline.MaxConfigBytes*9/10 {
		b.Fatalf("the largest file has %d bytes", len(largest))
	}
	for name, src := range map[string]string{"plain": plain.String(), "largest": largest} {
		stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": src})
		if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(name), Ref: gitlab.Ptr("master")}); err != nil {
			b.Fatal(err)
		}
	}
	create := func(branch string) (wall time.Duration, peak uint64) {
		runtime.GC()
		stop := make(chan struct{})
		var sampled sync.WaitGroup
		sampled.Add(1)
		go func() {
			defer sampled.Done()
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		var out struct{ ID int64 }
		resp, body := s.JSON(b, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/pipeline?ref=%s", p.ID, branch), nil, &out, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("POST pipeline: %d %s", resp.StatusCode, body)
		}
		wait(b, out.ID)
		wall = time.Since(start)
		close(stop)
		sampled.Wait()
		return wall, peak
	}
	var plainMS, largestMS, plainPeak, largestPeak []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, pk := create("plain")
		plainMS, plainPeak = append(plainMS, w.Seconds()*1000), append(plainPeak, float64(pk)/(1<<20))
		w, pk = create("largest")
		largestMS, largestPeak = append(largestMS, w.Seconds()*1000), append(largestPeak, float64(pk)/(1<<20))
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(len(largest))/1024, "largest-KiB")
	b.ReportMetric(fennectest.Median(plainMS), "plain-ms")
	b.ReportMetric(fennectest.Median(largestMS), "largest-ms")
	b.ReportMetric(fennectest.Median(largestMS)/fennectest.Median(plainMS), "ratio")
	b.ReportMetric(fennectest.Median(plainPeak), "plain-heap-peak-MiB")
	b.ReportMetric(fennectest.Median(largestPeak), "largest-heap-peak-MiB")
}
