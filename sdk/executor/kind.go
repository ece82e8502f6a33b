package executor

import (
	"context"
	"io"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	executorpb "github.com/fennec-forge/fennec/sdk/executor/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// Kind is the descriptor a host runs executor plugins by: configured as
// kind "executor", they must speak APIVersion, and each becomes an Executor
// that routes every call to the plugin's current process.
var Kind = plugin.Kind{
	Name:       "executor",
	APIVersion: APIVersion,
	NewClient:  func(cc grpc.ClientConnInterface) any { return NewClient(cc) },
	Route:      func(conn plugin.Conn) any { return route{conn} },
}

// Logger is the plugin's logger (hclog), as NewLogger builds it.
type Logger = hclog.Logger

// NewLogger returns the logger a plugin should use (plugin.NewLogger):
// hclog JSON lines on standard error, which the host re-emits into its own
// log under the plugin's name. Build it before Serve, which redirects
// os.Stderr.
func NewLogger(name string) hclog.Logger { return plugin.NewLogger(name) }

// Serve runs e as an executor plugin until the host closes the connection
// or kills the process. It is the whole of a plugin's main after building
// e; it refuses to run when not started by a Fennec host.
func Serve(e Executor, log hclog.Logger) {
	plugin.Serve(plugin.ServeConfig{
		Kind:   Kind.Name,
		Impl:   e,
		Logger: log,
		Register: func(s grpc.ServiceRegistrar, log hclog.Logger) {
			executorpb.RegisterExecutorServer(s, NewServer(e, log))
		},
	})
}

// Register serves e on s as a whole plugin would: the base service
// (Describe, Configure) and the executor service. For tests and embedders
// with a gRPC server of their own; NewClient is its other end.
func Register(s grpc.ServiceRegistrar, e Executor, log hclog.Logger) {
	plugin.RegisterBase(s, Kind.Name, e, log)
	executorpb.RegisterExecutorServer(s, NewServer(e, log))
}

// route is the Executor of a configured plugin on the host side: stable
// across restarts, it sends each call through the host's Conn to the
// current process (ErrUnavailable at once when there is none). Run and
// Artifacts last as long as their work, so they go through Conn.Stream,
// free of the host's call timeout; they still end when the process dies.
type route struct {
	conn plugin.Conn
}

func (r route) Describe(ctx context.Context) (Description, error) { return r.conn.Describe(ctx) }

func (r route) Configure(ctx context.Context, settings []byte) error {
	return r.conn.Configure(ctx, settings)
}

func (r route) Capabilities(ctx context.Context) (Capabilities, error) {
	return plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) (Capabilities, error) {
		return c.Capabilities(ctx)
	})
}

func (r route) Run(ctx context.Context, job Job, trace func(TraceChunk) error) (Result, error) {
	return plugin.Stream(ctx, r.conn, func(ctx context.Context, c *Client) (Result, error) {
		return c.Run(ctx, job, trace)
	})
}

func (r route) Cancel(ctx context.Context, jobID int64) error {
	_, err := plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) (struct{}, error) {
		return struct{}{}, c.Cancel(ctx, jobID)
	})
	return err
}

func (r route) Artifacts(ctx context.Context, jobID int64, w io.Writer) (int64, error) {
	return plugin.Stream(ctx, r.conn, func(ctx context.Context, c *Client) (int64, error) {
		return c.Artifacts(ctx, jobID, w)
	})
}

func (r route) Cleanup(ctx context.Context, jobID int64) error {
	_, err := plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) (struct{}, error) {
		return struct{}{}, c.Cleanup(ctx, jobID)
	})
	return err
}

// Interface guard.
var _ Executor = route{}
