package local_test

import (
	"fmt"
	"testing"

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
