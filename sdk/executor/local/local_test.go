package local_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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
