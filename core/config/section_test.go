package config_test

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/config"
)

// sample is a module section shaped like the real ones: a key with an old
// top-level place and an old variable name, a nested struct, and a key with
// the generated variable name.
type sample struct {
	Limit   int64         `yaml:"limit" env:"FENNEC_OLD_LIMIT" toplevel:"true" help:"a limit"`
	Check   bool          `yaml:"check" help:"a switch"`
	Nested  nested        `yaml:"nested" toplevel:"true"`
	Timeout time.Duration `yaml:"timeout" help:"a duration"`
	Port    int           `yaml:"port" flag:"sample-port" help:"a setting with a flag"`
}

type nested struct {
	A int           `yaml:"a" help:"first"`
	W time.Duration `yaml:"w" help:"window"`
}

func (s sample) Validate() error {
	if s.Limit <= 0 {
		return errors.New("config: sample.limit must be positive")
	}
	return nil
}

var sampleDefaults = sample{Limit: 10, Check: true, Nested: nested{A: 1, W: time.Minute}, Timeout: time.Second, Port: 22}

var sampleSection = []config.Section{{Name: "sample", Defaults: sampleDefaults}}

func decode(t *testing.T, cfg config.Config) (sample, error) {
	t.Helper()
	if err := cfg.CheckSections(sampleSection); err != nil {
		return sample{}, err
	}
	v := sampleDefaults
	err := cfg.Decode("sample", &v)
	return v, err
}

// Precedence within a section: defaults < old top-level key < the section in
// the file < the environment (old name or FENNEC_<SECTION>_<KEY>) < values a
// host sets; flags are core's.
func TestSectionPrecedence(t *testing.T) {
	v, err := decode(t, config.Default())
	if err != nil || v != sampleDefaults {
		t.Fatalf("defaults: %+v %v", v, err)
	}

	file := writeFile(t, "limit: 20\nnested:\n  w: 5m\nsample:\n  check: false\n  nested:\n    a: 3\n")
	cfg, err := load(t, []string{"--config", file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err = decode(t, cfg)
	want := sample{Limit: 20, Check: false, Nested: nested{A: 3, W: 5 * time.Minute}, Timeout: time.Second, Port: 22}
	if err != nil || v != want {
		t.Fatalf("old top-level keys and the section, partial nested ones keep their defaults: %+v %v, want %+v", v, err, want)
	}

	if moved := cfg.MovedKeys(sampleSection); strings.Join(moved, ",") != "limit: sample.limit,nested: sample.nested" {
		t.Errorf("moved keys: %q", moved)
	}

	file = writeFile(t, "limit: 20\nsample:\n  limit: 30\n")
	env := map[string]string{"FENNEC_SAMPLE_TIMEOUT": "7s", "FENNEC_SAMPLE_NESTED_A": "9"}
	cfg, err = load(t, []string{"--config", file}, env)
	if err != nil {
		t.Fatal(err)
	}
	if v, err = decode(t, cfg); err != nil || v.Limit != 30 || v.Timeout != 7*time.Second || v.Nested.A != 9 {
		t.Fatalf("section over top level, generated variable names: %+v %v", v, err)
	}

	env["FENNEC_OLD_LIMIT"] = "40"
	cfg, _ = load(t, []string{"--config", file}, env)
	if v, err = decode(t, cfg); err != nil || v.Limit != 40 {
		t.Fatalf("the old variable name over the file: %+v %v", v, err)
	}

	cfg.SetModule("sample", "limit", 50)
	config.Modify(&cfg, "sample", func(s *sample) { s.Check = true })
	if v, err = decode(t, cfg); err != nil || v.Limit != 50 || !v.Check {
		t.Fatalf("SetModule and Modify over the environment: %+v %v", v, err)
	}
}

// A section's setting with a flag tag gets a serve flag, above the
// environment, listed with its default and variable.
func TestSectionFlags(t *testing.T) {
	parse := func(args []string, env map[string]string) (config.Config, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		flags := config.NewFlags(fs, sampleSection...)
		if err := fs.Parse(args); err != nil {
			return config.Config{}, err
		}
		if u := fs.Lookup("sample-port").Usage; !strings.Contains(u, "default 22") || !strings.Contains(u, "FENNEC_SAMPLE_PORT") {
			t.Errorf("usage %q", u)
		}
		return flags.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}
	env := map[string]string{"FENNEC_SAMPLE_PORT": "2222"}
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 2222}, {[]string{"--sample-port", "2200"}, 2200}} {
		cfg, err := parse(c.args, env)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := decode(t, cfg); err != nil || v.Port != c.want {
			t.Errorf("%v: port %d, %v; want %d", c.args, v.Port, err, c.want)
		}
	}
	cfg, err := parse([]string{"--sample-port", "many"}, nil)
	if err == nil {
		_, err = decode(t, cfg)
	}
	if err == nil || !strings.Contains(err.Error(), "--sample-port") {
		t.Fatalf("a bad flag value: %v", err)
	}
}

// Every section is as strict as the core: unknown keys, bad values and
// unknown top-level keys are errors, and Validate runs.
func TestSectionStrictness(t *testing.T) {
	cases := map[string]struct {
		file string
		env  map[string]string
		want string
	}{
		"unknown key in a section":  {file: "sample:\n  limti: 3\n", want: "section sample: line 2: field limti not found"},
		"unknown nested key":        {file: "sample:\n  nested:\n    b: 3\n", want: "line 3: field b not found"},
		"unknown old nested key":    {file: "listen: :1\nnested:\n  b: 3\n", want: "line 3: field b not found"},
		"unknown top-level key":     {file: "nonsense: 1\n", want: "unknown key nonsense"},
		"a section no module loads": {file: "ci:\n  x: 1\n", want: "unknown key ci"},
		"a bad value":               {file: "sample:\n  timeout: soon\n", want: "line 2: cannot unmarshal !!str `soon` into time.Duration"},
		"a bad variable":            {env: map[string]string{"FENNEC_OLD_LIMIT": "lots"}, want: "FENNEC_OLD_LIMIT"},
		"Validate":                  {file: "sample:\n  limit: 0\n", want: "sample.limit must be positive"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var args []string
			if c.file != "" {
				args = []string{"--config", writeFile(t, c.file)}
			}
			cfg, err := load(t, args, c.env)
			if err == nil {
				_, err = decode(t, cfg)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error mentioning %q, got %v", c.want, err)
			}
		})
	}

	cfg := config.Default()
	config.Modify(&cfg, "sample", func(s *string) {})
	if _, err := decode(t, cfg); err == nil || !strings.Contains(err.Error(), "not *string") {
		t.Fatalf("Modify with the wrong type: %v", err)
	}
	cfg = config.Default()
	cfg.SetModule("sample", "limti", 1)
	if _, err := decode(t, cfg); err == nil || !strings.Contains(err.Error(), "limti") {
		t.Fatalf("SetModule with an unknown key: %v", err)
	}
}

// Copies of a Config do not share later SetModule calls.
func TestSetModuleCopies(t *testing.T) {
	a := config.Default()
	a.SetModule("sample", "limit", 5)
	b := a
	b.SetModule("sample", "limit", 6)
	va, _ := decode(t, a)
	vb, _ := decode(t, b)
	if va.Limit != 5 || vb.Limit != 6 {
		t.Fatalf("a %d, b %d", va.Limit, vb.Limit)
	}
}

// The table lists core settings with their flags and variables, then each
// section's, nested keys flattened, generated variable names included.
func TestSettingsTable(t *testing.T) {
	rows := map[string]config.Setting{}
	for _, s := range config.Settings(sampleSection) {
		rows[s.Key] = s
	}
	for key, want := range map[string]config.Setting{
		"listen":               {Key: "listen", Env: "FENNEC_LISTEN", Flag: "listen", Default: "127.0.0.1:8080", Help: "HTTP address; port 0 picks a free one"},
		"idle_timeout":         {Key: "idle_timeout", Default: "2m", Help: "idle keep-alive connections are closed after it"},
		"sample.limit":         {Key: "sample.limit", Env: "FENNEC_OLD_LIMIT", Default: "10", Help: "a limit", TopLevel: "limit"},
		"sample.nested.w":      {Key: "sample.nested.w", Env: "FENNEC_SAMPLE_NESTED_W", Default: "1m", Help: "window", TopLevel: "nested"},
		"sample.check":         {Key: "sample.check", Env: "FENNEC_SAMPLE_CHECK", Default: "true", Help: "a switch"},
		"metrics_allow":        {Key: "metrics_allow", Env: "FENNEC_METRICS_ALLOW", Default: "loopback if no token", Help: rows["metrics_allow"].Help},
		"allow_local_requests": {Key: "allow_local_requests", Env: "FENNEC_ALLOW_LOCAL_REQUESTS", Default: "false", Help: rows["allow_local_requests"].Help},
	} {
		if rows[key] != want {
			t.Errorf("%s: %+v, want %+v", key, rows[key], want)
		}
	}
	for _, s := range config.Settings(sampleSection) {
		if s.Help == "" {
			t.Errorf("%s has no help text", s.Key)
		}
	}
}
