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
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the core's configuration; each module's settings are a section
// of their own (Modules, decoded by the module through Decode). Every field's
// tags feed the settings table (table.go): yaml, env, flag, help, and
// default where the default shown is not the value itself.
type Config struct {
	// Listen is the HTTP address, host:port. Port 0 picks a free port. Empty
	// means no listener: an embedder mounts App.Handler() in its own server.
	Listen string `yaml:"listen" env:"FENNEC_LISTEN" flag:"listen" help:"HTTP address; port 0 picks a free one"`
	// Data is the directory holding fennec.db, repositories, artifacts, ...
	Data string `yaml:"data" env:"FENNEC_DATA" flag:"data" help:"data directory (fennec.db, repositories, secret.key)"`
	// Store is where the store's data lives: empty for the bbolt file
	// fennec.db in Data, or a postgres:// URL for a PostgreSQL database,
	// which several nodes sharing Data may use at once.
	Store string `yaml:"store" env:"FENNEC_STORE" flag:"store" default:"the file fennec.db in data" help:"store: empty for fennec.db in the data directory, or a postgres:// URL (several nodes may share it)"`
	// LeaseTTL is how long the leader lease of nodes sharing a PostgreSQL
	// store lasts unless renewed (default 5s): about the longest the
	// leader's loops stay without a node after it dies.
	LeaseTTL time.Duration `yaml:"lease_ttl" help:"nodes sharing a store: how long the leader lease lasts unless renewed (a dead leader's loops move within about this)"`
	// ExternalURL is how clients reach this host (used in web_url and links).
	// Empty means http://<the address actually listened on>.
	ExternalURL string `yaml:"external_url" env:"FENNEC_EXTERNAL_URL" flag:"external-url" default:"http://<listen>" help:"how clients reach the server (web_url, Link headers)"`
	// LogLevel: debug, info, warn, error. LogFormat: console, json or auto.
	LogLevel  string `yaml:"log_level" env:"FENNEC_LOG_LEVEL" flag:"log-level" default:"info" help:"debug, info, warn, error"`
	LogFormat string `yaml:"log_format" env:"FENNEC_LOG_FORMAT" flag:"log-format" default:"console on a terminal, else json" help:"console or json"`

	// MaxBodyBytes limits API request bodies (413 past it). Default 10 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes" env:"FENNEC_MAX_BODY_BYTES" help:"API request body limit in bytes (413 past it)"`
	// MemoryLimit is the Go runtime's soft memory limit for fennec serve,
	// in bytes (debug.SetMemoryLimit): the collector runs harder as the
	// process nears it, so an idle server returns what a burst took.
	// GOMEMLIMIT in the environment wins; 0 sets none.
	MemoryLimit int64 `yaml:"memory_limit" env:"FENNEC_MEMORY_LIMIT" help:"soft memory limit of fennec serve in bytes (the Go collector works harder near it; GOMEMLIMIT wins; 0: none)"`
	// AllowLocalRequests lets the requests Fennec makes for its users
	// (import_url, webhooks, CI remote includes) reach loopback, private, link-local and other
	// local addresses (core/netguard). Off by default: such a request reads
	// the server's own network on the user's behalf. Tests and
	// installations that import from their own network turn it on.
	AllowLocalRequests bool `yaml:"allow_local_requests" env:"FENNEC_ALLOW_LOCAL_REQUESTS" help:"let import_url, webhooks and CI remote includes reach loopback, private and link-local addresses (names are checked again at connect time)"`
	// ReadHeaderTimeout closes connections that do not send their headers in
	// time (slowloris). IdleTimeout closes idle keep-alive connections.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout" help:"slow-header (slowloris) cut-off"`
	IdleTimeout       time.Duration `yaml:"idle_timeout" help:"idle keep-alive connections are closed after it"`
	// BodyReadTimeout is how long an API request body may take to start
	// arriving in full; bodies that keep coming at 32 KiB/s or more get
	// longer. A body that stops is answered 408 and its connection closed.
	BodyReadTimeout time.Duration `yaml:"body_read_timeout" help:"time for an API request body to arrive (longer for bodies that keep coming at 32 KiB/s); a body that stops gets 408 and its connection closed"`
	// ShutdownTimeout bounds how long SIGTERM waits for in-flight requests.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout" help:"how long SIGTERM waits for in-flight requests"`

	// Plugins are the out-of-process plugins to run, in order.
	Plugins []Plugin `yaml:"plugins" help:"out-of-process plugins, see Plugins below"`
	// PluginDir is where shipped plugins are found; default: "plugins" next
	// to the fennec binary.
	PluginDir string `yaml:"plugin_dir" default:"plugins next to the binary" help:"where shipped plugins are found"`

	// MetricsToken, when set, is required to read /-/metrics (as
	// "Authorization: Bearer <token>" or ?token=<token>). MetricsAllow lists
	// the client addresses (CIDRs or single IPs) that may read them. With
	// neither set only loopback may; with both, a caller needs both.
	MetricsToken string   `yaml:"metrics_token" env:"FENNEC_METRICS_TOKEN" help:"token /-/metrics requires (Authorization: Bearer <token> or ?token=); set it behind a reverse proxy on the same host, where every client looks like loopback"`
	MetricsAllow []string `yaml:"metrics_allow" env:"FENNEC_METRICS_ALLOW" default:"loopback if no token" help:"client addresses (CIDRs or IPs; comma-separated in the environment) that may read /-/metrics; with a token too, both are needed"`

	// NoSync turns off fsync of the store: for benchmarks and tests (the
	// test harness sets it unless a test asks for fennectest.Durable),
	// never for data you want to keep.
	NoSync bool `yaml:"-"`

	// Modules holds the file's other top-level keys: the modules' sections
	// (and the keys modules still accept where they were before sections),
	// decoded by each module through Decode and checked by CheckSections.
	Modules map[string]yaml.Node `yaml:",inline"`
	// Getenv reads the environment for module sections; nil reads none
	// (tests and embedders stay hermetic). Load sets it.
	Getenv func(string) (string, bool) `yaml:"-"`

	// overrides are SetModule and Modify, by section.
	overrides map[string][]func(any) error
}

// Plugin names one plugin process and its settings.
type Plugin struct {
	Name     string         `yaml:"name"`
	Kind     string         `yaml:"kind"`
	Path     string         `yaml:"path"`
	SHA256   string         `yaml:"sha256"`
	Settings map[string]any `yaml:"settings"`
}

// DefaultMemoryLimit is memory_limit's default, 128 MiB: a server's live
// heap is small (rows and objects are on disk, git data streams), about
// 10 MB at 10,000 projects; the repositories' object caches may hold 64
// MiB in all, and the limit leaves them that much again before the
// collector must work harder. Bursts above it (a large push, a big diff)
// still succeed, since the limit is soft.
const DefaultMemoryLimit = 128 << 20

// Default is the configuration with nothing set.
func Default() Config {
	return Config{
		Listen:            "127.0.0.1:8080",
		Data:              "./data",
		MaxBodyBytes:      10 << 20,
		MemoryLimit:       DefaultMemoryLimit,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BodyReadTimeout:   30 * time.Second,
		ShutdownTimeout:   30 * time.Second,
	}
}

// Env variables read by Load, with the flag each one mirrors.
var envNames = []struct{ env, flag string }{
	{"FENNEC_LISTEN", "listen"},
	{"FENNEC_DATA", "data"},
	{"FENNEC_STORE", "store"},
	{"FENNEC_EXTERNAL_URL", "external-url"},
	{"FENNEC_CONFIG", "config"},
	{"FENNEC_LOG_LEVEL", "log-level"},
	{"FENNEC_LOG_FORMAT", "log-format"},
}

// Flags are the command-line flags of `fennec serve`, bound to a FlagSet so
// the host can print them in its help.
type Flags struct {
	set                                                         *flag.FlagSet
	listen, data, store, externalURL, file, logLevel, logFormat *string
	modules                                                     []moduleFlag
}

// NewFlags registers the serve flags on fs: the core's, and those of the
// sections' settings that have a flag tag.
func NewFlags(fs *flag.FlagSet, sections ...Section) *Flags {
	d := Default()
	f := &Flags{
		set:         fs,
		listen:      fs.String("listen", d.Listen, "HTTP listen address, host:port (env FENNEC_LISTEN)"),
		data:        fs.String("data", d.Data, "data directory (env FENNEC_DATA)"),
		store:       fs.String("store", "", "store: empty for fennec.db in the data directory, or a postgres:// URL (env FENNEC_STORE)"),
		externalURL: fs.String("external-url", "", "URL clients use to reach this host; default http://<listen> (env FENNEC_EXTERNAL_URL)"),
		file:        fs.String("config", "", "optional YAML configuration file (env FENNEC_CONFIG)"),
		logLevel:    fs.String("log-level", "info", "log level: debug, info, warn, error (env FENNEC_LOG_LEVEL)"),
		logFormat:   fs.String("log-format", "", "log format: console or json; default console on a terminal (env FENNEC_LOG_FORMAT)"),
	}
	f.modules = moduleFlags(fs, sections)
	return f
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
	// Every core field with an env tag; the flags below then win.
	if err := applyEnv(reflect.ValueOf(&cfg).Elem(), "", getenv); err != nil {
		return Config{}, err
	}
	if v, ok := value("listen", *f.listen); ok {
		cfg.Listen = v
	}
	if v, ok := value("data", *f.data); ok {
		cfg.Data = v
	}
	if v, ok := value("store", *f.store); ok {
		cfg.Store = v
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
	cfg.Getenv = getenv
	for _, m := range f.modules {
		if set[m.name] {
			cfg.setString(m.section, m.key, m.name, *m.value)
		}
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
	if c.Store != "" && !strings.HasPrefix(c.Store, "postgres://") && !strings.HasPrefix(c.Store, "postgresql://") {
		return fmt.Errorf("config: store must be empty (the bbolt file) or a postgres:// URL")
	}
	if c.ExternalURL != "" {
		u, err := url.Parse(c.ExternalURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("config: external_url %q must be an absolute http(s) URL", c.ExternalURL)
		}
		c.ExternalURL = strings.TrimRight(c.ExternalURL, "/")
	}
	if c.MemoryLimit < 0 {
		return fmt.Errorf("config: memory_limit must be 0 (none) or a number of bytes")
	}
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("config: max_body_bytes must be positive")
	}
	if c.BodyReadTimeout <= 0 {
		return fmt.Errorf("config: body_read_timeout must be positive")
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
