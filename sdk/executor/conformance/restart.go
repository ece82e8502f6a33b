package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// restart: the executor's process dies (SIGKILL, so it cleans up nothing)
// while a job runs with processes in the background, in the job's process
// group and out of it. Once another process of the executor is configured,
// none of them is left, and a Cleanup of the job (which the host sends for
// the job it failed) succeeds.
func (s *suite) restart(t *testing.T) {
	if s.f.Restart == nil {
		t.Skip("Fixtures.Restart is not set: the executor's process cannot be killed from here")
	}
	if !s.f.SameMachine {
		t.Skip("the processes left behind can only be looked for on the same machine")
	}
	e := s.executor(t)
	// Unique on the machine, so other tests' sleeps do not count.
	marker := fmt.Sprintf("297.%09d", rand.IntN(1e9))
	job := s.noClone(
		"sleep "+marker+" &",
		"(sleep "+marker+" & wait) &",
		"if command -v setsid >/dev/null; then setsid sleep "+marker+" & fi",
		"echo sleepers-started",
		"sleep "+marker,
	)
	c := &collector{watch: "sleepers-started\n", seen: make(chan struct{})}
	seen := c.seen
	ctx, cancel := context.WithCancel(s.ctx(t))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx, job, c.add) // an error or a failure: its process dies under it
	}()
	select {
	case <-seen:
	case <-done:
		t.Fatalf("the job ended before its executor was killed:\n%s", c.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not start:\n%s", c.String())
	}
	// The sleeps were forked before the line came, but a busy machine may
	// not have let them exec (and show their command line) yet.
	for deadline := time.Now().Add(5 * time.Second); len(processesWith(marker)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job's sleeps are not to be seen in /proc:\n%s", c.String())
		}
	}

	s.f.Restart(t)
	e = s.executor(t)
	s.wantGone(t, marker, 5*time.Second)
	if err := e.Cleanup(s.ctx(t), job.ID); err != nil {
		t.Errorf("Cleanup of the job of the dead process: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("Run of the job did not end within 10 s of its executor's death")
	}
}
