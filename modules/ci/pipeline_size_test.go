package ci_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// oneLineJobs is a CI file of n one-line jobs, as a 1 MiB file holds
// about 23,000 of.
func oneLineJobs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "j%d: {script: x}\n", i)
	}
	return b.String()
}

// A push whose CI file makes more jobs than a pipeline may hold gets a
// failed pipeline whose yaml_errors says so, and not one job: creating
// them all stalled every write of the server (issue 27, finding 5).
func TestPipelineOverJobLimitIsAYAMLError(t *testing.T) {
	t.Parallel()
	limit := internal.DefaultMaxPipelineJobs
	s := stocktest.Start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "too-many-jobs", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": oneLineJobs(limit + 1)})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed", "pending")
	want := fmt.Sprintf("jobs config holds %d jobs for this pipeline, more than the limit of %d", limit+1, limit)
	if pl.Status != "failed" || pl.YamlErrors != want {
		t.Errorf("pipeline %s, yaml_errors %q, want failed with %q", pl.Status, pl.YamlErrors, want)
	}
	list, resp, err := c.Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{})
	if err != nil || resp.Header.Get("X-Total") != "0" || len(list) != 0 {
		t.Errorf("jobs: %d listed, X-Total %q, err %v; want none", len(list), resp.Header.Get("X-Total"), err)
	}
	// The API's pipeline for the branch is refused the same way.
	var out struct {
		Status     string `json:"status"`
		YAMLErrors string `json:"yaml_errors"`
	}
	resp2, body := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/pipeline?ref=master", p.ID), nil, &out, "PRIVATE-TOKEN", s.RootToken)
	if resp2.StatusCode != http.StatusCreated || out.Status != "failed" || out.YAMLErrors != want {
		t.Errorf("POST pipeline: %d %s", resp2.StatusCode, body)
	}
	if _, resp, _ := c.Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{}); resp.Header.Get("X-Total") != "0" {
		t.Errorf("jobs after POST pipeline: X-Total %q", resp.Header.Get("X-Total"))
	}
}

// withJobLimit sets ci.max_pipeline_jobs.
func withJobLimit(n int) fennectest.Option {
	return fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) { c.MaxPipelineJobs = n })
}

// withStepObserver hears of each transaction that stored or decided a
// chunk of a pipeline's jobs.
func withStepObserver(fn func(internal.Step)) fennectest.Option {
	return fennectest.WithModules(fennec.NewModule("ci-test-steps",
		fennec.Invoke(func(s *internal.Service) { s.SetStepObserver(fn) })))
}

// The limit counts the jobs of the pipeline, after only and except, and
// is the setting's.
func TestPipelineJobLimitSetting(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t, withJobLimit(3))
	c := s.Client
	p := stocktest.NewProject(t, c, "job-limit", "private")
	// Five jobs in the file, three of them for a branch: at the limit.
	atLimit := "a: {script: x}\nb: {script: x}\nc: {script: x}\nt1: {script: x, only: [tags]}\nt2: {script: x, only: [tags]}\n"
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": atLimit})
	pl := waitPipeline(t, c, p.ID, commit.ID, "pending", "failed")
	if pl.Status != "pending" || pl.YamlErrors != "" {
		t.Fatalf("pipeline at the limit: %s %q", pl.Status, pl.YamlErrors)
	}
	if list, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil); err != nil || len(list) != 3 {
		t.Fatalf("jobs of the pipeline at the limit: %d %v", len(list), err)
	}
	over := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": atLimit + "d: {script: x}\n"})
	pl = waitPipeline(t, c, p.ID, over.ID, "failed", "pending")
	if want := "jobs config holds 4 jobs for this pipeline, more than the limit of 3"; pl.Status != "failed" || pl.YamlErrors != want {
		t.Fatalf("pipeline over the limit: %s %q, want failed with %q", pl.Status, pl.YamlErrors, want)
	}
	if list, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil); err != nil || len(list) != 0 {
		t.Fatalf("jobs of the pipeline over the limit: %d %v", len(list), err)
	}
}

// settled returns a step observer and a function that waits until the
// pipeline's last step (nothing left to decide), returning its steps.
func settled() (func(internal.Step), func(t testing.TB, pipeline int64) []internal.Step) {
	var mu sync.Mutex
	steps := map[int64][]internal.Step{}
	done := map[int64]chan struct{}{}
	ch := func(id int64) chan struct{} {
		if done[id] == nil {
			done[id] = make(chan struct{})
		}
		return done[id]
	}
	observe := func(st internal.Step) {
		mu.Lock()
		defer mu.Unlock()
		steps[st.PipelineID] = append(steps[st.PipelineID], st)
		if st.Decided && !st.Deciding {
			select {
			case <-ch(st.PipelineID):
			default:
				close(ch(st.PipelineID))
			}
		}
	}
	wait := func(t testing.TB, pipeline int64) []internal.Step {
		t.Helper()
		mu.Lock()
		c := ch(pipeline)
		mu.Unlock()
		select {
		case <-c:
		case <-time.After(2 * time.Minute):
			t.Fatalf("pipeline %d never settled", pipeline)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(steps[pipeline])
	}
	return observe, wait
}

// A pipeline of as many jobs as allowed is stored and decided in
// transactions of a bounded size, and other users' writes go through
// between them: an issue is created while the pipeline has only part of
// its jobs, and every write of a user creating issues throughout
// succeeds.
func TestMaximalPipelineLetsOtherWritesThrough(t *testing.T) {
	limit := internal.DefaultMaxPipelineJobs
	var (
		s        *fennectest.Server
		project  int64
		between  sync.Once
		jobsSeen = -1
	)
	observe, wait := settled()
	s = stocktest.Start(t, withStepObserver(func(st internal.Step) {
		if st.Stored > 0 && st.Done < st.Total {
			between.Do(func() {
				// Between the first chunk and the second: another user's
				// write commits, and readers see the pipeline partly made.
				if _, _, err := s.Client.Issues.CreateIssue(project, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("between chunks")}); err != nil {
					t.Errorf("issue between chunks: %v", err)
				}
				_, resp, err := s.Client.Jobs.ListPipelineJobs(project, st.PipelineID, nil)
				if err != nil {
					t.Errorf("jobs between chunks: %v", err)
					return
				}
				jobsSeen, _ = strconv.Atoi(resp.Header.Get("X-Total"))
			})
		}
		observe(st)
	}))
	c := s.Client
	p := stocktest.NewProject(t, c, "maximal", "private")
	project = p.ID
	s.Store.ResetSlowestWrite()
	var src strings.Builder
	for i := range limit {
		fmt.Fprintf(&src, "j%d: {script: x, only: [api]}\n", i)
	}
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": src.String()})

	// Another user writes throughout.
	bob := s.CreateUser(t, "bob")
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: bob.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var writes sync.WaitGroup
	var wrote, slowest atomic.Int64
	writes.Add(1)
	go func() {
		defer writes.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			began := time.Now()
			if _, _, err := bob.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(fmt.Sprintf("bob %d", i))}); err != nil {
				t.Errorf("bob's issue %d: %v", i, err)
				return
			}
			wrote.Add(1)
			if d := int64(time.Since(began)); d > slowest.Load() {
				slowest.Store(d)
			}
		}
	}()
	var out struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	resp, body := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/pipeline?ref=master", p.ID), nil, &out, "PRIVATE-TOKEN", s.RootToken)
	if resp.StatusCode != http.StatusCreated {
		close(stop)
		t.Fatalf("POST pipeline: %d %s", resp.StatusCode, body)
	}
	steps := wait(t, out.ID)
	slowestWrite := s.Store.SlowestWrite()
	close(stop)
	writes.Wait()
	t.Logf("bob wrote %d issues meanwhile, the slowest in %v; the longest write function ran %v",
		wrote.Load(), time.Duration(slowest.Load()), slowestWrite)
	// A step stores 200 jobs or decides 100: a few milliseconds to tens,
	// hundreds under the race detector on a busy machine. The whole
	// pipeline in one transaction took 4 to 9 s there.
	if slowestWrite > 2*time.Second {
		t.Errorf("a write held the store for %v while the pipeline was made", slowestWrite)
	}

	stored, decides := 0, 0
	for i, st := range steps {
		switch {
		case st.Stored > 0:
			if st.Stored > internal.CreateChunkJobs || st.Done != stored+st.Stored || st.Total != limit || st.Decided {
				t.Errorf("step %d: %+v after %d jobs stored", i, st, stored)
			}
			stored = st.Done
		case st.Decided:
			decides++
		}
	}
	if stored != limit {
		t.Errorf("steps stored %d jobs, want %d", stored, limit)
	}
	if want := (limit + internal.CreateChunkJobs - 1) / internal.CreateChunkJobs; len(steps)-decides != want {
		t.Errorf("%d steps stored jobs, want %d", len(steps)-decides, want)
	}
	// Each decides at most DecideChunkJobs: the stage took this many.
	if want := (limit + internal.DecideChunkJobs - 1) / internal.DecideChunkJobs; decides < want {
		t.Errorf("%d steps decided jobs, want at least %d", decides, want)
	}
	if jobsSeen != internal.CreateChunkJobs {
		t.Errorf("between the first chunks the pipeline listed %d jobs, want the %d stored", jobsSeen, internal.CreateChunkJobs)
	}
	waitPendingJobs(t, c, p.ID, out.ID, limit)
	issues, _, err := c.Issues.ListProjectIssues(p.ID, &gitlab.ListProjectIssuesOptions{Search: gitlab.Ptr("between chunks")})
	if err != nil || len(issues) != 1 {
		t.Errorf("the issue written between chunks: %d %v", len(issues), err)
	}
}

// waitPendingJobs waits until n jobs of the pipeline are pending.
func waitPendingJobs(t testing.TB, c *gitlab.Client, project, pipeline int64, n int) {
	t.Helper()
	pending := []gitlab.BuildStateValue{gitlab.Pending}
	var total string
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		_, resp, err := c.Jobs.ListPipelineJobs(project, pipeline, &gitlab.ListJobsOptions{Scope: &pending})
		if err != nil {
			t.Fatal(err)
		}
		if total = resp.Header.Get("X-Total"); total == strconv.Itoa(n) {
			return
		}
	}
	t.Fatalf("pipeline %d: %s jobs pending, want %d", pipeline, total, n)
}

// BenchmarkPipelineCreation: POST /projects/:id/pipeline for a CI file of
// n one-line jobs and for one of 4n (n = 500, 4n = 2,000, the limit set to
// 4n), each in one stage, on a server with no executor (the jobs stay
// pending), until every job is stored and decided: the wall time of each,
// their ratio (4 when the cost is linear), the server process's CPU time
// for each and its ratio, the longest time between two steps of one
// creation (it includes the parse and each step's commit and fsync), and
// the longest any write function ran meanwhile (store.DB.SlowestWrite:
// how long the creation kept other writers waiting at most).
func BenchmarkPipelineCreation(b *testing.B) {
	const n = 500
	var mu sync.Mutex
	var last time.Time
	var longest time.Duration
	observe, wait := settled()
	s := stocktest.Start(b, benchLogger(), withJobLimit(4*n), withStepObserver(func(st internal.Step) {
		mu.Lock()
		now := time.Now()
		longest = max(longest, now.Sub(last))
		last = now
		mu.Unlock()
		observe(st)
	}))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-create", "private")
	for _, size := range []int{n, 4 * n} {
		var src strings.Builder
		for i := range size {
			fmt.Fprintf(&src, "j%d: {script: x, only: [api]}\n", i)
		}
		stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": src.String()})
		// A branch per size, at the commit with its file.
		if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(fmt.Sprintf("jobs-%d", size)), Ref: gitlab.Ptr("master")}); err != nil {
			b.Fatal(err)
		}
	}
	var slowest time.Duration
	create := func(size int) (wall, cpu, held time.Duration) {
		s.Store.ResetSlowestWrite()
		defer func() { slowest = max(slowest, s.Store.SlowestWrite()) }()
		cpuBefore := processCPU()
		start := time.Now()
		mu.Lock()
		last, longest = start, 0
		mu.Unlock()
		var out struct{ ID int64 }
		resp, body := s.JSON(b, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/pipeline?ref=jobs-%d", p.ID, size), nil, &out, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("POST pipeline: %d %s", resp.StatusCode, body)
		}
		wait(b, out.ID)
		end := time.Now()
		mu.Lock()
		defer mu.Unlock()
		return end.Sub(start), processCPU() - cpuBefore, longest
	}
	var small, big, smallCPU, bigCPU, held []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, c, h := create(n)
		small, smallCPU, held = append(small, w.Seconds()*1000), append(smallCPU, c.Seconds()*1000), append(held, h.Seconds()*1000)
		w, c, h = create(4 * n)
		big, bigCPU, held = append(big, w.Seconds()*1000), append(bigCPU, c.Seconds()*1000), append(held, h.Seconds()*1000)
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(small), "n-ms")
	b.ReportMetric(fennectest.Median(big), "4n-ms")
	b.ReportMetric(fennectest.Median(big)/fennectest.Median(small), "wall-ratio")
	b.ReportMetric(fennectest.Median(smallCPU), "n-cpu-ms")
	b.ReportMetric(fennectest.Median(bigCPU), "4n-cpu-ms")
	b.ReportMetric(fennectest.Median(bigCPU)/fennectest.Median(smallCPU), "cpu-ratio")
	b.ReportMetric(fennectest.Median(held), "median-longest-step-ms")
	slices.Sort(held)
	b.ReportMetric(held[len(held)-1], "longest-step-ms")
	b.ReportMetric(slowest.Seconds()*1000, "slowest-write-ms")
}

// processCPU is the CPU time this process (the server runs in it) has
// used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A pipeline whose creation a crash cut short is completed at the next
// start from where it stopped, and so is a stage whose deciding a stop
// cut short: every job once, all decided.
func TestPipelineLeftHalfMadeIsCompletedAtStart(t *testing.T) {
	t.Parallel()
	const jobs = 1000
	data, password := t.TempDir(), "half-made-root-pw"
	var projectID, pipelineID int64
	t.Run("crash while storing the jobs", func(t *testing.T) {
		s := stocktest.Start(t, fennectest.WithDataDir(data, password), withStepObserver(func(st internal.Step) {
			if st.Stored > 0 && st.Done == 2*internal.CreateChunkJobs {
				panic("the server dies between two chunks")
			}
		}))
		c := s.Client
		p := stocktest.NewProject(t, c, "half-made", "private")
		projectID = p.ID
		var src strings.Builder
		for i := range jobs {
			fmt.Fprintf(&src, "j%d: {script: x, only: [api]}\n", i)
		}
		stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": src.String()})
		resp := s.Do(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/pipeline?ref=master", p.ID), nil, "PRIVATE-TOKEN", s.RootToken)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("POST pipeline: %d, want the simulated crash's 500", resp.StatusCode)
		}
		list, _, err := c.Pipelines.ListProjectPipelines(p.ID, nil)
		if err != nil || len(list) != 1 || list[0].Status != "created" {
			t.Fatalf("pipelines after the crash: %v %v", list, err)
		}
		pipelineID = list[0].ID
		if _, resp, _ := c.Jobs.ListPipelineJobs(p.ID, pipelineID, nil); resp.Header.Get("X-Total") != strconv.Itoa(2*internal.CreateChunkJobs) {
			t.Fatalf("jobs after the crash: %s", resp.Header.Get("X-Total"))
		}
	})
	t.Run("stop while deciding the stage", func(t *testing.T) {
		var mu sync.Mutex
		var stored []internal.Step
		deciding := make(chan struct{})
		var once sync.Once
		stocktest.Start(t, fennectest.WithDataDir(data, password), withStepObserver(func(st internal.Step) {
			switch {
			case st.Stored > 0:
				mu.Lock()
				stored = append(stored, st)
				mu.Unlock()
			case st.Decided && st.Total == 0 && st.Deciding:
				// A step after the first: stop the server meanwhile.
				once.Do(func() { close(deciding) })
				time.Sleep(time.Second)
			}
		}))
		select {
		case <-deciding:
		case <-time.After(time.Minute):
			t.Fatal("the stage was never being decided")
		}
		mu.Lock()
		defer mu.Unlock()
		done := 2 * internal.CreateChunkJobs
		for _, st := range stored {
			if st.PipelineID != pipelineID || st.Done != done+st.Stored || st.Total != jobs {
				t.Errorf("resumed step %+v after %d", st, done)
			}
			done = st.Done
		}
		if done != jobs {
			t.Errorf("resumed to %d jobs, want %d", done, jobs)
		}
	})
	observe, wait := settled()
	s := stocktest.Start(t, fennectest.WithDataDir(data, password), withStepObserver(observe))
	c := s.Client
	if steps := wait(t, pipelineID); len(steps) < 2 {
		t.Errorf("the rest of the stage was decided in %d step(s)", len(steps))
	}
	waitPendingJobs(t, c, projectID, pipelineID, jobs)
	names := map[string]bool{}
	for page := int64(1); page <= jobs/100; page++ {
		list, _, err := c.Jobs.ListPipelineJobs(projectID, pipelineID, &gitlab.ListJobsOptions{ListOptions: gitlab.ListOptions{Page: page, PerPage: 100}})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range list {
			names[j.Name] = true
		}
	}
	if len(names) != jobs {
		t.Errorf("%d distinct jobs, want %d", len(names), jobs)
	}
	if pl, _, err := c.Pipelines.GetPipeline(projectID, pipelineID); err != nil || pl.Status != "pending" {
		t.Errorf("the pipeline: %+v %v", pl, err)
	}
}
