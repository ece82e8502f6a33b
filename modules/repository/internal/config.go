package internal

// The repository module's settings: the "repository" section of the
// configuration (fennec.ModuleConfig). Their keys were top-level before
// sections, and still work there (toplevel), as do the old variable names.

import (
	"errors"
	"time"
)

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

	// The SSH server for git (sshserver.go): off while SSHListen is empty.
	SSHListen string `yaml:"ssh_listen" env:"FENNEC_SSH_LISTEN" flag:"ssh-listen" help:"address of the git SSH server, e.g. 127.0.0.1:2222 (port 0 picks a free one); off when empty"`
	// SSHExternal is host:port as clients reach the SSH server, for
	// ssh_url_to_repo.
	SSHExternal           string        `yaml:"ssh_external" env:"FENNEC_SSH_EXTERNAL" default:"the listen address (the external URL's host when listening on all addresses)" help:"host:port clients reach the git SSH server at, for ssh_url_to_repo"`
	SSHMaxSessions        int           `yaml:"ssh_max_sessions" help:"authenticated SSH connections open at once, in total (more are refused); connections still authenticating count under ssh_max_startups"`
	SSHMaxSessionsPerUser int           `yaml:"ssh_max_sessions_per_user" help:"git commands one user may run over SSH at once"`
	SSHIdleTimeout        time.Duration `yaml:"ssh_idle_timeout" help:"an SSH connection with no traffic either way for this long is closed"`
	SSHHandshakeTimeout   time.Duration `yaml:"ssh_handshake_timeout" help:"time an SSH connection has for its key exchange and authentication (the pre-authentication deadline)"`
	SSHMaxAuthTries       int           `yaml:"ssh_max_auth_tries" help:"public keys one SSH connection may try"`
	// SSHMaxStartups bounds the connections not yet authenticated, as
	// OpenSSH's MaxStartups: start:rate:full (or one number N, N:100:N).
	SSHMaxStartups string `yaml:"ssh_max_startups" help:"SSH connections not yet authenticated, start:rate:full as OpenSSH's MaxStartups: from start on a new one is dropped with probability rate%, rising to 100% at full"`
	// SSHMaxStartupsPerAddress bounds them per client address (per /64 for
	// IPv6), so one address cannot take the places of everyone.
	SSHMaxStartupsPerAddress int `yaml:"ssh_max_startups_per_address" help:"SSH connections not yet authenticated from one client address (one /64 for IPv6); more are closed at once"`
}

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config {
	return Config{MaxPushBytes: 2 << 30, HousekeepingPushes: 50, ReceiveFsckObjects: true,
		SSHMaxSessions: 256, SSHMaxSessionsPerUser: 16, SSHIdleTimeout: 10 * time.Minute,
		SSHHandshakeTimeout: 20 * time.Second, SSHMaxAuthTries: 6,
		SSHMaxStartups: "10:30:100", SSHMaxStartupsPerAddress: 5}
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.MaxPushBytes <= 0 {
		return errors.New("config: repository.max_push_bytes must be positive")
	}
	if c.HousekeepingPushes <= 0 {
		return errors.New("config: repository.housekeeping_pushes must be positive")
	}
	return c.validateSSH()
}
