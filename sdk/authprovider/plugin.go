package authprovider

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
	"github.com/fennec-forge/fennec/sdk/plugin"
)

// Kind is the descriptor a host runs auth-provider plugins by: configured
// as kind "auth", they must speak APIVersion, and each becomes a Provider
// (also a UserSearcher and UserSyncer) that routes every call to the
// plugin's current process.
var Kind = plugin.Kind{
	Name:       "auth",
	APIVersion: APIVersion,
	NewClient:  func(cc grpc.ClientConnInterface) any { return NewClient(cc) },
	Route:      func(conn plugin.Conn) any { return route{conn} },
}

// NewLogger returns the logger a plugin should use (plugin.NewLogger):
// hclog JSON lines on standard error, which the host re-emits into its own
// log under the plugin's name. Build it before Serve, which redirects
// os.Stderr.
func NewLogger(name string) hclog.Logger { return plugin.NewLogger(name) }

// Serve runs p as an auth-provider plugin until the host closes the
// connection or kills the process. It is the whole of a plugin's main after
// building p; it refuses to run when not started by a Fennec host.
func Serve(p Provider) {
	plugin.Serve(plugin.ServeConfig{
		Kind: Kind.Name,
		Impl: p,
		Register: func(s grpc.ServiceRegistrar, log hclog.Logger) {
			authproviderpb.RegisterAuthProviderServer(s, NewServer(p, log))
		},
	})
}

// Register serves p on s as a whole plugin would: the base service
// (Describe, Configure) and the auth-provider service. For tests and
// embedders with a gRPC server of their own; NewClient is its other end.
func Register(s grpc.ServiceRegistrar, p Provider, log hclog.Logger) {
	plugin.RegisterBase(s, Kind.Name, p, log)
	authproviderpb.RegisterAuthProviderServer(s, NewServer(p, log))
}

// route is the Provider of a configured plugin on the host side: stable
// across restarts, it sends each call through the host's Conn to the current
// process (ErrUnavailable at once when there is none).
type route struct {
	conn plugin.Conn
}

func (r route) Describe(ctx context.Context) (Description, error) { return r.conn.Describe(ctx) }

func (r route) Configure(ctx context.Context, settings []byte) error {
	return r.conn.Configure(ctx, settings)
}

func (r route) Authenticate(ctx context.Context, login, password string) (Identity, error) {
	return plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) (Identity, error) {
		return c.Authenticate(ctx, login, password)
	})
}

func (r route) SearchUsers(ctx context.Context, query string, limit int) ([]Identity, error) {
	return plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) ([]Identity, error) {
		return c.SearchUsers(ctx, query, limit)
	})
}

func (r route) SyncUsers(ctx context.Context, externalIDs []string) ([]Identity, error) {
	return plugin.Call(ctx, r.conn, func(ctx context.Context, c *Client) ([]Identity, error) {
		return c.SyncUsers(ctx, externalIDs)
	})
}

// Interface guards.
var (
	_ Provider     = route{}
	_ UserSearcher = route{}
	_ UserSyncer   = route{}
)
