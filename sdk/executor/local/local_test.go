package local_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/conformance"
	"github.com/fennec-forge/fennec/sdk/executor/local"
)

func newLocal() *local.Executor {
	return local.New(local.Options{
		Name: "local-test", Version: "0",
		Parse: func(raw []byte) (local.Settings, local.Sandbox, error) {
			var s local.Settings
			err := local.DecodeSettings(raw, &s)
			return s, nil, err
		},
	})
}

func fixtures(t *testing.T) conformance.Fixtures {
	return conformance.Fixtures{
		Settings:    []byte(fmt.Sprintf(`{"builds_dir": %q, "concurrency": 4}`, t.TempDir())),
		SameMachine: true,
	}
}

func TestInProcess(t *testing.T) {
	f := fixtures(t)
	// Each subtest gets a fresh executor on the same builds directory: the
	// one after the "crash" plays the executor's next process.
	f.Restart = func(*testing.T) {}
	conformance.Run(t, func(*testing.T) executor.Executor { return newLocal() }, f)
}

// The same executor through the gRPC server and the host-side Client: the
// wire keeps every outcome, and the trace streams.
func TestOverGRPC(t *testing.T) {
	e := newLocal()
	conn, _ := plugin.TestGRPCConn(t, func(s *grpc.Server) { executor.Register(s, e, nil) })
	client := executor.NewClient(conn)
	conformance.Run(t, func(*testing.T) executor.Executor { return client }, fixtures(t))
}

// A host that takes the trace slowly holds the job back; it does not lose
// the end of its trace: after the step's end the executor reads on while
// the chunk before waits to be sent (it used to stop after 1 s).
func TestSlowHostGetsTheWholeTrace(t *testing.T) {
	e := newLocal()
	if err := e.Configure(context.Background(), fixtures(t).Settings); err != nil {
		t.Fatal(err)
	}
	// 160 KiB then a last line: with the pipe's 64 KiB, two or three
	// chunks are still to send when the step ends, 2 s of a slow host.
	job := executor.Job{ID: 1, Steps: executor.ScriptSteps(nil, []string{`printf '%0159d\n' $(seq 1 1024)`, "echo the-last-line"}, nil), Timeout: time.Minute}
	var trace bytes.Buffer
	res, err := e.Run(context.Background(), job, func(c executor.TraceChunk) error {
		if len(c.Data) > 4<<10 {
			time.Sleep(700 * time.Millisecond)
		}
		trace.Write(c.Data)
		return nil
	})
	defer e.Cleanup(context.Background(), job.ID)
	if err != nil || !res.Success() {
		t.Fatalf("%+v, %v", res, err)
	}
	if !strings.Contains(trace.String(), "\nthe-last-line\n") || trace.Len() < 160<<10 {
		t.Errorf("the trace lost its end: %d bytes, ending %q", trace.Len(), trace.String()[max(0, trace.Len()-200):])
	}
}

// Stop, which a plugin calls before it exits (its host is gone), kills at
// once every process of the jobs running: the step's group and a process
// that left it; the job's Run ends.
func TestStopKillsTheJobsProcesses(t *testing.T) {
	e := newLocal()
	if err := e.Configure(context.Background(), fixtures(t).Settings); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop) // a failed test leaves no sleep behind
	script := `sleep 3917 & setsid sleep 3918 & echo started; wait`
	job := executor.Job{ID: 1, Steps: executor.ScriptSteps(nil, []string{script}, nil), Timeout: time.Minute}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		var trace []byte // only this goroutine's
		_, err := e.Run(context.Background(), job, func(c executor.TraceChunk) error {
			if trace = append(trace, c.Data...); bytes.Contains(trace, []byte("\nstarted\n")) {
				once.Do(func() { close(started) })
			}
			return nil
		})
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the step did not start")
	}
	for deadline := time.Now().Add(5 * time.Second); len(sleepers()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the step's sleeps are not running: %v", sleepers())
		}
	}
	e.Stop()
	// SIGKILL takes effect at once, but not synchronously.
	for deadline := time.Now().Add(2 * time.Second); len(sleepers()) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("processes left after Stop: %v", sleepers())
			break
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end after Stop")
	}
	e.Cleanup(context.Background(), job.ID)
}

// sleepers lists the live processes of the test's two sleeps.
func sleepers() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range entries {
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !(bytes.Equal(cmd, []byte("sleep\x003917\x00")) || bytes.Equal(cmd, []byte("sleep\x003918\x00"))) {
			continue
		}
		if stat, _ := os.ReadFile("/proc/" + d.Name() + "/stat"); bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		out = append(out, d.Name())
	}
	return out
}
