package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is everything a Fennec host is configured with.
type Config struct {
	// Listen is the HTTP address, host:port. Port 0 picks a free port. Empty
	// means no listener: an embedder mounts App.Handler() in its own server.
	Listen string `yaml:"listen"`
	// Data is the directory holding fennec.db, repositories, artifacts, ...
	Data string `yaml:"data"`
	// ExternalURL is how clients reach this host (used in web_url and links).
	// Empty means http://<the address actually listened on>.
	ExternalURL string `yaml:"external_url"`
	// LogLevel: debug, info, warn, error. LogFormat: console, json or auto.
	LogLevel  string `yaml:"log_level"`
	LogFormat string `yaml:"log_format"`
	// RootPassword is the password of the administrator created on first
	// start. Empty: a random one is generated and printed once.
	RootPassword string `yaml:"root_password"`

	// MaxBodyBytes limits API request bodies (413 past it). Default 10 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxPushBytes limits the pack of one git push (the push is refused past
	// it and nothing is kept). Default 2 GiB.
	MaxPushBytes int64 `yaml:"max_push_bytes"`
	// AllowLocalRequests lets the requests Fennec makes for its users
	// (import_url, webhooks) reach loopback, private, link-local and other
	// local addresses (core/netguard). Off by default: such a request reads
	// the server's own network on the user's behalf. Tests and
	// installations that import from their own network turn it on.
	AllowLocalRequests bool `yaml:"allow_local_requests"`
	// HousekeepingPushes is how many pushes to a repository start a
	// background repack of it (packs consolidated, reachability index
	// refreshed). Default 50; the nightly pass catches the rest.
	HousekeepingPushes int `yaml:"housekeeping_pushes"`
	// ReceiveFsckObjects makes git pushes check the trees they bring as git
	// fsck does: a tree entry named .git in any disguise (hasDotgit), ".",
	// ".." or empty refuses the push. Default on; turn it off only to take
	// history that already holds such trees.
	ReceiveFsckObjects bool `yaml:"receive_fsck_objects"`
	// ReadHeaderTimeout closes connections that do not send their headers in
	// time (slowloris). IdleTimeout closes idle keep-alive connections.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	// BodyReadTimeout is how long an API request body may take to start
	// arriving in full; bodies that keep coming at 32 KiB/s or more get
	// longer. A body that stops is answered 408 and its connection closed.
	BodyReadTimeout time.Duration `yaml:"body_read_timeout"`
	// ShutdownTimeout bounds how long SIGTERM waits for in-flight requests.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`

	// Plugins are the out-of-process plugins to run, in order.
	Plugins []Plugin `yaml:"plugins"`
	// PluginDir is where shipped plugins are found; default: "plugins" next
	// to the fennec binary.
	PluginDir string `yaml:"plugin_dir"`

	// DirectorySyncInterval is how often users of external auth providers
	// (LDAP) are checked against the directory; those who left are blocked.
	// Default 1h; the first check runs after one interval or one minute,
	// whichever is shorter.
	DirectorySyncInterval time.Duration `yaml:"directory_sync_interval"`

	// MetricsToken, when set, is required to read /-/metrics (as
	// "Authorization: Bearer <token>" or ?token=<token>). MetricsAllow lists
	// the client addresses (CIDRs or single IPs) that may read them. With
	// neither set only loopback may; with both, a caller needs both.
	MetricsToken string   `yaml:"metrics_token"`
	MetricsAllow []string `yaml:"metrics_allow"`

	// PasswordCost is the bcrypt cost for new password hashes (4-31,
	// default 10). Test harnesses lower it; production should not.
	PasswordCost int `yaml:"password_cost"`

	// SignInThrottle limits failed password attempts (POST /session, basic
	// auth on the API and git).
	SignInThrottle SignInThrottle `yaml:"sign_in_throttle"`

	// NoSync turns off fsync of the store: for benchmarks only, never for
	// data you want to keep.
	NoSync bool `yaml:"-"`
}

// SignInThrottle: after LoginFailures failed attempts for one login, or
// AddressFailures from one client address (an IPv6 /64), within Window,
// further attempts are refused (429) without checking the password until
// Window has passed since the failure that set the lock. 0 turns a limit
// off (for instance AddressFailures behind a reverse proxy, where every
// client has the proxy's address).
type SignInThrottle struct {
	LoginFailures   int           `yaml:"login_failures"`
	AddressFailures int           `yaml:"address_failures"`
	Window          time.Duration `yaml:"window"`
}

// Plugin names one plugin process and its settings.
type Plugin struct {
	Name     string         `yaml:"name"`
	Kind     string         `yaml:"kind"`
	Path     string         `yaml:"path"`
	SHA256   string         `yaml:"sha256"`
	Settings map[string]any `yaml:"settings"`
}

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		Listen:             "127.0.0.1:8080",
		Data:               "./data",
		MaxBodyBytes:       10 << 20,
		MaxPushBytes:       2 << 30,
		HousekeepingPushes: 50,
		ReceiveFsckObjects: true,
		ReadHeaderTimeout:  10 * time.Second,
		IdleTimeout:        2 * time.Minute,
		BodyReadTimeout:    30 * time.Second,
		ShutdownTimeout:    30 * time.Second,
		PasswordCost:       10,

		DirectorySyncInterval: time.Hour,
		// GitLab locked an account for 10 minutes after 10 failures.
		SignInThrottle: SignInThrottle{LoginFailures: 10, AddressFailures: 50, Window: 10 * time.Minute},
	}
}

// Env variables read by Load, with the flag each one mirrors.
var envNames = []struct{ env, flag string }{
	{"FENNEC_LISTEN", "listen"},
	{"FENNEC_DATA", "data"},
	{"FENNEC_EXTERNAL_URL", "external-url"},
	{"FENNEC_CONFIG", "config"},
	{"FENNEC_LOG_LEVEL", "log-level"},
	{"FENNEC_LOG_FORMAT", "log-format"},
}

// Flags are the command-line flags of `fennec serve`, bound to a FlagSet so
// the host can print them in its help.
type Flags struct {
	set                                                  *flag.FlagSet
	listen, data, externalURL, file, logLevel, logFormat *string
}

// NewFlags registers the serve flags on fs.
func NewFlags(fs *flag.FlagSet) *Flags {
	d := Default()
	return &Flags{
		set:         fs,
		listen:      fs.String("listen", d.Listen, "HTTP listen address, host:port (env FENNEC_LISTEN)"),
		data:        fs.String("data", d.Data, "data directory (env FENNEC_DATA)"),
		externalURL: fs.String("external-url", "", "URL clients use to reach this host; default http://<listen> (env FENNEC_EXTERNAL_URL)"),
		file:        fs.String("config", "", "optional YAML configuration file (env FENNEC_CONFIG)"),
		logLevel:    fs.String("log-level", "info", "log level: debug, info, warn, error (env FENNEC_LOG_LEVEL)"),
		logFormat:   fs.String("log-format", "", "log format: console or json; default console on a terminal (env FENNEC_LOG_FORMAT)"),
	}
}

// Load builds the Config: defaults, then the YAML file (from --config or
// FENNEC_CONFIG), then FENNEC_* variables, then flags set on the command line.
// getenv is os.LookupEnv in production; tests pass their own.
func (f *Flags) Load(getenv func(string) (string, bool)) (Config, error) {
	set := map[string]bool{}
	f.set.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	value := func(name string, flagValue string) (string, bool) {
		if set[name] {
			return flagValue, true
		}
		for _, e := range envNames {
			if e.flag == name {
				if v, ok := getenv(e.env); ok && v != "" {
					return v, true
				}
			}
		}
		return "", false
	}

	cfg := Default()
	if path, ok := value("config", *f.file); ok {
		if err := cfg.loadFile(path); err != nil {
			return Config{}, err
		}
	}
	if v, ok := value("listen", *f.listen); ok {
		cfg.Listen = v
	}
	if v, ok := value("data", *f.data); ok {
		cfg.Data = v
	}
	if v, ok := value("external-url", *f.externalURL); ok {
		cfg.ExternalURL = v
	}
	if v, ok := value("log-level", *f.logLevel); ok {
		cfg.LogLevel = v
	}
	if v, ok := value("log-format", *f.logFormat); ok {
		cfg.LogFormat = v
	}
	if v, ok := getenv("FENNEC_ROOT_PASSWORD"); ok && v != "" {
		cfg.RootPassword = v
	}
	if v, ok := getenv("FENNEC_MAX_BODY_BYTES"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("config: FENNEC_MAX_BODY_BYTES: %w", err)
		}
		cfg.MaxBodyBytes = n
	}
	if v, ok := getenv("FENNEC_MAX_PUSH_BYTES"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("config: FENNEC_MAX_PUSH_BYTES: %w", err)
		}
		cfg.MaxPushBytes = n
	}
	if v, ok := getenv("FENNEC_RECEIVE_FSCK_OBJECTS"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("config: FENNEC_RECEIVE_FSCK_OBJECTS: %w", err)
		}
		cfg.ReceiveFsckObjects = b
	}
	if v, ok := getenv("FENNEC_ALLOW_LOCAL_REQUESTS"); ok && v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("config: FENNEC_ALLOW_LOCAL_REQUESTS: %w", err)
		}
		cfg.AllowLocalRequests = b
	}
	if v, ok := getenv("FENNEC_METRICS_TOKEN"); ok && v != "" {
		cfg.MetricsToken = v
	}
	if v, ok := getenv("FENNEC_METRICS_ALLOW"); ok && v != "" {
		cfg.MetricsAllow = strings.Split(v, ",")
	}
	return cfg, cfg.Validate()
}

func (c *Config) loadFile(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) { // an empty file sets nothing
		return fmt.Errorf("config: %s: %w", path, err)
	}
	return nil
}

// Validate checks the values that would otherwise fail late or obscurely.
func (c *Config) Validate() error {
	if c.Listen == "" {
		// No listener: an embedder serves App.Handler() itself.
	} else if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("config: listen %q is not host:port: %w", c.Listen, err)
	}
	if strings.TrimSpace(c.Data) == "" {
		return errors.New("config: data directory is empty")
	}
	if c.ExternalURL != "" {
		u, err := url.Parse(c.ExternalURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("config: external_url %q must be an absolute http(s) URL", c.ExternalURL)
		}
		c.ExternalURL = strings.TrimRight(c.ExternalURL, "/")
	}
	if c.DirectorySyncInterval <= 0 {
		return fmt.Errorf("config: directory_sync_interval must be positive")
	}
	if c.PasswordCost < 4 || c.PasswordCost > 31 {
		return fmt.Errorf("config: password_cost must be between 4 and 31")
	}
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("config: max_body_bytes must be positive")
	}
	if c.MaxPushBytes <= 0 {
		return fmt.Errorf("config: max_push_bytes must be positive")
	}
	if c.BodyReadTimeout <= 0 {
		return fmt.Errorf("config: body_read_timeout must be positive")
	}
	if c.HousekeepingPushes <= 0 {
		return fmt.Errorf("config: housekeeping_pushes must be positive")
	}
	if t := c.SignInThrottle; t.LoginFailures < 0 || t.AddressFailures < 0 || t.Window <= 0 {
		return fmt.Errorf("config: sign_in_throttle needs login_failures and address_failures of 0 or more and a positive window")
	}
	if _, err := c.MetricsPrefixes(); err != nil {
		return err
	}
	for i, p := range c.Plugins {
		if p.Name == "" || p.Kind == "" {
			return fmt.Errorf("config: plugin %d needs a name and a kind", i+1)
		}
	}
	return nil
}

// MetricsPrefixes parses MetricsAllow: CIDRs, or single addresses as /32
// and /128.
func (c *Config) MetricsPrefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(c.MetricsAllow))
	for _, s := range c.MetricsAllow {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("config: metrics_allow: %q is neither a CIDR nor an IP address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// ExternalURLFor is the external URL to use when the server listens on addr
// and none was configured.
func ExternalURLFor(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
