package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/config"
	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

var errUnknownKind = errors.New("plugin: unknown kind")

// Options configure a Host. Zero values mean the defaults.
type Options struct {
	// Kinds are the kinds of plugin this host runs, each described by its
	// kind package (authprovider.Kind). A configured plugin of another kind
	// is left out with a warning.
	Kinds []sdkplugin.Kind
	// Plugins are the configured plugins, in the order they are asked.
	Plugins []config.Plugin
	// Dir is where a plugin named by a bare file name (or by nothing, then
	// its name) is found; default "plugins" next to the running executable.
	Dir string
	// Logger receives the host's messages and the plugins' own logs.
	Logger *zap.Logger
	// Backoff paces restarts of a plugin that died; default 100 ms doubling to 30 s.
	Backoff Backoff
	// StartTimeout bounds launching, describing and configuring a process;
	// default 10 s.
	StartTimeout time.Duration
	// CallTimeout bounds each call routed to a plugin, on top of the
	// caller's context; default 30 s.
	CallTimeout time.Duration
}

// Host runs the configured plugins: one supervised process each.
type Host struct {
	log       *zap.Logger
	instances []*instance
	routes    map[string][]Route // by kind name, in configuration order

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// firsts ends when every plugin's first attempt has settled (WaitStarted).
	firsts sync.WaitGroup
}

// FromConfig is New with the plugins and plugin directory of cfg, running
// the given kinds.
func FromConfig(cfg config.Config, log *zap.Logger, kinds ...sdkplugin.Kind) *Host {
	return New(Options{Kinds: kinds, Plugins: cfg.Plugins, Dir: cfg.PluginDir, Logger: log})
}

// New prepares the plugins (resolving each binary and pinning its sha256)
// without starting any. A plugin that cannot run is logged and left out of
// Routes; the others are unaffected.
func New(o Options) *Host {
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	log = log.Named("plugin")
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	dir := Dir(o.Dir)
	h := &Host{log: log, routes: map[string][]Route{}}
	kinds := map[string]sdkplugin.Kind{}
	var known []string
	for _, k := range o.Kinds {
		if _, dup := kinds[k.Name]; !dup {
			known = append(known, k.Name)
		}
		kinds[k.Name] = k
	}
	seen := map[string]bool{}
	for _, p := range o.Plugins {
		in := &instance{
			name: p.Name, kind: sdkplugin.Kind{Name: p.Kind}, first: make(chan struct{}),
			log:          log.With(zap.String("plugin", p.Name)),
			backoff:      o.Backoff.orDefault(),
			startTimeout: o.StartTimeout,
			callTimeout:  o.CallTimeout,
			state:        StateStopped,
		}
		h.instances = append(h.instances, in)
		if err := in.prepare(p, dir, seen, kinds, known); err != nil {
			in.state, in.err = StateFailed, err
			level := zap.ErrorLevel
			if errors.Is(err, errUnknownKind) {
				level = zap.WarnLevel // a plugin for a later Fennec, not a broken one
			}
			in.log.Log(level, "plugin disabled; Fennec continues without it", zap.String("kind", p.Kind), zap.String("path", in.path), zap.Error(err))
			continue
		}
		h.routes[p.Kind] = append(h.routes[p.Kind], Route{Name: in.name, Value: in.kind.Route(in)})
	}
	return h
}

// Dir is the directory plugins named by a bare file name are found in:
// configured, or by default "plugins" next to the running executable.
func Dir(configured string) string {
	if configured != "" {
		return configured
	}
	return defaultDir()
}

// defaultDir is "plugins" next to the running executable.
func defaultDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "plugins"
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Join(filepath.Dir(exe), "plugins")
}

func (in *instance) prepare(p config.Plugin, dir string, seen map[string]bool, kinds map[string]sdkplugin.Kind, known []string) error {
	if seen[p.Name] {
		return fmt.Errorf("plugin: another plugin is already named %q", p.Name)
	}
	seen[p.Name] = true
	k, ok := kinds[p.Kind]
	if !ok {
		return fmt.Errorf("%w: kind %q is not run by this host (known kinds: %s)", errUnknownKind, p.Kind, strings.Join(known, ", "))
	}
	if k.NewClient == nil || k.Route == nil {
		return fmt.Errorf("plugin: the descriptor of kind %q lacks NewClient or Route", p.Kind)
	}
	in.kind = k
	in.path = resolvePath(p, dir)
	settings := p.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return fmt.Errorf("plugin: settings cannot be sent as JSON: %w", err)
	}
	in.settings = raw
	in.sum, err = pin(in.path, p.SHA256)
	if errors.Is(err, fs.ErrNotExist) && p.Path == "" {
		return fmt.Errorf("%w (no path given, so the binary is looked up by the plugin's name; set path to its file name, such as auth-ldap)", err)
	}
	return err
}

// Start launches every runnable plugin and returns at once: the processes
// start, describe themselves and take their settings in the background, so
// a server does not wait for them before it answers. Until a plugin's first
// attempt has settled, calls to it wait for that attempt (bounded by their
// context and the start timeout); a plugin that is slow or fails is logged
// and keeps being retried in the background. Fennec runs without the
// plugins it cannot run. WaitStarted waits for the first attempts.
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return errors.New("plugin: host already started")
	}
	h.started = true
	runCtx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	for _, in := range h.instances {
		if in.snapshot().State == StateFailed {
			in.settleFirst()
			continue
		}
		// Starting from now, not from when the goroutine runs: a call
		// made meanwhile waits for the first attempt.
		in.setState(StateStarting, nil)
		h.firsts.Add(1)
		once := sync.OnceFunc(func() {
			in.settleFirst()
			h.firsts.Done()
		})
		h.wg.Go(func() {
			defer once()
			in.run(runCtx, once)
		})
	}
	return nil
}

// WaitStarted waits until every plugin's first attempt has settled
// (running, failed, or waiting to retry), or ctx ends.
func (h *Host) WaitStarted(ctx context.Context) error {
	done := make(chan struct{})
	go func() { h.firsts.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop kills every plugin process and waits for their supervisors, at most
// until ctx ends. Calls in flight fail with ErrUnavailable.
func (h *Host) Stop(ctx context.Context) error {
	h.mu.Lock()
	cancel := h.cancel
	h.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plugin: stop: %w", ctx.Err())
	}
}

// Route is one runnable configured plugin as the application sees it.
type Route struct {
	// Name is the plugin's name in the configuration.
	Name string
	// Value is what the kind's descriptor made of it (Kind.Route): a value
	// of the kind's Go interface, such as an authprovider.Provider.
	Value any
}

// Routes are the runnable plugins of a kind, in configuration order. The
// values stay valid across restarts; while a plugin is down its calls fail
// at once with an error wrapping sdk/plugin.ErrUnavailable.
func (h *Host) Routes(kind string) []Route {
	return append([]Route(nil), h.routes[kind]...)
}

// State is where a plugin is in its life.
type State string

const (
	StateStarting   State = "starting"   // launching, describing, configuring
	StateRunning    State = "running"    // serving calls
	StateRestarting State = "restarting" // died or failed to start; waiting out the backoff
	StateFailed     State = "failed"     // will not be retried: a configuration problem (see Err)
	StateStopped    State = "stopped"    // not started yet, or the host stopped
)

// Status is a snapshot of one configured plugin.
type Status struct {
	Name, Kind, Path string
	State            State
	// PID of the current process, 0 when there is none.
	PID int
	// Restarts counts restarts after the first start.
	Restarts int
	// Err says why the plugin is down or failed.
	Err error
	// Description is what the plugin said at its last start.
	Description sdkplugin.Description
}

// Status reports every configured plugin, in configuration order.
func (h *Host) Status() []Status {
	out := make([]Status, len(h.instances))
	for i, in := range h.instances {
		out[i] = in.snapshot()
	}
	return out
}
