package fennec

import (
	"fmt"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// This file wires out-of-process plugins into the application: one
// *plugin.Host built from the configuration, started with the app and killed
// when it stops, and the plugin.AuthProviders the identity module asks on
// sign-in (configured plugins first, in order, then in-process ones).

// inProcessAuthProviders are those registered with WithAuthProvider.
type inProcessAuthProviders = plugin.AuthProviders

// WithAuthProvider registers an in-process auth provider under name, asked
// after the configured plugins (in the order of the calls). It must pass the
// suite in sdk/authprovider/conformance like any plugin.
func WithAuthProvider(name string, p authprovider.Provider) Option {
	return func(s *settings) {
		s.authProviders = append(s.authProviders, plugin.AuthProvider{Name: name, Provider: p})
	}
}

// pluginOptions provides *plugin.Host and plugin.AuthProviders. The host is
// always built (not only when a module asks for providers), so configured
// plugins run and configuration mistakes show in the log at start-up.
func pluginOptions(s *settings) fx.Option {
	inProcess := s.authProviders
	return fx.Options(
		fx.Provide(
			func(lc fx.Lifecycle, cfg config.Config, log *zap.Logger) *plugin.Host {
				h := plugin.FromConfig(cfg, log)
				lc.Append(fx.Hook{OnStart: h.Start, OnStop: h.Stop})
				return h
			},
			func(h *plugin.Host) (plugin.AuthProviders, error) {
				return joinAuthProviders(h.AuthProviders(), inProcess)
			},
		),
		fx.Invoke(func(*plugin.Host) {}),
	)
}

// joinAuthProviders appends the in-process providers, refusing a name used
// twice: the identity module records which provider a user came from.
func joinAuthProviders(configured, inProcess plugin.AuthProviders) (plugin.AuthProviders, error) {
	all := append(plugin.AuthProviders(nil), configured...)
	seen := map[string]bool{}
	for _, p := range configured {
		seen[p.Name] = true
	}
	for _, p := range inProcess {
		if p.Name == "" || p.Provider == nil {
			return nil, fmt.Errorf("fennec: WithAuthProvider needs a name and a provider")
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("fennec: auth provider %q is registered twice", p.Name)
		}
		seen[p.Name] = true
		all = append(all, p)
	}
	return all, nil
}
