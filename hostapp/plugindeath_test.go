package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
)

// TestKill9TakesThePluginsDown: the server killed with SIGKILL (what the OOM
// killer does) leaves no plugin process behind, nor any process of the jobs
// they were running, and the server started again runs only its own
// plugins (issue 27: executor-shell and executor-bwrap lived on with PPID 1,
// two more per crash). The executors run the real binaries, as `make build`
// ships them, with a job each sleeping in its step.
func TestKill9TakesThePluginsDown(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	pluginDir := t.TempDir()
	executors := []string{"shell"}
	if bwrapWorks() {
		executors = append(executors, "bwrap")
	} else {
		t.Log("bwrap cannot run sandboxes here: executor-shell only")
	}
	for _, name := range executors {
		gobuild.Install(t, "../plugins/executor-"+name, filepath.Join(pluginDir, "executor-"+name))
	}
	cfg := filepath.Join(t.TempDir(), "fennec.yaml")
	if err := os.WriteFile(cfg, []byte("plugin_dir: "+pluginDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	env := "FENNEC_ROOT_PASSWORD=password-123"
	s := startServerArgs(t, data, []string{"--config", cfg}, env)
	waitPlugins(t, s, executors)

	// A job on each executor, sleeping in its step.
	c := newCrashClient(s, login(t, s))
	defer c.close()
	var project struct {
		ID int64 `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]string{"name": "sleepers"}, http.StatusCreated, &project)
	var ci strings.Builder
	for _, name := range executors {
		fmt.Fprintf(&ci, "on-%s:\n  tags: [%s]\n  script:\n    - sleep 300\n", name, name)
	}
	var commit struct {
		ID string `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/repository/commits", project.ID), map[string]any{
		"branch": "master", "commit_message": "sleep",
		"actions": []map[string]string{{"action": "create", "file_path": ".gitlab-ci.yml", "content": ci.String()}},
	}, http.StatusCreated, &commit)
	pid := s.cmd.Process.Pid
	deadline := time.Now().Add(90 * time.Second)
	var tree []proc
	for {
		tree = descendants(pid)
		sleeping := 0
		for _, p := range tree {
			if p.comm == "sleep" {
				sleeping++
			}
		}
		if sleeping == len(executors) {
			break
		}
		if time.Now().After(deadline) {
			var jobs []map[string]any
			c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d/jobs", project.ID), nil, http.StatusOK, &jobs)
			t.Fatalf("the jobs' steps are not running (processes %v; jobs %v); log:\n%s", tree, jobs, s.logs.text())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the server's processes: %v", tree)

	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.done
	var alive []proc
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		alive = alive[:0]
		for _, p := range tree {
			if p.alive() {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(alive) > 0 {
		for _, p := range alive {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		t.Fatalf("10 s after kill -9 of the server, its processes still run: %v", alive)
	}

	// Started again: the plugins running are the new server's, one each.
	s = startServerArgs(t, data, []string{"--config", cfg}, env)
	waitPlugins(t, s, executors)
	for _, name := range executors {
		bin := filepath.Join(pluginDir, "executor-"+name)
		for _, p := range processesOf(bin) {
			if p.ppid != s.cmd.Process.Pid {
				t.Errorf("%s runs as process %d, child of %d, not of the server (%d)", bin, p.pid, p.ppid, s.cmd.Process.Pid)
			}
		}
	}
}

// bwrapWorks says whether bwrap can make its sandboxes on this machine.
func bwrapWorks() bool {
	if _, err := exec.LookPath("bwrap"); err != nil {
		return false
	}
	return exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "true").Run() == nil
}

// waitPlugins waits until the server says each executor runs.
func waitPlugins(t *testing.T, s *server, executors []string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		running := 0
		for _, name := range executors {
			if s.logs.findWith("plugin running", "plugin", name) != nil {
				running++
			}
		}
		if running == len(executors) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the executors %v are not all running; log:\n%s", executors, s.logs.text())
		}
	}
}

// findWith is the first line whose message contains msg and whose field
// key is value.
func (l *lineLog) findWith(msg, key, value string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.lines {
		if s, _ := m["msg"].(string); strings.Contains(s, msg) && m[key] == value {
			return m
		}
	}
	return nil
}

// proc is one process as /proc shows it; start (in clock ticks since
// boot) tells it from a later process given the same pid.
type proc struct {
	pid, ppid int
	comm      string
	start     string
	exe       string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s)", p.pid, p.comm) }

// alive says whether the process still runs (a zombie has ended).
func (p proc) alive() bool {
	now, ok := readProc(p.pid)
	return ok && now.start == p.start
}

// readProc reads /proc/<pid>/stat; false when there is no such process
// or it is a zombie.
func readProc(pid int) (proc, bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	s := string(raw)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := strings.Fields(s[end+1:]) // state, ppid, ... starttime is the 20th
	if len(f) < 20 || f[0] == "Z" {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return proc{pid: pid, ppid: ppid, comm: s[open+1 : end], start: f[19], exe: exe}, true
}

func allProcs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// descendants lists the live processes under pid.
func descendants(pid int) []proc {
	all := allProcs()
	in := map[int]bool{pid: true}
	var out []proc
	for grew := true; grew; {
		grew = false
		for _, p := range all {
			if in[p.ppid] && !in[p.pid] {
				in[p.pid] = true
				out = append(out, p)
				grew = true
			}
		}
	}
	return out
}

// processesOf lists the live processes running the binary bin.
func processesOf(bin string) []proc {
	var out []proc
	for _, p := range allProcs() {
		if p.exe == bin {
			out = append(out, p)
		}
	}
	return out
}
