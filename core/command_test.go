package fennec_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
)

// The CLI lists and dispatches the commands modules declare, without
// assembling the app; New refuses a module whose declared commands and
// built commands differ, so that list cannot lie.
func TestAdminCommandsAreDeclared(t *testing.T) {
	run := func(context.Context, []string, io.Writer) error { return nil }
	built := func(names ...string) func(fennec.None) []fennec.AdminCommand {
		return func(fennec.None) []fennec.AdminCommand {
			var out []fennec.AdminCommand
			for _, n := range names {
				out = append(out, fennec.AdminCommand{Name: n, Run: run})
			}
			return out
		}
	}
	spec := fennec.AdminCommandSpec{Name: "thing-check", Args: "ID", Summary: "checks a thing"}
	m := fennec.NewModule("thing", fennec.ProvideAdminCommands(built("thing-check"), spec))
	if got := m.AdminCommandSpecs(); len(got) != 1 || got[0].Name != spec.Name || got[0].Args != spec.Args || got[0].Summary != spec.Summary {
		t.Fatalf("specs: %+v", got)
	}
	for name, c := range map[string]struct {
		mod  fennec.Module
		want string
	}{
		"declared and built": {mod: m},
		"built only":         {mod: fennec.NewModule("thing", fennec.ProvideAdminCommands(built("thing-check", "thing-fix"), spec)), want: `"thing-fix" is not declared`},
		"declared only":      {mod: fennec.NewModule("thing", fennec.ProvideAdminCommands(built(), spec)), want: `"thing-check" is declared but not provided`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Listen, cfg.Data = "", t.TempDir()
			app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(c.mod), fennec.WithLogger(zap.NewNop()))
			if c.want == "" {
				if err != nil || len(app.Commands()) != 1 {
					t.Fatalf("%v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %s", err, c.want)
			}
		})
	}
}
