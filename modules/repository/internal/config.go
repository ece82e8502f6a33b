package internal

// The repository module's settings: the "repository" section of the
// configuration (fennec.ModuleConfig). Their keys were top-level before
// sections, and still work there (toplevel), as do the old variable names.

import "errors"

// Config is the repository module's section.
type Config struct {
	// MaxPushBytes limits the pack of one git push or import (refused past
	// it, and nothing is kept).
	MaxPushBytes int64 `yaml:"max_push_bytes" env:"FENNEC_MAX_PUSH_BYTES" toplevel:"true" help:"largest pack one git push (or import) may send, in bytes (refused whole past it)"`
	// HousekeepingPushes is how many pushes to a repository start a
	// background repack of it; the nightly pass catches the rest.
	HousekeepingPushes int `yaml:"housekeeping_pushes" toplevel:"true" help:"pushes to a repository that start a background repack"`
	// ReceiveFsckObjects makes git pushes check the trees they bring as git
	// fsck does. Turn it off only to take history that already holds such
	// trees.
	ReceiveFsckObjects bool `yaml:"receive_fsck_objects" env:"FENNEC_RECEIVE_FSCK_OBJECTS" toplevel:"true" help:"pushes bringing a tree entry git refuses (.git in any case or HFS/NTFS disguise, ., ..) are rejected"`
}

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config {
	return Config{MaxPushBytes: 2 << 30, HousekeepingPushes: 50, ReceiveFsckObjects: true}
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.MaxPushBytes <= 0 {
		return errors.New("config: repository.max_push_bytes must be positive")
	}
	if c.HousekeepingPushes <= 0 {
		return errors.New("config: repository.housekeeping_pushes must be positive")
	}
	return nil
}
