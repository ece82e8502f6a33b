package internal

import "github.com/fennec-forge/fennec/modules/repository/gitrepo"

// Config is the module's settings, defined in the contract (gitrepo).
type Config = gitrepo.Config

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config { return gitrepo.DefaultConfig() }
