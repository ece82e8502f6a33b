package executor

import (
	"context"

	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/plugin"
)

// Kind is the descriptor a host runs executor plugins by: configured as
// kind "executor", they must speak APIVersion. Skeleton: each routes only
// Describe and Configure until the executor service exists.
var Kind = plugin.Kind{
	Name:       "executor",
	APIVersion: APIVersion,
	NewClient:  func(cc grpc.ClientConnInterface) any { return NewClient(cc) },
	Route:      func(conn plugin.Conn) any { return route{conn} },
}

// Client is the host side over a plugin's connection: the base service
// now, the executor service with the CI issue.
type Client struct {
	*plugin.Client
}

// NewClient talks to the plugin's services on cc.
func NewClient(cc grpc.ClientConnInterface) *Client {
	return &Client{Client: plugin.NewClient(cc)}
}

// route is a configured executor on the host side, stable across restarts.
type route struct {
	conn plugin.Conn
}

func (r route) Describe(ctx context.Context) (plugin.Description, error) {
	return r.conn.Describe(ctx)
}

func (r route) Configure(ctx context.Context, settings []byte) error {
	return r.conn.Configure(ctx, settings)
}

// Interface guard: the route becomes an Executor with the CI issue.
var _ plugin.Base = route{}
