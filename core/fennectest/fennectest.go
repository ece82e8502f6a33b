package fennectest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// Server is a running application.
type Server struct {
	// URL is the base URL, http://127.0.0.1:<port>.
	URL string
	// App is the running application.
	App *fennec.App
	// DataDir holds fennec.db and the rest of the data.
	DataDir string
	// RootPassword and RootToken sign in as the administrator "root".
	RootPassword string
	RootToken    string
	// Client is a client-go client authenticated as root.
	Client *gitlab.Client
	// Store is the application's database.
	Store *store.DB

	provisioner auth.Provisioner
	bus         *events.Bus
	users       atomic.Int64
}

// Option adjusts the server before it starts.
type Option func(*options)

type options struct {
	modules   []fennec.Module
	configure []func(*config.Config)
	level     zapcore.Level
	logger    *zap.Logger
	extract   []any
	more      []fennec.Option
	dataDir   string
	rootPass  string
	durable   bool
}

// Durable keeps fsync on, as in production: for tests about what survives
// a crash, a kill -9 or a restart. Without it the store (and the
// repositories' ref files) skip fsync, which costs most of a write's time
// and guards only against the machine losing power, never against the
// process dying: a test that is not about durability cannot tell the
// difference. A server on WithDataDir and every benchmark are durable
// without asking (a benchmark measures what production pays; it may still
// turn fsync off with WithConfig, which applies after this).
func Durable() Option {
	return func(o *options) { o.durable = true }
}

// WithLogger replaces the test logger (benchmarks use a production-like one
// so logging costs what it costs in production).
func WithLogger(l *zap.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithModules sets the modules to run.
func WithModules(mods ...fennec.Module) Option {
	return func(o *options) { o.modules = append(o.modules, mods...) }
}

// WithConfig changes the configuration (the listen address and data
// directory are already set to a random port and t.TempDir()).
func WithConfig(fn func(*config.Config)) Option {
	return func(o *options) { o.configure = append(o.configure, fn) }
}

// WithModuleConfig changes a module's section of the configuration: name
// is the section (identity.SectionName), T the module's settings type
// (identity.Config). It applies above the file and the environment.
func WithModuleConfig[T any](name string, fn func(*T)) Option {
	return WithConfig(func(c *config.Config) { config.Modify(c, name, fn) })
}

// WithDataDir runs the server on dir instead of a fresh t.TempDir(), with
// rootPassword as root's password (it is set on the first start only): two
// servers started one after the other with the same pair run on the same
// data, as a restart would. Stop the first (a subtest's cleanup does)
// before starting the second: the store allows one process at a time.
// Such a server is Durable: data kept for the next start is what a restart
// test is about. On PostgreSQL (StoreEnv) the directory's database is
// found again the same way (OpenStore opens it between two servers).
func WithDataDir(dir, rootPassword string) Option {
	return func(o *options) { o.dataDir, o.rootPass, o.durable = dir, rootPassword, true }
}

// WithLogLevel shows log lines at level and above in the test output
// (default warn).
func WithLogLevel(level zapcore.Level) Option {
	return func(o *options) { o.level = level }
}

// WithOptions passes further options to fennec.New (for example
// fennec.WithAuthProvider).
func WithOptions(opts ...fennec.Option) Option {
	return func(o *options) { o.more = append(o.more, opts...) }
}

// WithExtract fills service pointers from the application (see
// fennec.WithExtract).
func WithExtract(targets ...any) Option {
	return func(o *options) { o.extract = append(o.extract, targets...) }
}

// Start runs the application and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := &options{level: zap.WarnLevel}
	if _, ok := t.(*testing.B); ok {
		o.durable = true
	}
	for _, opt := range opts {
		opt(o)
	}
	s := &Server{DataDir: o.dataDir, RootPassword: o.rootPass}
	if s.DataDir == "" {
		s.DataDir = t.TempDir()
	}
	if s.RootPassword == "" {
		s.RootPassword = "root-" + randomHex(8)
	}
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Data = s.DataDir
	cfg.ShutdownTimeout = 10 * time.Second
	cfg.NoSync = !o.durable
	// A data directory handed from server to server keeps its database
	// past the test that first started one there.
	cfg.Store = storeFor(t, s.DataDir, o.dataDir != "")
	// The identity module's section, set by key since core cannot import
	// the module (a test overrides them with WithModuleConfig).
	cfg.SetModule("identity", "root_password", s.RootPassword)
	cfg.SetModule("identity", "password_cost", 4) // bcrypt's minimum: logins stay fast under -race
	// Tests send many wrong passwords from one address on purpose; the
	// throttle's own tests restore the module's default.
	cfg.SetModule("identity", "sign_in_throttle", map[string]int{"login_failures": 1000, "address_failures": 10000})
	for _, fn := range o.configure {
		fn(&cfg)
	}
	logger := o.logger
	if logger == nil {
		logger = zaptest.NewLogger(t, zaptest.Level(o.level))
	}
	fopts := []fennec.Option{
		fennec.WithConfig(cfg),
		fennec.WithModules(o.modules...),
		fennec.WithLogger(logger),
		fennec.WithExtract(&s.provisioner, &s.Store, &s.bus),
	}
	if len(o.extract) > 0 {
		fopts = append(fopts, fennec.WithExtract(o.extract...))
	}
	fopts = append(fopts, o.more...)
	app, err := fennec.New(fopts...)
	if err != nil {
		t.Fatalf("fennectest: assemble app: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatalf("fennectest: start app: %v", err)
	}
	s.App = app
	s.URL = app.URL()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Errorf("fennectest: stop app: %v", err)
		}
		// A transaction opened inside another can deadlock the whole
		// server; the store's guard (race builds) records each one, even
		// where the panic was recovered into a 500.
		for _, v := range s.Store.Violations() {
			t.Errorf("fennectest: %s", v)
		}
	})
	if OnPostgres() && s.Store.Engine().Name() != "postgres" {
		// A suite said to run on PostgreSQL must not pass on bbolt.
		t.Fatalf("fennectest: %s=postgres, but the app's store is %s", StoreEnv, s.Store.Engine().Name())
	}
	s.RootToken = s.Login(t, "root", s.RootPassword)
	s.Client = s.NewClient(t, s.RootToken)
	return s
}

// Drain waits (up to 30 s) until every event published so far has been
// handled by its subscribers: what a test checks after a write that other
// modules act on through the outbox.
func (s *Server) Drain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.bus.Drain(ctx); err != nil {
		t.Fatalf("fennectest: drain the events: %v", err)
	}
}

// Login signs in through POST /session and returns the private token.
func (s *Server) Login(t testing.TB, login, password string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"login": login, "password": password})
	resp := s.Do(t, http.MethodPost, "/api/v4/session", bytes.NewReader(body), "Content-Type", "application/json")
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("fennectest: login %s: %s: %s", login, resp.Status, raw)
	}
	var out struct {
		PrivateToken string `json:"private_token"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.PrivateToken == "" {
		t.Fatalf("fennectest: login %s: no private_token in %s", login, raw)
	}
	return out.PrivateToken
}

// NewClient returns a client-go client using token as PRIVATE-TOKEN, without
// retries (so a 5xx fails the test at once instead of being retried).
func (s *Server) NewClient(t testing.TB, token string) *gitlab.Client {
	t.Helper()
	c, err := gitlab.NewClient(token, gitlab.WithBaseURL(s.URL+"/api/v4"), gitlab.WithoutRetries())
	if err != nil {
		t.Fatalf("fennectest: client: %v", err)
	}
	return c
}

// User is a test account.
type User struct {
	ID       int64
	Username string
	Email    string
	Password string
	// Token is a personal access token with the api scope.
	Token  string
	Client *gitlab.Client
}

// UserOption adjusts CreateUser.
type UserOption func(*auth.NewUser, *[]string)

// Admin makes the user an administrator.
func Admin() UserOption { return func(u *auth.NewUser, _ *[]string) { u.Admin = true } }

// External marks the user external.
func External() UserOption { return func(u *auth.NewUser, _ *[]string) { u.External = true } }

// Scopes sets the scopes of the user's token (default api).
func Scopes(scopes ...string) UserOption {
	return func(_ *auth.NewUser, s *[]string) { *s = scopes }
}

// CreateUser makes a user with a personal access token; an empty username
// picks a unique one.
func (s *Server) CreateUser(t testing.TB, username string, opts ...UserOption) *User {
	t.Helper()
	if username == "" {
		username = fmt.Sprintf("user%d", s.users.Add(1))
	}
	nu := auth.NewUser{
		Username: username, Email: strings.ToLower(username) + "@example.com",
		Name: "User " + username, Password: "pw-" + randomHex(8),
	}
	scopes := []string{auth.ScopeAPI}
	for _, o := range opts {
		o(&nu, &scopes)
	}
	ctx := context.Background()
	u, err := s.provisioner.CreateUser(ctx, nu)
	if err != nil {
		t.Fatalf("fennectest: create user %s: %v", username, err)
	}
	token, err := s.provisioner.CreateToken(ctx, u.ID, "fennectest", scopes)
	if err != nil {
		t.Fatalf("fennectest: token for %s: %v", username, err)
	}
	return &User{ID: u.ID, Username: nu.Username, Email: nu.Email, Password: nu.Password, Token: token, Client: s.NewClient(t, token)}
}

// Do sends a raw request to path (which starts with /) with header pairs
// ("Name", "value", ...). The caller closes the body.
func (s *Server) Do(t testing.TB, method, path string, body io.Reader, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatalf("fennectest: request: %v", err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("fennectest: %s %s: %v", method, path, err)
	}
	return resp
}

// JSON sends a raw request and decodes a JSON response into out (when not
// nil); it returns the response with its body already read and closed.
func (s *Server) JSON(t testing.TB, method, path string, body io.Reader, out any, headers ...string) (*http.Response, []byte) {
	t.Helper()
	resp := s.Do(t, method, path, body, headers...)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("fennectest: read body: %v", err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("fennectest: %s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp, raw
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
