package fennec

import (
	"cmp"
	"fmt"
	"slices"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/authprovider"
	"github.com/fennec-forge/fennec/sdk/executor"
	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

// This file wires out-of-process plugins into the application: one
// *plugin.Host built from the configuration, running the plugin kinds that
// the application registered (PluginKind), started with the app and killed
// when it stops. The host knows no kind; this file knows one, auth, because
// in-process providers (WithAuthProvider) join the plugins here: it provides
// the AuthProviders the identity module asks on sign-in (configured plugins
// first, in order, then in-process ones).

const (
	groupPluginKinds     = `group:"fennec.plugin_kinds"`
	groupPluginPreparers = `group:"fennec.plugin_preparers"`
)

// PluginPreparer adjusts the configured plugins before the host is built,
// for the kind of the package that registers it: it adds the plugins that
// kind runs when none is configured (those it finds in dir, the resolved
// plugin directory) and settings only the host knows, such as where a
// plugin may keep files. It returns the new list without modifying the one
// it is given, and touches only its own kind (preparers run in no
// particular order).
type PluginPreparer func(cfg config.Config, dir string, plugins []config.Plugin, log *zap.Logger) []config.Plugin

// PreparePlugins registers a PluginPreparer.
func PreparePlugins(fn PluginPreparer) fx.Option {
	return fx.Provide(fx.Annotate(func() PluginPreparer { return fn }, fx.ResultTags(groupPluginPreparers)))
}

// PluginKind lets the plugin host run plugins of kind k (its package's
// descriptor, such as authprovider.Kind). The module that uses a kind adds
// it to its fx options and reads the plugins through
// (*plugin.Host).Routes(k.Name); a configured plugin of a kind nobody
// registered is left out with a warning.
func PluginKind(k sdkplugin.Kind) fx.Option {
	return fx.Provide(fx.Annotate(func() sdkplugin.Kind { return k }, fx.ResultTags(groupPluginKinds)))
}

// AuthProvider is one auth provider as the rest of the application sees it:
// a configured plugin (whose Provider routes to its current process) or an
// in-process implementation registered by an embedder.
type AuthProvider struct {
	Name string
	authprovider.Provider
}

// AuthProviders are the auth providers in the order they are asked.
type AuthProviders []AuthProvider

// InProcessExecutor is a job executor that runs inside the server
// (WithExecutor): a member of the executors' pool beside the executor
// plugins, with no process to start or watch.
type InProcessExecutor struct {
	Name     string
	Executor executor.Executor
}

// InProcessExecutors are those registered with WithExecutor, in order;
// every app provides the list (empty without any).
type InProcessExecutors []InProcessExecutor

// WithExecutor registers an in-process job executor under name, taken by
// the CI scheduler like an executor plugin (the tags its Capabilities
// give decide which jobs). It must pass the suite in
// sdk/executor/conformance like any plugin. For embedders who run jobs
// their own way, and tests that want jobs to finish at once.
func WithExecutor(name string, e executor.Executor) Option {
	return func(s *settings) {
		s.executors = append(s.executors, InProcessExecutor{Name: name, Executor: e})
	}
}

// inProcessAuthProviders are those registered with WithAuthProvider.
type inProcessAuthProviders = AuthProviders

// WithAuthProvider registers an in-process auth provider under name, asked
// after the configured plugins (in the order of the calls). It must pass the
// suite in sdk/authprovider/conformance like any plugin.
func WithAuthProvider(name string, p authprovider.Provider) Option {
	return func(s *settings) {
		s.authProviders = append(s.authProviders, AuthProvider{Name: name, Provider: p})
	}
}

type pluginHostParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    config.Config
	Log       *zap.Logger
	Kinds     []sdkplugin.Kind `group:"fennec.plugin_kinds"`
	Preparers []PluginPreparer `group:"fennec.plugin_preparers"`
}

// pluginOptions provides *plugin.Host and AuthProviders. The host is always
// built (not only when a module asks for providers), so configured plugins
// run and configuration mistakes show in the log at start-up.
func pluginOptions(s *settings) fx.Option {
	inProcess := s.authProviders
	return fx.Options(
		PluginKind(authprovider.Kind),
		fx.Supply(s.executors),
		fx.Provide(
			func(p pluginHostParams) *plugin.Host {
				// Group order is random; sort so messages are stable.
				kinds := slices.SortedFunc(slices.Values(p.Kinds), func(a, b sdkplugin.Kind) int { return cmp.Compare(a.Name, b.Name) })
				plugins := p.Config.Plugins
				for _, prepare := range p.Preparers {
					plugins = prepare(p.Config, plugin.Dir(p.Config.PluginDir), plugins, p.Log)
				}
				h := plugin.New(plugin.Options{Kinds: kinds, Plugins: plugins, Dir: p.Config.PluginDir, Logger: p.Log})
				p.Lifecycle.Append(fx.Hook{OnStart: h.Start, OnStop: h.Stop})
				return h
			},
			func(h *plugin.Host) (AuthProviders, error) {
				var configured AuthProviders
				for _, r := range h.Routes(authprovider.Kind.Name) {
					configured = append(configured, AuthProvider{Name: r.Name, Provider: r.Value.(authprovider.Provider)})
				}
				return joinAuthProviders(configured, inProcess)
			},
		),
		fx.Invoke(func(*plugin.Host) {}),
	)
}

// joinAuthProviders appends the in-process providers, refusing a name used
// twice: the identity module records which provider a user came from.
func joinAuthProviders(configured, inProcess AuthProviders) (AuthProviders, error) {
	all := append(AuthProviders(nil), configured...)
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
