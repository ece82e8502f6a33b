package plugin

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginpb "github.com/fennec-forge/fennec/sdk/plugin/proto"
)

// Handshake is shared by the host and every plugin of every kind; the kind
// is told apart by Describe. The cookie only keeps a plugin binary from
// being run by hand by mistake; it is not a secret. ProtocolVersion changes
// only when the base contract breaks (new abilities are features instead):
// 2 moved Describe and Configure out of the auth-provider service into the
// base service, so a plugin built against the older SDK is refused with a
// clear version mismatch.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  2,
	MagicCookieKey:   "FENNEC_PLUGIN",
	MagicCookieValue: "fennec-plugin-5b0c3f2e9a7d4e61",
}

// PluginName is the one entry of the go-plugin plugin set: every plugin
// serves its base and kind services on one gRPC server, and the host
// dispenses the connection under this name.
const PluginName = "fennec"

// grpcPlugin is the go-plugin glue. On the plugin side register puts the
// services on the server; on the host side GRPCClient hands back the
// connection, over which the host builds the base client and the kind's.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	register func(*grpc.Server)
}

func (p *grpcPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	p.register(s)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return cc, nil
}

// HostPlugins is the plugin set a host launches any plugin with;
// Dispense(PluginName) returns its *grpc.ClientConn.
func HostPlugins() goplugin.PluginSet {
	return goplugin.PluginSet{PluginName: &grpcPlugin{}}
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

// ServeConfig is what a kind's Serve hands to Serve.
type ServeConfig struct {
	// Kind is the kind served, reported in Describe.
	Kind string
	// Impl is the plugin; it answers the base service.
	Impl Base
	// Register puts the kind's service for Impl on the server; log
	// receives recovered panics.
	Register func(s grpc.ServiceRegistrar, log hclog.Logger)
	// Logger is the plugin's logger (default NewLogger("")).
	Logger hclog.Logger
}

// Stopper is implemented by a plugin that starts processes of its own, as
// an executor starts its jobs' (sdk/executor/local.Executor does). Serve
// calls Stop once, before the plugin exits: when the host closed the
// connection, and when the host is gone (see Serve), so that nothing the
// plugin started outlives it.
type Stopper interface {
	Stop()
}

// hostPoll is how often a plugin checks that the host that started it is
// still its parent.
const hostPoll = 200 * time.Millisecond

// stopTimeout bounds Stop when the host is gone: the plugin exits then,
// whatever Stop is still doing.
const stopTimeout = 5 * time.Second

// Serve runs a plugin until the host closes the connection or kills the
// process. It refuses to run when not started by a Fennec host. Kinds wrap
// it (authprovider.Serve); it is the whole of a plugin's main after
// building the implementation.
//
// The plugin also ends when its host is gone, whatever the host had time
// to do: on SIGTERM, which is the parent-death signal a Linux host starts
// its plugins with, and when it finds itself re-parented (the host's
// process ended; checked every hostPoll), for a host that could not set
// one. The connection alone would not tell: standard input is the host's
// own, and a dead host's socket is not noticed by a server waiting for
// calls. Either way Impl's Stop runs first when Impl is a Stopper.
func Serve(c ServeConfig) {
	log := c.Logger
	if log == nil {
		log = NewLogger("")
	}
	var stopOnce sync.Once
	stop := func() {
		if s, ok := c.Impl.(Stopper); ok {
			stopOnce.Do(s.Stop)
		}
	}
	go watchHost(os.Getppid(), func() {
		// The host read this process's standard error: writing to it
		// now would kill the process with SIGPIPE before Stop is done.
		signal.Ignore(syscall.SIGPIPE)
		done := make(chan struct{})
		go func() {
			stop()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(stopTimeout):
		}
		os.Exit(1)
	})
	defer stop()
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins: goplugin.PluginSet{PluginName: &grpcPlugin{register: func(s *grpc.Server) {
			RegisterBase(s, c.Kind, c.Impl, log)
			c.Register(s, log)
		}}},
		GRPCServer: goplugin.DefaultGRPCServer,
		Logger:     log,
	})
}

// watchHost calls gone once the host is gone: on SIGTERM, or when this
// process's parent is no longer ppid, the host that started it.
func watchHost(ppid int, gone func()) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	t := time.NewTicker(hostPoll)
	defer t.Stop()
	for {
		select {
		case <-term:
			gone()
			return
		case <-t.C:
			if os.Getppid() != ppid {
				gone()
				return
			}
		}
	}
}

// RegisterBase serves impl's base service as a plugin of kind on s (Serve
// does it; tests and embedders with a gRPC server of their own may too). A
// panic in impl is recovered, logged to log (nil: discarded) and answered
// as a failure.
func RegisterBase(s grpc.ServiceRegistrar, kind string, impl Base, log hclog.Logger) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	pluginpb.RegisterBaseServer(s, &server{kind: kind, impl: impl, log: log})
}
