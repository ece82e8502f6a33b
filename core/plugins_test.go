package fennec_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/sdk/authprovider"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// staticProvider is an in-process provider made of function fields.
type staticProvider struct {
	authenticate func(login, password string) (authprovider.Identity, error)
}

func (staticProvider) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{Name: "static", Version: "1", APIVersions: []string{authprovider.APIVersion}}, nil
}
func (staticProvider) Configure(context.Context, []byte) error { return nil }
func (p staticProvider) Authenticate(_ context.Context, login, password string) (authprovider.Identity, error) {
	return p.authenticate(login, password)
}

// In-process providers come after the configured plugins; a plugin that
// cannot run (missing binary) or of a kind this host does not run is logged
// and left out, and the app starts anyway.
func TestAuthProvidersFromConfigAndEmbedder(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	config.Modify(&cfg, identity.SectionName, func(c *identity.Config) { c.PasswordCost = 4 })
	cfg.PluginDir = t.TempDir()
	cfg.Plugins = []config.Plugin{
		{Name: "ldapmain", Kind: "auth", Path: "auth-ldap"}, // not built into this empty dir
		{Name: "runner", Kind: "executor", Path: filepath.Join(cfg.PluginDir, "x")},
	}
	core, logs := observer.New(zapcore.DebugLevel)
	static := staticProvider{authenticate: func(login, password string) (authprovider.Identity, error) {
		if login == "ann" && password == "pw" {
			return authprovider.Identity{ExternalID: "ann", Username: "ann"}, nil
		}
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}}
	var providers fennec.AuthProviders
	var host *plugin.Host
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.New(core)),
		fennec.WithAuthProvider("static", static), fennec.WithExtract(&providers, &host))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer app.Stop(ctx)

	if len(providers) != 1 || providers[0].Name != "static" {
		t.Fatalf("providers = %v, want only the in-process one", providers)
	}
	if id, err := providers[0].Authenticate(ctx, "ann", "pw"); err != nil || id.ExternalID != "ann" {
		t.Fatalf("in-process provider: %+v, %v", id, err)
	}
	if _, err := providers[0].Authenticate(ctx, "ann", "no"); !errors.Is(err, authprovider.ErrInvalidCredentials) {
		t.Fatalf("in-process rejection: %v", err)
	}
	st := host.Status()
	if len(st) != 2 || st[0].State != plugin.StateFailed || st[1].State != plugin.StateFailed {
		t.Fatalf("status %+v", st)
	}
	if logs.FilterField(zap.String("plugin", "ldapmain")).FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
		t.Error("no error logged about the missing binary")
	}
	if logs.FilterField(zap.String("plugin", "runner")).FilterLevelExact(zapcore.WarnLevel).Len() == 0 {
		t.Error("no warning logged about the kind this host does not run")
	}
}

func TestAuthProviderNamesAreUnique(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	p := staticProvider{}
	_, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.NewNop()),
		fennec.WithAuthProvider("dup", p), fennec.WithAuthProvider("dup", p),
		fennec.WithExtract(new(fennec.AuthProviders)))
	if err == nil || !strings.Contains(err.Error(), `"dup" is registered twice`) {
		t.Fatalf("duplicate names: %v", err)
	}
}

// A module that registers a kind (fennec.PluginKind) gets its plugins run
// and routed by the same host; the kind needs no change in core/plugin.
func TestModuleRegistersAPluginKind(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	cfg.PluginDir = t.TempDir()
	cfg.Plugins = []config.Plugin{{Name: "runner", Kind: "executor", Path: filepath.Join(cfg.PluginDir, "x")}}
	core, logs := observer.New(zapcore.DebugLevel)
	var host *plugin.Host
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.New(core)),
		fennec.WithModules(fennec.NewModule("ci-skeleton", fennec.PluginKind(executor.Kind))),
		fennec.WithExtract(&host))
	if err != nil {
		t.Fatal(err)
	}
	_ = app
	st := host.Status()
	// Known now: refused for its missing binary (an error), not for its kind.
	if len(st) != 1 || st[0].State != plugin.StateFailed || strings.Contains(fmt.Sprint(st[0].Err), "unknown kind") {
		t.Fatalf("status %+v", st)
	}
	if logs.FilterField(zap.String("plugin", "runner")).FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
		t.Error("no error logged about the missing binary")
	}
}
