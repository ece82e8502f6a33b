package main

import (
	"flag"
	"io"
	"math"
	"runtime/debug"
	"testing"

	"github.com/fennec-forge/fennec/core/config"
)

// serve's collector settings: memory_limit (128 MiB by default, from the
// file or FENNEC_MEMORY_LIMIT) becomes the runtime's soft memory limit and
// GOGC is 200, unless GOMEMLIMIT or GOGC is in the environment, which win.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	load := func(env map[string]string) config.Config {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cfg, err := config.NewFlags(fs).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cases := map[string]struct {
		env       map[string]string
		wantLimit int64
		wantGC    int
	}{
		"defaults":         {env: map[string]string{}, wantLimit: 128 << 20, wantGC: 200},
		"setting from env": {env: map[string]string{"FENNEC_MEMORY_LIMIT": "100000000"}, wantLimit: 100000000, wantGC: 200},
		"no limit":         {env: map[string]string{"FENNEC_MEMORY_LIMIT": "0"}, wantLimit: math.MaxInt64, wantGC: 200},
		"GOMEMLIMIT wins":  {env: map[string]string{"GOMEMLIMIT": "1GiB", "FENNEC_MEMORY_LIMIT": "1000"}, wantLimit: math.MaxInt64, wantGC: 200},
		"GOGC wins":        {env: map[string]string{"GOGC": "50"}, wantLimit: 128 << 20, wantGC: 100},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			// The runtime read GOGC and GOMEMLIMIT at start; here the
			// test's own values stand in for them: 100 and no limit.
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			tuneGC(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }, load(c.env).MemoryLimit)
			if got := debug.SetMemoryLimit(-1); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
			if got := debug.SetGCPercent(100); got != c.wantGC {
				t.Errorf("GOGC %d, want %d", got, c.wantGC)
			}
		})
	}
}

// A negative memory_limit is refused before anything opens.
func TestMemoryLimitNegative(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, err := config.NewFlags(fs).Load(func(k string) (string, bool) {
		if k == "FENNEC_MEMORY_LIMIT" {
			return "-1", true
		}
		return "", false
	})
	if err == nil {
		t.Fatal("memory_limit -1 accepted")
	}
}
