package authprovider

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
)

// Handshake is shared by the host and every auth-provider plugin. The cookie
// only keeps a plugin binary from being run by hand by mistake; it is not a
// secret. ProtocolVersion changes only when the wire contract breaks (new
// abilities are features instead).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "FENNEC_PLUGIN",
	MagicCookieValue: "authprovider-5b0c3f2e9a7d4e61",
}

// PluginName is the key of the auth provider in the go-plugin plugin set.
const PluginName = "authprovider"

// GRPCPlugin is the go-plugin glue. The plugin side sets Impl (Serve does);
// the host side leaves it nil and gets a *Client from Dispense.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Provider
	// Logger, on the plugin side, receives recovered panics; nil discards.
	Logger hclog.Logger
}

// GRPCServer registers Impl on the plugin's gRPC server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	authproviderpb.RegisterAuthProviderServer(s, NewServer(p.Impl, p.Logger))
	return nil
}

// GRPCClient returns the host-side *Client over the plugin's connection.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c), nil
}

// PluginSet is the go-plugin plugin set of an auth provider; impl is nil on
// the host side.
func PluginSet(impl Provider) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl}}
}

// NewLogger returns the logger a plugin should use: hclog JSON lines on
// standard error, which the host re-emits into its own log under the
// plugin's name. Build it before Serve, which redirects os.Stderr.
func NewLogger(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.Debug,
		JSONFormat: true,
		Output:     os.Stderr,
	})
}

// Serve runs p as an auth-provider plugin until the host closes the
// connection or kills the process. It is the whole of a plugin's main after
// building p; it refuses to run when not started by a Fennec host.
func Serve(p Provider) {
	log := NewLogger("")
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &GRPCPlugin{Impl: p, Logger: log}},
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          log,
	})
}
