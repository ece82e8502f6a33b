package internal

import "github.com/fennec-forge/fennec/modules/identity/settings"

// Config is the identity module's section, defined in package settings.
type Config = settings.Config

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config { return settings.Default() }
