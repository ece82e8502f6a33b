package fennec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
	"github.com/fennec-forge/fennec/core/web"
)

// Set at link time by the Makefile (-X); never changed at run time.
var (
	version  = "0.0.0-dev" // semver-shaped even in a plain `go build`
	revision = "unknown"
)

// Version is the Fennec version and the git revision it was built from.
func Version() (string, string) { return version, revision }

// Option configures New.
type Option func(*settings)

type settings struct {
	cfg      config.Config
	cfgSet   bool
	modules  []Module
	logger   *zap.Logger
	extract  []any
	dbOption store.Options
	// authProviders are in-process auth providers (WithAuthProvider).
	authProviders inProcessAuthProviders
	// executors are in-process job executors (WithExecutor).
	executors InProcessExecutors
}

// WithConfig sets the configuration; without it, config.Default() is used.
func WithConfig(cfg config.Config) Option {
	return func(s *settings) { s.cfg, s.cfgSet = cfg, true }
}

// WithModules adds modules (the stock host passes all of them).
func WithModules(mods ...Module) Option {
	return func(s *settings) { s.modules = append(s.modules, mods...) }
}

// WithLogger sets the logger; without it, one is built from the config.
func WithLogger(l *zap.Logger) Option {
	return func(s *settings) { s.logger = l }
}

// WithExtract fills each target (a pointer to a service type such as
// *auth.Provisioner or *events.Bus) from the assembled application; for test
// harnesses and embedders that call services directly.
func WithExtract(targets ...any) Option {
	return func(s *settings) { s.extract = append(s.extract, targets...) }
}

// App is an assembled Fennec application.
type App struct {
	fx       *fx.App
	cfg      config.Config
	log      *zap.Logger
	api      *api.API
	db       *store.DB
	srv      *http.Server
	listener net.Listener
	admin    *adminSocket
	commands []AdminCommand
	backup   []BackupParticipant
	modules  []Module
}

// New assembles an App. It opens the store (failing within about a second if
// another process holds it) and registers every operation, but starts
// nothing: call Start or Run.
func New(opts ...Option) (*App, error) {
	app := &App{}
	options, err := app.options(opts)
	if err != nil {
		return nil, err
	}
	app.fx = fx.New(options...)
	if err := app.fx.Err(); err != nil {
		if explained := explainMissing(err, app.modules); explained != nil {
			return nil, explained
		}
		return nil, unwrapFx(err)
	}
	return app, nil
}

// Validate checks that the modules in opts fit together (every dependency
// provided, no cycles) without opening the store or calling any constructor.
func Validate(opts ...Option) error {
	app := &App{}
	options, err := app.options(opts)
	if err != nil {
		return err
	}
	if err := fx.ValidateApp(options...); err != nil {
		if explained := explainMissing(err, app.modules); explained != nil {
			return explained
		}
		return err
	}
	return nil
}

func (app *App) options(opts []Option) ([]fx.Option, error) {
	s := &settings{cfg: config.Default()}
	for _, o := range opts {
		o(s)
	}
	if err := s.cfg.Validate(); err != nil {
		return nil, err
	}
	if err := s.cfg.CheckSections(sectionsOf(s.modules)); err != nil {
		return nil, err
	}
	if s.logger == nil {
		l, err := flog.New(flog.Options{Level: s.cfg.LogLevel, Format: s.cfg.LogFormat})
		if err != nil {
			return nil, err
		}
		s.logger = l
	}
	for _, moved := range s.cfg.MovedKeys(sectionsOf(s.modules)) {
		key, to, _ := strings.Cut(moved, ": ")
		s.logger.Warn("a setting of the configuration file moved to its module's section; the old place still works",
			zap.String("key", key), zap.String("now", to))
	}
	s.dbOption.NoSync = s.cfg.NoSync
	app.cfg, app.log, app.modules = s.cfg, s.logger, s.modules

	options := []fx.Option{
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: s.logger}
			l.UseLogLevel(zap.DebugLevel)
			l.UseErrorLevel(zap.DebugLevel) // New and Start return these errors
			return l
		}),
		fx.Supply(s.cfg, s.logger),
		fx.Provide(
			func(lc fx.Lifecycle) (*store.DB, error) { return openStore(lc, s.cfg, s.dbOption) },
			newResolver,
			func(r *auth.Resolver) (*api.API, error) {
				v, _ := Version()
				allow, err := s.cfg.MetricsPrefixes()
				if err != nil {
					return nil, err
				}
				return api.New(api.Options{Logger: s.logger, Resolver: r, MaxBodyBytes: s.cfg.MaxBodyBytes,
					BodyReadTimeout: s.cfg.BodyReadTimeout, Version: v,
					MetricsToken: s.cfg.MetricsToken, MetricsAllow: allow}), nil
			},
			func(a *api.API) ExternalURL { return a.ExternalURL },
			func(a *api.API) *web.Site { return web.New(a, web.Options{Log: s.logger}) },
			newBus,
			newNode,
			func() *lifecycle { return newLifecycle(s.logger) },
			// The key that seals secrets the store keeps (core/sealed),
			// from <data>/secret.key, never from the store itself.
			func() (*sealed.Box, error) { return sealed.Open(s.cfg.Data) },
			func() blob.Store { return newBlobs(s.cfg.Data, s.modules) },
		),
		fx.Invoke(prepareStore),
		pluginOptions(s),
	}
	for _, m := range s.modules {
		options = append(options, m.opt)
	}
	options = append(options,
		fx.Invoke(registerRoutes, registerSubscribers),
		// The module lifecycle (lifecycle.go): one hook, after every
		// module's, so fx's remaining hooks (plugins, the store) start
		// before it and stop after it.
		fx.Invoke(func(lc fx.Lifecycle, l *lifecycle, bus *events.Bus, db *store.DB, node *Node) {
			var c *cluster
			if db.Shared() {
				c = newCluster(db, s.logger, node, s.cfg.Data, s.cfg.LeaseTTL)
			}
			lc.Append(fx.Hook{
				OnStart: func(ctx context.Context) error { return l.start(ctx, bus, c) },
				OnStop:  func(ctx context.Context) error { return l.stop(ctx, bus) },
			})
		}),
		fx.Populate(&app.api, &app.db),
		fx.Invoke(func(p commandsParams) error {
			app.commands = p.Commands
			var specs []AdminCommandSpec
			for _, m := range s.modules {
				specs = append(specs, m.commands...)
			}
			return checkCommands(specs, p.Commands)
		}),
		fx.Invoke(func(p backupParams) error {
			app.backup = p.Participants
			var specs []BackupSpec
			for _, m := range s.modules {
				specs = append(specs, m.backups...)
			}
			return checkBackupParticipants(specs, p.Participants)
		}),
	)
	if len(s.extract) > 0 {
		options = append(options, fx.Populate(s.extract...))
	}
	return options, nil
}

// unwrapFx keeps the root cause (for example "database is locked") at the
// front of fx's long dependency-chain message.
func unwrapFx(err error) error {
	if errors.Is(err, store.ErrLocked) {
		var cause error = err
		for {
			next := errors.Unwrap(cause)
			if next == nil || next == store.ErrLocked || !errors.Is(next, store.ErrLocked) {
				break
			}
			cause = next
		}
		return cause
	}
	return fmt.Errorf("fennec: %w", err)
}

func openStore(lc fx.Lifecycle, cfg config.Config, opts store.Options) (*store.DB, error) {
	db, err := OpenStore(cfg, opts)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return db.Close() }})
	return db, nil
}

// OpenStore opens the store cfg names: the bbolt file fennec.db in the data
// directory, or the PostgreSQL database of cfg.Store.
func OpenStore(cfg config.Config, opts store.Options) (*store.DB, error) {
	if cfg.Store == "" {
		return store.Open(filepath.Join(cfg.Data, "fennec.db"), opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := postgres.Open(ctx, cfg.Store, postgres.Options{})
	if err != nil {
		return nil, err
	}
	return store.OpenEngine(e, opts)
}

type resolverParams struct {
	fx.In
	Tokens    []auth.TokenResolver       `group:"fennec.tokens"`
	Passwords auth.PasswordAuthenticator `optional:"true"`
	Users     auth.UserLookup            `optional:"true"`
}

func newResolver(p resolverParams) *auth.Resolver {
	return &auth.Resolver{Tokens: p.Tokens, Passwords: p.Passwords, Users: p.Users}
}

// newBus builds the bus without subscribers: they are registered once the
// whole graph exists (registerSubscribers), because a subscriber may depend
// on a service that publishes on this bus.
func newBus(db *store.DB, log *zap.Logger) (*events.Bus, error) {
	return events.New(db, log, nil)
}

type subscriberParams struct {
	fx.In
	Bus         *events.Bus
	Subscribers []events.Subscriber `group:"fennec.subscribers"`
}

func registerSubscribers(p subscriberParams) error {
	return p.Bus.Register(p.Subscribers...)
}

type storeParams struct {
	fx.In
	DB         *store.DB
	Buckets    []string          `group:"fennec.buckets"`
	Migrations []store.Migration `group:"fennec.migrations"`
}

// prepareStore creates declared buckets and runs pending migrations before
// any module starts.
func prepareStore(p storeParams) error {
	if err := p.DB.EnsureBuckets(p.Buckets); err != nil {
		return err
	}
	return p.DB.Migrate(context.Background(), p.Migrations)
}

type routesParams struct {
	fx.In
	API    *api.API
	Routes []Routes `group:"fennec.routes"`
	Site   *web.Site
	Pages  []Pages `group:"fennec.pages"`
	Config config.Config
	DB     *store.DB
	Bus    *events.Bus
	Log    *zap.Logger
	LC     fx.Lifecycle
	Node   *Node
}

// registerRoutes registers the core's own endpoints and every module's, in
// name order, then wires the HTTP server into the lifecycle.
func registerRoutes(p routesParams) {
	registerOps(p.API, p.DB)
	registerClusterOps(p.API, p.DB, p.Bus, p.Node)
	registerAdminOverview(p.Site, p.API, p.DB, p.Bus)
	sort.Slice(p.Routes, func(i, j int) bool { return p.Routes[i].Name < p.Routes[j].Name })
	for _, r := range p.Routes {
		r.Register(p.API)
	}
	sort.Slice(p.Pages, func(i, j int) bool { return p.Pages[i].Name < p.Pages[j].Name })
	for _, pg := range p.Pages {
		pg.Register(p.Site)
	}
	if p.Config.ExternalURL != "" {
		p.API.SetExternalURL(p.Config.ExternalURL)
	}
}

// Start binds the listening socket (unless Listen is empty), runs every
// module's start hook, then serves and marks the app ready. The socket is
// bound first so that a port already in use fails the start before any
// module acts (before the first administrator is created and its one-time
// password printed for a server that never ran).
func (a *App) Start(ctx context.Context) error {
	if a.cfg.Listen != "" {
		if err := a.bind(); err != nil {
			return err
		}
	}
	if err := a.fx.Start(ctx); err != nil {
		if a.listener != nil {
			_ = a.listener.Close()
		}
		return unwrapFx(err)
	}
	if a.listener != nil {
		a.serve()
	}
	a.admin = startAdminSocket(a.cfg.Data, a.log, a.serveCommand, a.serveBackup)
	a.api.SetReady(true)
	return nil
}

// bind opens the listening socket; serve starts answering on it.
func (a *App) bind() error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("fennec: listen on %s: %w", a.cfg.Listen, err)
	}
	a.listener = ln
	if a.cfg.ExternalURL == "" {
		a.api.SetExternalURL(config.ExternalURLFor(ln.Addr().String()))
	}
	return nil
}

func (a *App) serve() {
	ln := a.listener
	a.srv = &http.Server{
		Handler:           a.api.Handler(),
		ReadHeaderTimeout: a.cfg.ReadHeaderTimeout,
		IdleTimeout:       a.cfg.IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          zap.NewStdLog(a.log.Named("http")),
	}
	go func() {
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", zap.Error(err))
		}
	}()
	a.log.Info("listening", zap.String("addr", ln.Addr().String()), zap.String("external_url", a.api.ExternalURL()))
}

// Stop marks the app not ready, drains in-flight requests (bounded by ctx),
// stops modules and the event bus, and closes the store.
func (a *App) Stop(ctx context.Context) error {
	a.api.SetReady(false)
	var errs []error
	if a.admin != nil {
		a.admin.close()
	}
	if a.srv != nil {
		if err := a.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("fennec: drain requests: %w", err))
			_ = a.srv.Close()
		}
	}
	if err := a.fx.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	_ = a.log.Sync()
	return errors.Join(errs...)
}

// Run starts the app, waits for SIGINT or SIGTERM, and stops it within the
// configured shutdown timeout.
func (a *App) Run() error {
	// Catch the signals before starting: Start serves before it returns
	// (the socket answers as soon as it is bound), and a SIGTERM in that
	// window would otherwise kill the process with requests in flight.
	// A signal that comes during the start is acted on once it is done.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	startCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err := a.Start(startCtx)
	cancel()
	if err != nil {
		signal.Stop(sig)
		return err
	}
	got := <-sig
	signal.Stop(sig)
	a.log.Info("shutting down", zap.String("signal", got.String()))
	stopCtx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	return a.Stop(stopCtx)
}

// Handler is the whole HTTP stack, for embedders that serve it themselves.
func (a *App) Handler() http.Handler { return a.api.Handler() }

// Addr is the address the app listens on, after Start ("" when not listening).
func (a *App) Addr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

// URL is the external URL of the app (known after Start).
func (a *App) URL() string { return a.api.ExternalURL() }

// Logger is the app's logger.
func (a *App) Logger() *zap.Logger { return a.log }
