package plugin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"go.uber.org/zap"

	"google.golang.org/grpc"

	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

// ErrExited ends the calls in flight on a process that died on its own (it
// is being restarted); errors.Is finds it in their errors, beside
// sdk/plugin.ErrUnavailable, so a caller can tell a crash from other
// failures.
var ErrExited = errors.New("plugin process exited")

var errStopped = errors.New("plugin host stopped")

// pollInterval is how often a supervisor asks go-plugin whether its process
// is still alive (go-plugin offers no channel for it).
const pollInterval = 50 * time.Millisecond

// permanent marks a launch error that retrying cannot fix.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// instance is one configured plugin and its supervisor's state. Nothing in
// it depends on the kind beyond the descriptor: the base client describes
// and configures every process alike, and the kind's client is opaque here.
type instance struct {
	name, path   string
	kind         sdkplugin.Kind
	sum          []byte
	log          *zap.Logger
	backoff      Backoff
	startTimeout time.Duration
	callTimeout  time.Duration

	// first is closed once the first attempt to start the plugin has
	// settled; calls made before wait for it (current).
	first     chan struct{}
	firstOnce sync.Once

	mu       sync.Mutex
	settings []byte
	state    State
	err      error
	client   *goplugin.Client
	base     *sdkplugin.Client // the base service of the current process
	kclient  any               // the kind's client of the current process (Kind.NewClient)
	gen      context.Context   // ends when the current process is gone
	genEnd   context.CancelCauseFunc
	pid      int
	restarts int
	desc     sdkplugin.Description
}

func (in *instance) snapshot() Status {
	in.mu.Lock()
	defer in.mu.Unlock()
	return Status{
		Name: in.name, Kind: in.kind.Name, Path: in.path,
		State: in.state, PID: in.pid, Restarts: in.restarts, Err: in.err, Description: in.desc,
	}
}

func (in *instance) setSettings(s []byte) {
	in.mu.Lock()
	in.settings = s
	in.mu.Unlock()
}

// settleFirst marks the first attempt as settled.
func (in *instance) settleFirst() { in.firstOnce.Do(func() { close(in.first) }) }

// current is the base and kind clients of the running process and the
// context that ends with it. Before the first attempt to start the plugin
// has settled it waits for that attempt, at most until ctx ends or the
// start timeout passes (the server answers before its plugins are up, and
// a request that needs one then waits for it rather than failing); after
// that, while no process runs, it fails at once with ErrUnavailable.
func (in *instance) current(ctx context.Context) (*sdkplugin.Client, any, context.Context, error) {
	select {
	case <-in.first:
	default:
		t := time.NewTimer(in.startTimeout)
		select {
		case <-in.first:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.state != StateRunning || in.base == nil {
		if in.err != nil {
			return nil, nil, nil, fmt.Errorf("plugin %s is %s: %w: %v", in.name, in.state, sdkplugin.ErrUnavailable, in.err)
		}
		return nil, nil, nil, fmt.Errorf("plugin %s is %s: %w", in.name, in.state, sdkplugin.ErrUnavailable)
	}
	return in.base, in.kclient, in.gen, nil
}

// run supervises the plugin until ctx ends: launch, watch, and after a crash
// or a failed launch wait out the backoff and launch again. firstDone is
// called after the first attempt, whatever its outcome.
func (in *instance) run(ctx context.Context, firstDone func()) {
	// Every process of this plugin is started from here, and a process's
	// parent-death signal (command) fires when the thread that started it
	// ends: the goroutine keeps its thread, never unlocked, so the thread
	// lives as long as any process it started and ends with the goroutine,
	// once the last one has been killed (down).
	runtime.LockOSThread()
	failures := 0
	for attempt := 0; ; attempt++ {
		in.setState(StateStarting, nil)
		if attempt == 0 {
			in.log.Debug("plugin starting", zap.String("path", in.path))
		}
		started := time.Now()
		err := in.launch(ctx)
		// Start waits for the first attempt's outcome: its state and its
		// log line, so that firstDone comes after both (a failed process
		// may take a while to be killed).
		settled := func() {
			if attempt == 0 {
				firstDone()
			}
		}
		if ctx.Err() != nil {
			in.down(StateStopped, errStopped)
			settled()
			return
		}
		var p permanent
		switch {
		case errors.As(err, &p):
			in.down(StateFailed, err)
			in.log.Error("plugin refused; Fennec continues without it", zap.String("path", in.path), zap.Error(err))
			settled()
			return
		case err != nil:
			in.down(StateRestarting, err)
			delay := in.backoff.Delay(failures)
			failures++
			in.log.Warn("plugin failed to start; retrying", zap.Duration("in", delay), zap.Error(err))
			settled()
			if !sleep(ctx, delay) {
				in.down(StateStopped, errStopped)
				return
			}
			continue
		}
		if st := in.snapshot(); st.State == StateRunning {
			in.log.Info("plugin running", zap.String("kind", st.Kind), zap.String("version", st.Description.Version),
				zap.Strings("features", st.Description.Features), zap.Int("pid", st.PID))
		}
		settled()

		if !in.watch(ctx) {
			in.down(StateStopped, errStopped)
			return
		}
		// It died on its own: fail what was in flight, then restart.
		in.down(StateRestarting, ErrExited)
		if time.Since(started) > in.backoff.Max {
			failures = 0
		}
		delay := in.backoff.Delay(failures)
		failures++
		in.mu.Lock()
		in.restarts++
		in.mu.Unlock()
		in.log.Warn("plugin process exited unexpectedly; restarting", zap.Duration("in", delay))
		if !sleep(ctx, delay) {
			in.down(StateStopped, errStopped)
			return
		}
	}
}

// watch waits until the process exits (true) or ctx ends (false).
func (in *instance) watch(ctx context.Context) bool {
	in.mu.Lock()
	client := in.client
	in.mu.Unlock()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if client.Exited() {
				return true
			}
		}
	}
}

// testHookDown, when set (by tests, before Start), runs in down after the
// state changed: it stands for a slow kill of a process.
var testHookDown func(State)

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (in *instance) setState(s State, err error) {
	in.mu.Lock()
	in.state, in.err = s, err
	in.mu.Unlock()
}

// down forgets the current process: calls in flight on it end with cause,
// new calls fail at once, and the process is killed (go-plugin closes the
// connection, waits briefly for a clean exit, then kills it).
func (in *instance) down(s State, cause error) {
	in.mu.Lock()
	client, end := in.client, in.genEnd
	in.client, in.base, in.kclient, in.gen, in.genEnd, in.pid = nil, nil, nil, nil, nil, 0
	in.state, in.err = s, cause
	in.mu.Unlock()
	if testHookDown != nil {
		testHookDown(s)
	}
	if end != nil {
		end(cause)
	}
	if client != nil {
		client.Kill()
	}
}

// launch starts a process, checks that it is of the configured kind and
// speaks the kind's API version, and configures it; on success it becomes
// the current process.
func (in *instance) launch(ctx context.Context) error {
	in.mu.Lock()
	settings := in.settings
	in.mu.Unlock()

	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sdkplugin.Handshake,
		Plugins:          sdkplugin.HostPlugins(),
		Cmd:              command(ctx, in.path),
		SecureConfig:     &goplugin.SecureConfig{Checksum: in.sum, Hash: sha256.New()},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     in.startTimeout,
		Logger:           newHCLog(in.log),
		SyncStdout:       &lineWriter{emit: func(l string) { in.log.Info("plugin stdout", zap.String("line", l)) }},
		SyncStderr:       &lineWriter{emit: func(l string) { in.log.Warn("plugin stderr", zap.String("line", l)) }},
	})
	fail := func(err error) error {
		client.Kill()
		return err
	}
	rpc, err := client.Client()
	if err != nil {
		if errors.Is(err, goplugin.ErrChecksumsDoNotMatch) {
			return fail(permanent{fmt.Errorf("%w: %s changed on disk since it was pinned", ErrChecksumMismatch, in.path)})
		}
		return fail(fmt.Errorf("start %s: %w", in.path, err))
	}
	raw, err := rpc.Dispense(sdkplugin.PluginName)
	if err != nil {
		return fail(fmt.Errorf("dispense: %w", err))
	}
	cc, ok := raw.(grpc.ClientConnInterface)
	if !ok {
		return fail(permanent{fmt.Errorf("dispensed %T, not a gRPC connection", raw)})
	}
	base := sdkplugin.NewClient(cc)
	ctx, cancel := context.WithTimeout(ctx, in.startTimeout)
	defer cancel()
	desc, err := base.Describe(ctx)
	if err != nil {
		return fail(fmt.Errorf("describe: %w", err))
	}
	if desc.Kind != in.kind.Name {
		return fail(permanent{fmt.Errorf("plugin is of kind %q; the configuration says %q", desc.Kind, in.kind.Name)})
	}
	if !desc.Speaks(in.kind.APIVersion) {
		return fail(permanent{fmt.Errorf("plugin speaks API versions %q; this host needs %q", desc.APIVersions, in.kind.APIVersion)})
	}
	if err := base.Configure(ctx, settings); err != nil {
		if errors.Is(err, sdkplugin.ErrInvalidSettings) {
			return fail(permanent{fmt.Errorf("settings refused: %w", err)})
		}
		return fail(fmt.Errorf("configure: %w", err))
	}

	pid := 0
	if rc := client.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	gen, end := context.WithCancelCause(context.Background())
	in.mu.Lock()
	in.client, in.base, in.kclient, in.gen, in.genEnd, in.pid = client, base, in.kind.NewClient(cc), gen, end, pid
	in.state, in.err, in.desc = StateRunning, nil, desc
	in.mu.Unlock()
	in.log.Debug("plugin started", zap.Int("pid", pid), zap.String("version", desc.Version))
	return nil
}
