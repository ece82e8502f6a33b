package executors_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// fake is an in-process executor with fixed capabilities whose jobs end
// when release is closed.
type fake struct {
	caps    executor.Capabilities
	release chan struct{}
}

func (f *fake) Describe(context.Context) (executor.Description, error) {
	return executor.Description{Name: "fake", Version: "0", APIVersions: []string{executor.APIVersion}}, nil
}
func (f *fake) Configure(context.Context, []byte) error { return nil }
func (f *fake) Capabilities(context.Context) (executor.Capabilities, error) {
	return f.caps, nil
}
func (f *fake) Run(ctx context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return executor.Result{}, nil
}
func (f *fake) Cancel(context.Context, int64) error { return nil }
func (f *fake) Artifacts(context.Context, int64, io.Writer) (int64, error) {
	return 0, executor.ErrNoArtifacts
}
func (f *fake) Cleanup(context.Context, int64) error { return nil }

func startPool(t *testing.T, members ...executors.Member) *executors.Pool {
	t.Helper()
	p := executors.New(nil, members...)
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

func acquire(t *testing.T, p *executors.Pool, tags ...string) *executors.Slot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.Acquire(ctx, tags)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", tags, err)
	}
	return s
}

// Tags pick the executor; untagged jobs need run_untagged; tags no one
// serves fail at once.
func TestAcquireMatchesTags(t *testing.T) {
	shell := &fake{caps: executor.Capabilities{Tags: []string{"shell"}, RunUntagged: true, Concurrency: 5}}
	sandbox := &fake{caps: executor.Capabilities{Tags: []string{"bwrap", "network"}, Concurrency: 5}}
	p := startPool(t, executors.Member{Name: "shell", Executor: shell}, executors.Member{Name: "bwrap", Executor: sandbox})
	for _, c := range []struct {
		tags []string
		want string
	}{
		{nil, "shell"}, {[]string{"shell"}, "shell"}, {[]string{"bwrap"}, "bwrap"}, {[]string{"network", "bwrap"}, "bwrap"},
	} {
		s := acquire(t, p, c.tags...)
		if s.Executor() != c.want {
			t.Errorf("tags %q went to %s, want %s", c.tags, s.Executor(), c.want)
		}
		s.Release()
	}
	for _, tags := range [][]string{{"gpu"}, {"shell", "network"}} {
		if _, err := p.Acquire(context.Background(), tags); !errors.Is(err, executors.ErrNoExecutor) {
			t.Errorf("Acquire(%q) = %v, want ErrNoExecutor", tags, err)
		}
	}
}

// An executor never holds more jobs than its concurrency; a freed place
// goes to the job that waited longest.
func TestAcquireRespectsConcurrencyInOrder(t *testing.T) {
	one := &fake{caps: executor.Capabilities{RunUntagged: true, Concurrency: 1}}
	p := startPool(t, executors.Member{Name: "one", Executor: one})
	first := acquire(t, p)
	got := make(chan int, 2)
	for i := range 2 {
		go func() {
			s, err := p.Acquire(context.Background(), nil)
			if err != nil {
				t.Error(err)
				return
			}
			got <- i
			time.Sleep(50 * time.Millisecond)
			s.Release()
		}()
		// Waiter 0 asks before waiter 1.
		for deadline := time.Now().Add(10 * time.Second); p.Waiting() != i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waiter %d never queued", i)
			}
		}
	}
	select {
	case i := <-got:
		t.Fatalf("waiter %d got a place while the only one was held", i)
	case <-time.After(200 * time.Millisecond):
	}
	if st := p.Status()[0]; st.Busy != 1 {
		t.Fatalf("status %+v", st)
	}
	first.Release()
	first.Release() // twice is harmless
	if a, b := <-got, <-got; a != 0 || b != 1 {
		t.Fatalf("places went to waiters %d then %d, want 0 then 1", a, b)
	}

	// A waiter whose context ends leaves the queue.
	held := acquire(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past its deadline: %v", err)
	}
	held.Release()
	acquire(t, p).Release()
}

// The least loaded executor gets the next job.
func TestAcquireSpreadsLoad(t *testing.T) {
	a := &fake{caps: executor.Capabilities{RunUntagged: true, Concurrency: 2}}
	b := &fake{caps: executor.Capabilities{RunUntagged: true, Concurrency: 2}}
	p := startPool(t, executors.Member{Name: "a", Executor: a}, executors.Member{Name: "b", Executor: b})
	s1, s2 := acquire(t, p), acquire(t, p)
	if s1.Executor() == s2.Executor() {
		t.Fatalf("both jobs on %s while the other was idle", s1.Executor())
	}
}
