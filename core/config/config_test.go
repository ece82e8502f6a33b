package config_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/config"
)

func load(t *testing.T, args []string, env map[string]string) (config.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	flags := config.NewFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return flags.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fennec.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	cfg, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.Data != "./data" || cfg.ExternalURL != "" || cfg.MaxBodyBytes != 10<<20 {
		t.Fatalf("defaults: %+v", cfg)
	}
	if got := config.ExternalURLFor("127.0.0.1:8080"); got != "http://127.0.0.1:8080" {
		t.Fatalf("external URL default: %s", got)
	}
	if got := config.ExternalURLFor("0.0.0.0:9000"); got != "http://localhost:9000" {
		t.Fatalf("external URL for a wildcard listen: %s", got)
	}
}

func TestPrecedenceFlagsOverEnvOverFile(t *testing.T) {
	file := writeFile(t, "listen: 127.0.0.1:1111\ndata: /from/file\nexternal_url: https://file.example\nlog_level: warn\nshutdown_timeout: 5s\n")

	cfg, err := load(t, []string{"--config", file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:1111" || cfg.Data != "/from/file" || cfg.ExternalURL != "https://file.example" || cfg.LogLevel != "warn" || cfg.ShutdownTimeout != 5*time.Second {
		t.Fatalf("file: %+v", cfg)
	}

	env := map[string]string{"FENNEC_LISTEN": "127.0.0.1:2222", "FENNEC_DATA": "/from/env", "FENNEC_CONFIG": file}
	cfg, err = load(t, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:2222" || cfg.Data != "/from/env" || cfg.ExternalURL != "https://file.example" {
		t.Fatalf("env over file: %+v", cfg)
	}

	cfg, err = load(t, []string{"--listen", "127.0.0.1:3333", "--external-url", "https://flag.example/"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:3333" || cfg.Data != "/from/env" || cfg.ExternalURL != "https://flag.example" {
		t.Fatalf("flags over env: %+v", cfg)
	}
}

func TestBadConfiguration(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"listen without port":     {args: []string{"--listen", "localhost"}, want: "listen"},
		"relative external url":   {args: []string{"--external-url", "example.com"}, want: "external_url"},
		"ftp external url":        {args: []string{"--external-url", "ftp://example.com"}, want: "external_url"},
		"missing config file":     {args: []string{"--config", "/nonexistent/fennec.yaml"}, want: "no such file"},
		"malformed yaml":          {args: []string{"--config", ""}, want: "yaml"},
		"bad body limit from env": {env: map[string]string{"FENNEC_MAX_BODY_BYTES": "lots"}, want: "FENNEC_MAX_BODY_BYTES"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			args := c.args
			if len(args) == 2 && args[0] == "--config" && args[1] == "" {
				text := "nonsense: 1\n"
				if name == "malformed yaml" {
					text = "listen: [unclosed\n"
				}
				args = []string{"--config", writeFile(t, text)}
			}
			_, err := load(t, args, c.env)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error mentioning %q, got %v", c.want, err)
			}
		})
	}
}

func TestEmptyFileSetsNothing(t *testing.T) {
	cfg, err := load(t, []string{"--config", writeFile(t, "")}, nil)
	if err != nil || cfg.Listen != "127.0.0.1:8080" {
		t.Fatalf("%v %+v", err, cfg)
	}
}
