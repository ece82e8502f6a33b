package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
)

// ciNodesLeaseTTL is the lease the nodes of these tests run with: short,
// so that a dead node's jobs are failed within seconds (issue 32).
const ciNodesLeaseTTL = 2 * time.Second

// TestMultiNodePipelines runs pipelines on three `fennec serve` nodes that
// share one PostgreSQL store and one data directory, each with its own
// executor-shell, and kills one node with SIGKILL while it runs jobs
// (issue 32). Every job must run exactly once (its script leaves a line in
// a file outside the data directory each time it starts), every pipeline
// must end, and the killed node's running jobs must be failed as a system
// failure soon after its liveness lease ends, by the leader.
func TestMultiNodePipelines(t *testing.T) {
	t.Parallel()
	pg := pgserver.Start(t, pgserver.Options{Durable: true})
	storeURL := pg.NewDatabase(t)

	pluginDir := t.TempDir()
	gobuild.Install(t, "../plugins/executor-shell", filepath.Join(pluginDir, "executor-shell"))
	// Each node slot has its executor's builds directory of its own: the
	// default (<data>/executors/shell/builds) is in the shared data
	// directory, and an executor starting there kills and removes every
	// job directory it finds as left over by a dead process of its own,
	// the other nodes' running jobs included (see the report of issue 32).
	// A node started again takes its slot's directory, so what the killed
	// process left there is cleaned up all the same.
	configDir := t.TempDir()
	nodeConfig := func(slot int) string {
		path := filepath.Join(configDir, fmt.Sprintf("node%d.yaml", slot))
		builds := filepath.Join(configDir, fmt.Sprintf("builds-node%d", slot))
		yaml := fmt.Sprintf("plugin_dir: %s\nlease_ttl: %s\nplugins:\n  - name: shell\n    kind: executor\n    path: executor-shell\n    settings: {tags: [shell], concurrency: 4, builds_dir: %s}\n",
			pluginDir, ciNodesLeaseTTL, builds)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	data := t.TempDir()
	env := []string{"FENNEC_ROOT_PASSWORD=password-123", "FENNEC_STORE=" + storeURL}
	startNode := func(slot int) *server {
		s := startServerArgs(t, data, []string{"--config", nodeConfig(slot)}, env...)
		waitPlugins(t, s, []string{"shell"})
		return s
	}
	// The first node alone makes the store (root, its password); the
	// others join it.
	nodes := []*server{startNode(0)}
	nodes = append(nodes, startNode(1), startNode(2))

	markers := filepath.Join(t.TempDir(), "job-starts.log")
	c := newCrashClient(nodes[0], login(t, nodes[0]))
	defer c.close()
	var project struct {
		ID int64 `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]string{"name": "many-nodes"}, http.StatusCreated, &project)
	// Each job writes "start <job> <shell pid>" before it sleeps and
	// "end <job>" after: two starts of one job id are a job run twice, and
	// the shell's pid tells on which node it ran.
	script := fmt.Sprintf("    - echo \"start $CI_JOB_ID $$\" >> %s\n    - sleep 3\n    - echo \"end $CI_JOB_ID\" >> %s\n", markers, markers)
	var ci strings.Builder
	ci.WriteString("stages: [build, deploy]\n")
	for _, name := range []string{"compile", "lint", "unit"} {
		fmt.Fprintf(&ci, "%s:\n  stage: build\n  tags: [shell]\n  script:\n%s", name, script)
	}
	fmt.Fprintf(&ci, "ship:\n  stage: deploy\n  tags: [shell]\n  script:\n%s", script)
	var commit struct {
		ID string `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/repository/commits", project.ID), map[string]any{
		"branch": "master", "commit_message": "ci on every node",
		"actions": []map[string]string{{"action": "create", "file_path": ".gitlab-ci.yml", "content": ci.String()}},
	}, http.StatusCreated, &commit)

	// Pipelines created through every node (the push made one already).
	clients := make([]*crashClient, len(nodes))
	for i, s := range nodes {
		clients[i] = newCrashClient(s, c.token)
		defer clients[i].close()
	}
	const perNode = 2
	killedJobs := map[int64]bool{} // the jobs the killed nodes ran
	var survivor *crashClient
	for _, killLeader := range []bool{true, false} {
		func() {
			for round := 0; round < perNode; round++ {
				for _, nc := range clients {
					var p struct {
						ID int64 `json:"id"`
					}
					nc.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/pipeline?ref=master", project.ID), nil, http.StatusCreated, &p)
				}
			}

			// The victim: first the leader when it runs a job within a while
			// (else any node that does); then a node that does not lead, whose
			// jobs only the leader's dead-node loop can fail.
			leader := -1
			for i, s := range nodes {
				if s.logs.find("cluster: this node leads") != nil && s.logs.find("cluster: this node no longer leads") == nil {
					leader = i
				}
			}
			if leader < 0 {
				t.Fatalf("no node leads; logs:\n%s", ciNodesLogs(nodes))
			}
			victim := -1
			for deadline, leaderOnly := time.Now().Add(60*time.Second), time.Now().Add(15*time.Second); victim < 0; time.Sleep(50 * time.Millisecond) {
				for i, s := range nodes {
					if killLeader && i != leader && time.Now().Before(leaderOnly) || !killLeader && i == leader {
						continue
					}
					if len(ciNodesJobShells(s.cmd.Process.Pid)) > 0 {
						victim = i
						break
					}
				}
				if victim < 0 && time.Now().After(deadline) {
					t.Fatalf("no node runs a job after 60 s; logs:\n%s", ciNodesLogs(nodes))
				}
			}
			t.Logf("killing node %d (leader: %v) while it runs %d job step(s)", victim+1, victim == leader, len(ciNodesJobShells(nodes[victim].cmd.Process.Pid)))
			// Every process under the node, just before the kill: a marker
			// written by one of them is a job the node ran.
			victimShells := map[int]bool{}
			for _, p := range descendants(nodes[victim].cmd.Process.Pid) {
				victimShells[p.pid] = true
			}
			killedAt := time.Now()
			if err := nodes[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-nodes[victim].done
			survivor = clients[(victim+1)%len(nodes)]

			// Which jobs the victim ran, from the shells' pids in the markers.
			victimJobs := map[int64]bool{}
			for _, m := range ciNodesReadMarkers(t, markers) {
				if m.kind == "start" && victimShells[m.pid] {
					victimJobs[m.job] = true
				}
			}
			maps.Copy(killedJobs, victimJobs)

			// Its running jobs must be failed (by the leader, old or new), and
			// the node started again.
			failedAfter := time.Duration(-1)
			restarted := false
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				jobs := ciNodesJobs(t, survivor, project.ID)
				if failedAfter < 0 {
					done := true
					for id := range victimJobs {
						if j, ok := jobs[id]; !ok || j.Status == "running" || j.Status == "pending" {
							done = false
						}
					}
					if done {
						failedAfter = time.Since(killedAt)
						if !restarted {
							nodes[victim] = startNode(victim)
							clients[victim] = newCrashClient(nodes[victim], c.token)
							t.Cleanup(clients[victim].close)
							restarted = true
						}
					}
				}
				open := 0
				for _, j := range jobs {
					if !ciNodesFinal(j.Status) {
						open++
					}
				}
				if open == 0 && failedAfter >= 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("90 s after the kill, %d job(s) are not finished (the victim's failed: %v): %+v; logs:\n%s",
						open, failedAfter >= 0, jobs, ciNodesLogs(nodes))
				}
			}
			t.Logf("the killed node's %d running job(s) were finished %v after the kill (lease_ttl %v)", len(victimJobs), failedAfter.Round(time.Millisecond), ciNodesLeaseTTL)
			// The lease's end, then the new leader's recovery or the
			// leader's dead-node loop (every half lease): about 2 lease_ttl,
			// bounded loosely for a busy machine.
			if limit := 8 * ciNodesLeaseTTL; failedAfter > limit {
				t.Errorf("the killed node's jobs were failed %v after the kill; want within %v", failedAfter, limit)
			}
		}()
	}

	// Every pipeline ended; every job ended; the killed ones as system
	// failures; none ran twice.
	var pipelines []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	rows, _ := survivor.pages(t, fmt.Sprintf("/projects/%d/pipelines", project.ID))
	for _, raw := range rows {
		var p struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		pipelines = append(pipelines, p)
	}
	if want := 1 + 2*perNode*len(nodes); len(pipelines) != want {
		t.Errorf("%d pipelines, want %d", len(pipelines), want)
	}
	statuses := map[string]int{}
	for _, p := range pipelines {
		statuses[p.Status]++
		if p.Status != "success" && p.Status != "failed" {
			t.Errorf("pipeline %d ends %s", p.ID, p.Status)
		}
	}
	jobs := ciNodesJobs(t, survivor, project.ID)
	ended := map[int64]bool{}
	for _, m := range ciNodesReadMarkers(t, markers) {
		if m.kind == "end" {
			ended[m.job] = true
		}
	}
	starts := map[int64]int{}
	for _, m := range ciNodesReadMarkers(t, markers) {
		if m.kind == "start" {
			starts[m.job]++
		}
	}
	systemFailures := 0
	// Where the jobs ran: an executor clones from its own node's address.
	ranOn := map[string]int{}
	for id := range jobs {
		trace := ciNodesTrace(survivor, project.ID, id)
		if _, rest, ok := strings.Cut(trace, " from http://"); ok {
			addr, _, _ := strings.Cut(rest, "/")
			ranOn[addr]++
		}
	}
	for id, j := range jobs {
		switch {
		case j.Status == "success":
		case j.Status == "failed" && !ended[id] && strings.Contains(ciNodesTrace(survivor, project.ID, id), ciNodesDeadNodeLine):
			// Killed with its node: its script never ended (or never
			// started, the job taken but not begun).
			systemFailures++
			if !killedJobs[id] {
				t.Logf("job %d (%s) failed as a system failure; its script never ran on the killed node by the markers", id, j.Name)
			}
		case j.Status == "skipped":
			// a deploy job after a failed build stage
		default:
			trace := ciNodesTrace(survivor, project.ID, id)
			t.Errorf("job %d (%s) ends %s (%q); ran on the killed node: %v; started %d time(s); trace:\n%s", id, j.Name, j.Status, j.FailureReason, killedJobs[id], starts[id], trace)
		}
	}
	duplicates := 0
	for id, n := range starts {
		if n > 1 {
			duplicates++
			t.Errorf("job %d started %d times", id, n)
		}
		if _, ok := jobs[id]; !ok {
			t.Errorf("a script ran as job %d, which the API does not list", id)
		}
	}
	for id, j := range jobs {
		if j.Status == "success" && starts[id] != 1 {
			t.Errorf("job %d succeeded with %d start(s) of its script", id, starts[id])
		}
	}
	t.Logf("jobs per node address (a restarted node has a new one): %v", ranOn)
	t.Logf("%d pipelines %v; %d jobs, %d failed as runner_system_failure on the killed node; %d job(s) started twice",
		len(pipelines), statuses, len(jobs), systemFailures, duplicates)
	if len(killedJobs) > 0 && systemFailures == 0 {
		t.Errorf("the killed node ran jobs %v, none failed as runner_system_failure", killedJobs)
	}
}

// ciNodesDeadNodeLine ends the trace of a job that recoverRunning failed
// as runner_system_failure because its node died. The trace says it: the
// jobs API does not show failure_reason (see the report of issue 32).
const ciNodesDeadNodeLine = "ERROR: Job failed: the server stopped while the job was running"

// ciNodesTrace is a job's trace.
func ciNodesTrace(c *crashClient, project, job int64) string {
	_, _, trace, _ := c.do(http.MethodGet, fmt.Sprintf("/projects/%d/jobs/%d/trace", project, job), nil)
	return string(trace)
}

// ciNodesJob is a job as GET /projects/:id/jobs shows it.
type ciNodesJob struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Status        string `json:"status"`
	FailureReason string `json:"failure_reason"` // not shown by the API yet: empty
}

// ciNodesJobs lists the project's jobs by id.
func ciNodesJobs(t *testing.T, c *crashClient, project int64) map[int64]ciNodesJob {
	t.Helper()
	rows, _ := c.pages(t, fmt.Sprintf("/projects/%d/jobs", project))
	out := map[int64]ciNodesJob{}
	for _, raw := range rows {
		var j ciNodesJob
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		out[j.ID] = j
	}
	return out
}

// ciNodesFinal says whether a job's status is one it keeps.
func ciNodesFinal(status string) bool {
	switch status {
	case "success", "failed", "canceled", "skipped", "manual":
		return true
	}
	return false
}

// ciNodesJobShells are the pids of the processes under a node that run a
// job's step (the shell whose child sleeps), so that the markers they
// write tell which node ran which job.
func ciNodesJobShells(pid int) map[int]bool {
	shells := map[int]bool{}
	for _, p := range descendants(pid) {
		if p.comm == "sleep" {
			shells[p.ppid] = true
		}
	}
	return shells
}

// ciNodesMarker is one line a job's script wrote.
type ciNodesMarker struct {
	kind string // start or end
	job  int64
	pid  int // of the shell, on start (or what else a test writes third)
}

func ciNodesReadMarkers(t *testing.T, path string) []ciNodesMarker {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no job started yet
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ciNodesMarker
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			t.Fatalf("marker line %q", sc.Text())
		}
		m := ciNodesMarker{kind: fields[0]}
		m.job, _ = strconv.ParseInt(fields[1], 10, 64)
		if len(fields) > 2 {
			m.pid, _ = strconv.Atoi(fields[2])
		}
		out = append(out, m)
	}
	return out
}

// ciNodesLogs are the nodes' logs, for a failure's message.
func ciNodesLogs(nodes []*server) string {
	var b strings.Builder
	for i, s := range nodes {
		fmt.Fprintf(&b, "--- node %d (%s)\n%s\n", i+1, s.addr, s.logs.text())
	}
	return b.String()
}

// TestMultiNodeRunnerTakesJobsOfAnyNode: a real GitLab Runner registered
// with one node takes, promptly and once each, the jobs of pipelines
// created through another node (issue 32): the other node's "a job is
// pending" signal must reach the node the runner long-polls. Then the
// other node, through which the running pipeline was made, is killed -9
// while the runner works its jobs: a runner's job belongs to no node, so
// the jobs run on and succeed, once each, and the node started again
// hands the runner a new pipeline's jobs.
func TestMultiNodeRunnerTakesJobsOfAnyNode(t *testing.T) {
	t.Parallel()
	runnerBin := ciNodesGitlabRunner(t)
	pg := pgserver.Shared(t)
	storeURL := pg.NewDatabase(t)
	// No executor anywhere: the runner is the only taker.
	cfg := filepath.Join(t.TempDir(), "fennec.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("plugin_dir: %s\nlease_ttl: %s\n", t.TempDir(), ciNodesLeaseTTL)), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	env := []string{"FENNEC_ROOT_PASSWORD=password-123", "FENNEC_STORE=" + storeURL}
	polled := startServerArgs(t, data, []string{"--config", cfg}, env...)
	creator := startServerArgs(t, data, []string{"--config", cfg}, env...)
	killedCreator := creator // its log, after its restart
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", ciNodesLogs(slices.Compact([]*server{polled, killedCreator, creator})))
		}
	})
	c := newCrashClient(creator, login(t, creator))
	defer c.close()
	var project struct {
		ID           int64  `json:"id"`
		RunnersToken string `json:"runners_token"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]string{"name": "runner-elsewhere"}, http.StatusCreated, &project)
	c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d", project.ID), nil, http.StatusOK, &project)
	if project.RunnersToken == "" {
		t.Fatal("no runners_token")
	}

	dir := t.TempDir()
	runnerEnv := append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	config := filepath.Join(dir, "config.toml")
	reg := exec.Command(runnerBin, "register", "--non-interactive", "--url", polled.url("/"), "--registration-token", project.RunnersToken,
		"--executor", "shell", "--description", "on node 1", "--run-untagged", "--config", config)
	reg.Env = runnerEnv
	if out, err := reg.CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	run := exec.Command(runnerBin, "run", "--config", config, "--working-directory", dir)
	run.Dir, run.Env = dir, runnerEnv
	var runnerOut ciNodesOutput
	run.Stdout, run.Stderr = &runnerOut, &runnerOut
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		_ = run.Wait()
		if t.Failed() {
			t.Logf("gitlab-runner output:\n%s", runnerOut.String())
		}
	})

	// Each job writes "start <job> <unix ns>" as its script begins and
	// "end <job> 0" as it ends, after $HOLD seconds (a pipeline's
	// variable; none: at once).
	markers := filepath.Join(t.TempDir(), "job-starts.log")
	script := fmt.Sprintf("    - echo \"start $CI_JOB_ID $(date +%%s%%N)\" >> %s\n    - sleep ${HOLD:-0}\n    - echo \"end $CI_JOB_ID 0\" >> %s\n", markers, markers)
	var ci strings.Builder
	for _, name := range []string{"one", "two"} {
		fmt.Fprintf(&ci, "%s:\n  script:\n%s", name, script)
	}
	var commit struct {
		ID string `json:"id"`
	}
	// The first commit goes through the leader: on a node that does not
	// lead, making a project's repository waits for the check for missing
	// repositories, which only the leader runs (see the report of issue
	// 32). The pipelines below are made through the other node.
	leaderClient := newCrashClient(polled, c.token)
	defer leaderClient.close()
	leaderClient.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/repository/commits", project.ID), map[string]any{
		"branch": "master", "commit_message": "jobs for a runner",
		"actions": []map[string]string{{"action": "create", "file_path": ".gitlab-ci.yml", "content": ci.String()}},
	}, http.StatusCreated, &commit)
	// waitAllFinal waits for want jobs, all finished, listed through
	// lister.
	lister := c
	waitAllFinal := func(want int) map[int64]ciNodesJob {
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			jobs := ciNodesJobs(t, lister, project.ID)
			open := 0
			for _, j := range jobs {
				if !ciNodesFinal(j.Status) {
					open++
				}
			}
			if open == 0 && len(jobs) >= want {
				return jobs
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d job(s) not finished after 90 s: %+v", open, jobs)
			}
		}
	}
	jobsPerPipeline := 2
	waitAllFinal(jobsPerPipeline)

	// Then pipelines created through the other node, one at a time, the
	// runner idle in its long poll: how long until a job's script starts.
	var latencies []string
	const pipelines = 4
	for i := range pipelines {
		before := map[int64]bool{}
		for _, m := range ciNodesReadMarkers(t, markers) {
			before[m.job] = true
		}
		// Past the runner's check_interval (3 s) after its last job: it
		// waits in its long poll.
		time.Sleep(4 * time.Second)
		// Through node 2, and every other time through node 1 itself, to
		// tell what the other node adds.
		through, via := c, "node 2"
		if i%2 == 1 {
			through, via = leaderClient, "node 1"
		}
		created := time.Now()
		var p struct {
			ID int64 `json:"id"`
		}
		through.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/pipeline?ref=master", project.ID), nil, http.StatusCreated, &p)
		first := time.Duration(-1)
		for deadline := time.Now().Add(60 * time.Second); first < 0; time.Sleep(20 * time.Millisecond) {
			for _, m := range ciNodesReadMarkers(t, markers) {
				if !before[m.job] {
					// The third field is the start time here.
					first = time.Unix(0, int64(m.pid)).Sub(created)
					break
				}
			}
			if first < 0 && time.Now().After(deadline) {
				t.Fatalf("no job of pipeline %d started in 60 s; logs:\n%s", p.ID, ciNodesLogs([]*server{polled, creator}))
			}
		}
		// The runner long-polls: a job should start within seconds (its
		// clone included), not after a poll period.
		if first > 10*time.Second {
			t.Errorf("a job started %v after its pipeline's creation through %s", first, via)
		}
		latencies = append(latencies, via+": "+first.Round(time.Millisecond).String())
		waitAllFinal((i + 2) * jobsPerPipeline)
	}
	t.Logf("from a pipeline's creation to its first job's script on node 1's runner, the pipeline made through: %v", latencies)

	// A pipeline made through node 2 whose jobs take a while; node 2 is
	// killed -9 once the runner runs its first job.
	before := map[int64]bool{}
	for _, m := range ciNodesReadMarkers(t, markers) {
		before[m.job] = true
	}
	var held struct {
		ID int64 `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/pipeline?ref=master", project.ID), map[string]any{
		"ref": "master", "variables": []map[string]string{{"key": "HOLD", "value": "3"}},
	}, http.StatusCreated, &held)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		started := false
		for _, m := range ciNodesReadMarkers(t, markers) {
			started = started || m.kind == "start" && !before[m.job]
		}
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job of pipeline %d started in 60 s", held.ID)
		}
	}
	ledBy := creator.logs.find("cluster: this node leads") != nil && creator.logs.find("cluster: this node no longer leads") == nil
	if err := creator.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-creator.done
	killedAt := time.Now()
	t.Logf("killed node 2 (leader: %v) while the runner ran pipeline %d's first job", ledBy, held.ID)
	lister = leaderClient
	waitAllFinal((pipelines + 2) * jobsPerPipeline)
	t.Logf("pipeline %d's jobs all ended %v after node 2's kill", held.ID, time.Since(killedAt).Round(time.Millisecond))
	var heldStatus struct {
		Status string `json:"status"`
	}
	for deadline := time.Now().Add(30 * time.Second); heldStatus.Status != "success"; time.Sleep(100 * time.Millisecond) {
		leaderClient.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d/pipelines/%d", project.ID, held.ID), nil, http.StatusOK, &heldStatus)
		if time.Now().After(deadline) {
			t.Fatalf("pipeline %d, its jobs ended, is %s 30 s later; want success", held.ID, heldStatus.Status)
		}
	}

	// Node 2 started again: the runner takes the jobs of a pipeline made
	// through it.
	creator = startServerArgs(t, data, []string{"--config", cfg}, env...)
	restarted := newCrashClient(creator, c.token)
	defer restarted.close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if status, _, _, err := restarted.do(http.MethodGet, "/version", nil); err == nil && status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node 2 does not answer 30 s after its restart")
		}
	}
	restarted.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/pipeline?ref=master", project.ID), nil, http.StatusCreated, &held)
	jobs := waitAllFinal((pipelines + 3) * jobsPerPipeline)

	// Every job succeeded, its script started and ended once.
	// FENNEC_MULTINODE_LOSE_ONE=runner drops one start from the markers,
	// as a job that never ran would: run once to see the check fail.
	lose := multiNodeLoseOne("runner")
	starts, ends := map[int64]int{}, map[int64]int{}
	for _, m := range ciNodesReadMarkers(t, markers) {
		switch {
		case m.kind == "start" && lose:
			lose = false
		case m.kind == "start":
			starts[m.job]++
		case m.kind == "end":
			ends[m.job]++
		}
	}
	if want := (pipelines + 3) * jobsPerPipeline; len(jobs) != want {
		t.Errorf("%d jobs, want %d", len(jobs), want)
	}
	for id, j := range jobs {
		if j.Status != "success" || starts[id] != 1 || ends[id] != 1 {
			t.Errorf("job %d (%s): %s, its script started %d and ended %d time(s)", id, j.Name, j.Status, starts[id], ends[id])
		}
	}
	for id := range starts {
		if _, ok := jobs[id]; !ok {
			t.Errorf("a script ran as job %d, which the API does not list", id)
		}
	}
}

// ciNodesGitlabRunner is the real GitLab Runner of the workplace tools, or
// $FENNEC_GITLAB_RUNNER; the test is skipped without one.
func ciNodesGitlabRunner(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	candidates := []string{os.Getenv("FENNEC_GITLAB_RUNNER"), "/work/shared/tools/gitlab-runner"}
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, filepath.Join(wd, "..", "..", "shared", "tools", "gitlab-runner"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); c != "" && err == nil && st.Mode()&0o111 != 0 {
			return c
		}
	}
	t.Skip("no gitlab-runner (shared/tools/gitlab-runner or $FENNEC_GITLAB_RUNNER)")
	return ""
}

// ciNodesOutput collects a process's output from its two pipes.
type ciNodesOutput struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *ciNodesOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *ciNodesOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
