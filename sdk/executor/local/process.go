package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// markVar is the environment variable every process of a job inherits,
// with a value unique to the job, so its processes can be found and killed
// even when they left its process group.
const markVar = "FENNEC_JOB_MARK"

// killGrace is how long a stopped step's processes get between SIGTERM and
// SIGKILL; with the sweep after it, a cancel ends well within 2 s.
const killGrace = 500 * time.Millisecond

// command is one process tree of a job: a step's shell or a git command.
type command struct {
	argv []string
	dir  string
	env  []string
	cred *syscall.Credential
	out  io.Writer
	mark string
}

// run starts c and waits for it. When ctx ends first the process tree is
// stopped (SIGTERM, SIGKILL after killGrace). Either way, once the main
// process is gone, whatever is left of its group and every process
// carrying its mark is killed, and run waits (at most a second) for the
// output to drain. It returns the exit code (-1 when killed by a signal)
// and whether ctx ended it; err is set only when the process could not
// start.
func (c command) run(ctx context.Context) (code int, stopped bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, false, err
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.dir, c.env, w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return -1, false, err
	}
	w.Close() // the children hold the write end now; EOF once they are all gone
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				c.out.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	pid := cmd.Process.Pid
	select {
	case <-exited:
	case <-ctx.Done():
		stopped = true
		signalTree(pid, c.mark, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(killGrace):
		}
	}
	killTree(pid, c.mark)
	<-exited
	select {
	case <-drained:
	case <-time.After(time.Second):
		// A process that escaped both the group and the mark still holds
		// the pipe; stop reading rather than hang the job.
	}
	r.Close()
	<-drained
	return cmd.ProcessState.ExitCode(), stopped, nil
}

// signalTree sends sig to the process group pid leads, and to every
// process carrying mark.
func signalTree(pid int, mark string, sig syscall.Signal) {
	syscall.Kill(-pid, sig)
	syscall.Kill(pid, sig)
	for _, p := range marked(mark) {
		syscall.Kill(p, sig)
	}
}

// killTree SIGKILLs the group and the marked processes until none is
// left (a process forking while it is swept shows up in the next round).
func killTree(pid int, mark string) {
	syscall.Kill(-pid, syscall.SIGKILL)
	for range 20 {
		ps := marked(mark)
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// marked lists the live processes whose environment holds mark. Zombies
// (already dead, waiting for their parent) have an empty environ and are
// not listed.
func marked(mark string) []int {
	if mark == "" {
		return nil
	}
	needle := []byte("\x00" + markVar + "=" + mark + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		// NUL on both sides: the whole variable, not part of another.
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), needle) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// lookPath finds an executable in the directories of pathList (the jobs'
// PATH: the plugin runs without the host's environment).
func lookPath(name, pathList string) (string, error) {
	if strings.Contains(name, "/") {
		return name, isExecutable(name)
	}
	for _, dir := range filepath.SplitList(pathList) {
		p := filepath.Join(dir, name)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", errors.New(name + " not found in " + pathList)
}

func isExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return errors.New(p + " is not executable")
	}
	return nil
}
