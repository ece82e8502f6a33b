package fennec

// Module configuration: a module declares its settings struct with
// ModuleConfig and receives it, decoded, from fx. The section is recorded
// on the Module too (NewModule finds it among the options), so the host
// knows every loaded module's settings without assembling the app: for the
// strict top-level key check and the settings table.

import (
	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/config"
)

// ConfigSection is what ModuleConfig returns: an fx option that NewModule
// also reads.
type ConfigSection struct {
	fx.Option
	section config.Section
}

// ModuleConfig provides the module's settings of type T (a struct whose
// fields carry yaml, help and optionally env, default and toplevel tags;
// see core/config/section.go) decoded from the section name of the
// configuration over defaults: file < environment (FENNEC_<NAME>_<KEY>
// unless an env tag says otherwise) < serve's flag (flag tag) < values set
// with config.SetModule or config.Modify. Unknown keys in the section are
// an error, and so is whatever T's Validate() error method, if any,
// returns.
func ModuleConfig[T any](name string, defaults T) ConfigSection {
	return ConfigSection{
		Option: fx.Provide(func(cfg config.Config) (T, error) {
			v := defaults
			err := cfg.Decode(name, &v)
			return v, err
		}),
		section: config.Section{Name: name, Defaults: defaults},
	}
}

// ConfigSections are the settings sections of the module.
func (m Module) ConfigSections() []config.Section { return m.sections }

// Settings is the settings table of the core and of mods.
func Settings(mods ...Module) []config.Setting {
	return config.Settings(sectionsOf(mods))
}

func sectionsOf(mods []Module) []config.Section {
	var out []config.Section
	for _, m := range mods {
		out = append(out, m.sections...)
	}
	return out
}
