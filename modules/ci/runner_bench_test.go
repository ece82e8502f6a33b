package ci_test

// The runner figures of issue 19 (run with -run '^$' -bench Runner
// -benchtime 1x): push to script with long polling, the cost of idle
// long-polling runners, and job assignment under contention.

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkRunnerPushToScript: from `git push` to the real gitlab-runner
// (run-single, shell executor, its request long-polling in Fennec)
// starting the job's script, read from the script's own clock (this
// machine's).
func BenchmarkRunnerPushToScript(b *testing.B) {
	gitlabRunner(b)
	const pushes = 8
	s := stocktest.Start(b, benchLogger(), fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) {
		c.RunnerPollTimeout = 50 * time.Second
	}))
	c := s.Client
	p := stocktest.NewProject(b, c, "bench-runner-push", "private")
	stamp := filepath.Join(b.TempDir(), "stamp")
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("STAMP_FILE"), Value: gitlab.Ptr(stamp)}); err != nil {
		b.Fatal(err)
	}
	r := registerRunner(b, s, sharedToken(b, s), nil)
	startRunSingle(b, s, r.Token)
	g := newGitWork(b, s, p)
	var fromStart, fromEnd []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := 0; k < pushes; k++ {
			_ = os.Remove(stamp)
			sha := g.commit(b, fmt.Sprintf("push %d", k), map[string]string{".gitlab-ci.yml": fmt.Sprintf("quick:\n  script:\n    - date +%%s%%N > \"$STAMP_FILE\"\n    - echo %d\n", k)})
			pushing := time.Now()
			g.push(b, "master")
			pushed := time.Now()
			waitPipeline(b, c, p.ID, sha, "success", "failed")
			raw, err := os.ReadFile(stamp)
			if err != nil {
				b.Fatal(err)
			}
			ns, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			started := time.Unix(0, ns)
			fromStart = append(fromStart, float64(started.Sub(pushing).Microseconds())/1000)
			fromEnd = append(fromEnd, float64(started.Sub(pushed).Microseconds())/1000)
		}
	}
	b.StopTimer()
	slices.Sort(fromStart)
	slices.Sort(fromEnd)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(fromStart), "push-start-to-script-median-ms")
	b.ReportMetric(fromStart[len(fromStart)-1], "push-start-to-script-max-ms")
	b.ReportMetric(fennectest.Median(fromEnd), "push-end-to-script-median-ms")
	b.Logf("start of git push to script start, ms, sorted: %v", fromStart)
	b.Logf("end of git push to script start, ms, sorted: %v", fromEnd)
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverGoroutines counts the goroutines serving HTTP connections.
func serverGoroutines() int {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	n := 0
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http.(*connReader).backgroundRead") {
			n++
		}
	}
	return n
}

// BenchmarkRunnerIdlePolling: 20 runners long-polling with nothing to do
// (a client loop each, as gitlab-runner's request loop): the goroutines
// they hold in the server and the CPU the whole process spends per
// second, against the same window without them.
func BenchmarkRunnerIdlePolling(b *testing.B) {
	const runners = 20
	const window = 3 * time.Second
	s := stocktest.Start(b, benchLogger(), fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) {
		c.RunnerPollTimeout = 50 * time.Second
	}))
	shared := sharedToken(b, s)
	var tokens []string
	for range runners {
		tokens = append(tokens, registerRunner(b, s, shared, nil).Token)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		baseG, baseServer := runtime.NumGoroutine(), serverGoroutines()
		cpu0 := cpuTime()
		time.Sleep(window) // a measuring window, not a wait for a condition
		idleCPU := cpuTime() - cpu0

		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, tok := range tokens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v4/jobs/request", strings.NewReader(`{"token":"`+tok+`"}`))
					req.Header.Set("Content-Type", "application/json")
					cancelCtx, cancel := contextUntil(stop)
					resp, err := http.DefaultClient.Do(req.WithContext(cancelCtx))
					cancel()
					if err == nil {
						resp.Body.Close()
					}
				}
			}()
		}
		// Every runner's request is waiting once the server holds 20
		// connections more.
		for deadline := time.Now().Add(10 * time.Second); serverGoroutines()-baseServer < runners && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		}
		time.Sleep(200 * time.Millisecond) // let the connection set-up settle out of the window
		g1, server1 := runtime.NumGoroutine(), serverGoroutines()
		cpu1 := cpuTime()
		time.Sleep(window)
		pollCPU := cpuTime() - cpu1
		close(stop)
		wg.Wait()
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(server1-baseServer)/runners, "server-goroutines/runner")
		b.ReportMetric(float64(g1-baseG)/runners, "all-goroutines/runner")
		b.ReportMetric(float64(idleCPU.Microseconds())/1000/window.Seconds(), "baseline-cpu-ms/s")
		b.ReportMetric(float64(pollCPU.Microseconds())/1000/window.Seconds(), "20-polling-cpu-ms/s")
	}
}

// BenchmarkRunnerAssignUnderContention: 20 runners ask at once, over and
// over, for the jobs of a 200-job pipeline already pending: the time each
// POST /jobs/request takes to come back with its job (201).
func BenchmarkRunnerAssignUnderContention(b *testing.B) {
	const runners, jobs = 20, 200
	s := stocktest.Start(b, benchLogger(), fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) {
		c.RunnerPollTimeout = 5 * time.Second
	}))
	c := s.Client
	shared := sharedToken(b, s)
	var tokens []string
	for range runners {
		tokens = append(tokens, registerRunner(b, s, shared, nil).Token)
	}
	var yml strings.Builder
	for k := range jobs {
		fmt.Fprintf(&yml, "job%03d:\n  script: [echo %d]\n", k, k)
	}
	var lat []float64
	var wall time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := stocktest.NewProject(b, c, fmt.Sprintf("bench-contention-%d", i), "private")
		stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": yml.String()})
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			list, _, err := c.Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{Scope: &[]gitlab.BuildStateValue{gitlab.Pending}, ListOptions: gitlab.ListOptions{PerPage: 1}})
			if err == nil && len(list) > 0 || time.Now().After(deadline) {
				break
			}
		}
		var mu sync.Mutex
		seen := map[int64]bool{}
		var wg sync.WaitGroup
		burst := time.Now()
		var lastAssigned time.Time
		for _, tok := range tokens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				client := &http.Client{}
				for {
					began := time.Now()
					req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v4/jobs/request", strings.NewReader(`{"token":"`+tok+`"}`))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					var j fakeJob
					code := resp.StatusCode
					if code == 201 {
						_ = jsonDecode(resp, &j)
					}
					resp.Body.Close()
					took := float64(time.Since(began).Microseconds()) / 1000
					if code != 201 {
						return // the queue is empty
					}
					mu.Lock()
					if seen[j.ID] {
						b.Errorf("job %d handed out twice", j.ID)
					}
					seen[j.ID] = true
					lat = append(lat, took)
					lastAssigned = time.Now()
					done := len(seen) == jobs
					mu.Unlock()
					if done {
						return
					}
				}
			}()
		}
		wg.Wait()
		wall += lastAssigned.Sub(burst)
		if len(seen) != jobs {
			b.Fatalf("%d of %d jobs handed out", len(seen), jobs)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(lat), "assign-median-ms")
	b.ReportMetric(lat[len(lat)*95/100], "assign-p95-ms")
	b.ReportMetric(lat[len(lat)-1], "assign-max-ms")
	b.ReportMetric(float64(len(lat))/wall.Seconds(), "jobs-assigned/s")
}

// BenchmarkRunnerAssignOneOfTwenty: 20 runners long-poll at once; a job
// becomes pending (a retry, which queues it in the API call's own
// transaction) and one of them gets it. The figure is from the retry's
// answer to the winner's 201 (the time the scheduler takes to assign it
// under contention and the runner's request to come back with it); from
// the retry's start is reported too.
func BenchmarkRunnerAssignOneOfTwenty(b *testing.B) {
	const runners, rounds = 20, 30
	s := stocktest.Start(b, benchLogger(), fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) {
		c.RunnerPollTimeout = 50 * time.Second
	}))
	c := s.Client
	shared := sharedToken(b, s)
	p := stocktest.NewProject(b, c, "bench-one-of-twenty", "private")
	type receipt struct {
		id int64
		at time.Time
	}
	got := make(chan receipt, runners)
	finished := make(chan struct{}, runners)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	var winners sync.Map
	for range runners {
		tok := registerRunner(b, s, shared, nil).Token
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ctx, cancel := contextUntil(stop)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v4/jobs/request", strings.NewReader(`{"token":"`+tok+`"}`))
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					cancel()
					return // stopped
				}
				at := time.Now()
				var j fakeJob
				if resp.StatusCode == 201 {
					_ = jsonDecode(resp, &j)
				}
				resp.Body.Close()
				cancel()
				if j.ID == 0 {
					continue
				}
				winners.Store(tok, true)
				got <- receipt{j.ID, at}
				// Done at once, so the job can be retried again.
				body := `{"token":"` + j.Token + `","state":"success"}`
				req, _ = http.NewRequest(http.MethodPut, fmt.Sprintf("%s/api/v4/jobs/%d", s.URL, j.ID), strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
				finished <- struct{}{}
			}
		}()
	}
	stocktest.CommitFiles(b, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	first := <-got
	<-finished
	last := first.id
	var fromAnswer, fromCall []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for range rounds {
			calling := time.Now()
			j, _, err := c.Jobs.RetryJob(p.ID, last)
			if err != nil {
				b.Fatal(err)
			}
			answered := time.Now()
			r := <-got
			if r.id != j.ID {
				b.Fatalf("runner got job %d, retried %d", r.id, j.ID)
			}
			fromAnswer = append(fromAnswer, float64(r.at.Sub(answered).Microseconds())/1000)
			fromCall = append(fromCall, float64(r.at.Sub(calling).Microseconds())/1000)
			<-finished
			last = j.ID
		}
	}
	b.StopTimer()
	slices.Sort(fromAnswer)
	slices.Sort(fromCall)
	n := 0
	winners.Range(func(any, any) bool { n++; return true })
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(fromAnswer), "queued-to-201-median-ms")
	b.ReportMetric(fromAnswer[len(fromAnswer)*95/100], "queued-to-201-p95-ms")
	b.ReportMetric(fennectest.Median(fromCall), "retry-call-to-201-median-ms")
	b.ReportMetric(float64(n), "distinct-winners")
	b.Logf("retry answer to the winner's 201, ms, sorted: %v", fromAnswer)
}
