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
	"sync"
	"syscall"
	"time"
)

// markVar is the environment variable every process of a job inherits,
// so its processes can be found and killed even when they left its process
// group. Its value is the job's directory, <builds>/job-<id>-<random>:
// unique to the job, and found again by a later process of the executor
// when this one died (crashed, or killed) and left the job's processes
// running, re-parented to init (see killLeftovers).
const markVar = "FENNEC_JOB_MARK"

// readSize is how much of a step's output is read at once: one trace
// chunk, sent as one message whose encoded form fits gRPC's 32 KiB buffers
// (see wireChunk in package executor). The read waits while the chunk
// before it is being sent, so a job that prints faster than the host takes
// its trace waits in its pipe: a job holds this buffer and a copy, never
// more of its output.
const readSize = 32<<10 - 64

// drainIdle is how long the output of a step whose processes are all gone
// may stay silent before it is deemed held by a process that escaped both
// the group and the mark.
const drainIdle = time.Second

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
	fd3  []byte // Command.Fd3
	// procs, when not nil, records the command's process group while it
	// runs, for the executor's Stop.
	procs *procs
}

// procs are the process groups of an executor's commands that run (by the
// pid of their leader), so that Stop can kill them all at once; once Stop
// has closed it, a command that starts is killed at once.
type procs struct {
	mu     sync.Mutex
	closed bool
	groups map[int]bool
}

// started records the group pid leads; false once closed.
func (p *procs) started(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.groups == nil {
		p.groups = map[int]bool{}
	}
	p.groups[pid] = true
	return true
}

// ended forgets the group pid leads, before its leader is reaped (its pid
// could then be another process's).
func (p *procs) ended(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.groups, pid)
}

// killAll SIGKILLs every group recorded and closes the set.
func (p *procs) killAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for pid := range p.groups {
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// run starts c and waits for it. When ctx ends first the process tree is
// stopped (SIGTERM, SIGKILL after killGrace). Either way, once the main
// process is gone, whatever is left of its group and every process
// carrying its mark is killed, and run reads the rest of the output: until
// its end, or until nothing came for drainIdle (a process that escaped
// holds the pipe), or at most drainIdle more once ctx has ended. A reader
// waiting for the trace to be sent is not idle: a slow host delays the
// end of the step rather than losing its last lines. It returns the exit
// code (-1 when killed by a signal) and whether ctx ended it; err is set
// only when the process could not start.
func (c command) run(ctx context.Context) (code int, stopped bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, false, err
	}
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.dir, c.env, w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: c.cred}
	var fd3r, fd3w *os.File
	if c.fd3 != nil {
		if fd3r, fd3w, err = os.Pipe(); err != nil {
			r.Close()
			w.Close()
			return -1, false, err
		}
		cmd.ExtraFiles = []*os.File{fd3r}
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		if fd3r != nil {
			fd3r.Close()
			fd3w.Close()
		}
		return -1, false, err
	}
	w.Close() // the children hold the write end now; EOF once they are all gone
	if fd3r != nil {
		fd3r.Close()
		// Written while the process reads it (it may be more than a pipe
		// holds); a process that exits unread ends the write with EPIPE.
		go func() {
			fd3w.Write(c.fd3)
			fd3w.Close()
		}()
	}
	drained := make(chan struct{})
	gone := make(chan struct{}) // closed once the processes are gone: reads may time out
	go func() {
		defer close(drained)
		buf := make([]byte, readSize)
		for {
			select {
			case <-gone:
				r.SetReadDeadline(time.Now().Add(drainIdle))
			default:
			}
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
	if c.procs != nil && !c.procs.started(pid) {
		syscall.Kill(-pid, syscall.SIGKILL) // the executor is stopping
	}
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
	if c.procs != nil {
		c.procs.ended(pid)
	}
	<-exited
	close(gone)
	r.SetReadDeadline(time.Now().Add(drainIdle)) // wakes a read begun before gone
	select {
	case <-drained:
	case <-ctx.Done():
		// Stopped: the step must end soon, whatever the reader waits for.
		select {
		case <-drained:
		case <-time.After(drainIdle):
		}
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
	if mark == "" {
		return
	}
	for _, p := range marked(func(m string) bool { return m == mark }) {
		syscall.Kill(p, sig)
	}
}

// killTree SIGKILLs the group and the marked processes until none is
// left (a process forking while it is swept shows up in the next round).
func killTree(pid int, mark string) {
	syscall.Kill(-pid, syscall.SIGKILL)
	if mark != "" {
		sweep(func(m string) bool { return m == mark })
	}
}

// sweep SIGKILLs the processes whose mark match accepts until none is
// left, for at most 20 rounds; it reports whether none is.
func sweep(match func(mark string) bool) bool {
	for range 20 {
		ps := marked(match)
		if len(ps) == 0 {
			return true
		}
		for _, p := range ps {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return len(marked(match)) == 0
}

// marked lists the live processes carrying a mark that match accepts,
// this process aside. Zombies (already dead, waiting for their parent)
// have an empty environ and are not listed; nor are the processes of
// other users when the plugin is not root (their environ cannot be read),
// which a job cannot become without a setuid program.
func marked(match func(mark string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	prefix := []byte(markVar + "=")
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, prefix) {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && match(string(v)) {
				out = append(out, pid)
				break
			}
		}
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
