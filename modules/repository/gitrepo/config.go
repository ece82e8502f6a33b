package gitrepo

// The repository module's settings: the "repository" section of the
// configuration (fennec.ModuleConfig). Their keys were top-level before
// sections, and still work there (toplevel), as do the old variable names.

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
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

// validateSSH checks the SSH server's settings.
func (c Config) validateSSH() error {
	if c.SSHListen != "" {
		if _, port, err := net.SplitHostPort(c.SSHListen); err != nil || !validPort(port, true) {
			return fmt.Errorf("config: repository.ssh_listen %q is not host:port", c.SSHListen)
		}
	}
	if c.SSHExternal != "" {
		if _, _, err := splitExternal(c.SSHExternal); err != nil {
			return err
		}
	}
	switch {
	case c.SSHMaxSessions <= 0:
		return errors.New("config: repository.ssh_max_sessions must be positive")
	case c.SSHMaxSessionsPerUser <= 0:
		return errors.New("config: repository.ssh_max_sessions_per_user must be positive")
	case c.SSHIdleTimeout <= 0:
		return errors.New("config: repository.ssh_idle_timeout must be positive")
	case c.SSHHandshakeTimeout <= 0:
		return errors.New("config: repository.ssh_handshake_timeout must be positive")
	case c.SSHMaxAuthTries <= 0:
		return errors.New("config: repository.ssh_max_auth_tries must be positive")
	case c.SSHMaxStartupsPerAddress <= 0:
		return errors.New("config: repository.ssh_max_startups_per_address must be positive")
	}
	_, err := parseStartups(c.SSHMaxStartups)
	return err
}

// Startups is ssh_max_startups read: from start connections not yet
// authenticated on, a new one is dropped with probability rate percent,
// rising linearly to 100 at full, where every new one is.
type Startups struct{ Start, Rate, Full int }

// parseStartups reads start:rate:full, or N for N:100:N.
func parseStartups(s string) (Startups, error) {
	bad := fmt.Errorf("config: repository.ssh_max_startups %q is not start:rate:full (such as 10:30:100) with 0 < start <= full and 0 < rate <= 100", s)
	parts := strings.Split(s, ":")
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || len(parts) > 3 {
			return Startups{}, bad
		}
		n[i] = v
	}
	var st Startups
	switch len(parts) {
	case 1:
		st = Startups{n[0], 100, n[0]}
	case 3:
		st = Startups{n[0], n[1], n[2]}
	default:
		return Startups{}, bad
	}
	if st.Start <= 0 || st.Start > st.Full || st.Rate <= 0 || st.Rate > 100 {
		return Startups{}, bad
	}
	return st, nil
}

// splitExternal reads ssh_external: host:port, or a host alone for port 22.
func splitExternal(s string) (string, int, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, "22"
	}
	if host == "" || !validPort(port, false) {
		return "", 0, fmt.Errorf("config: repository.ssh_external %q is not host:port", s)
	}
	n, _ := strconv.Atoi(port)
	return host, n, nil
}

func validPort(p string, zeroOK bool) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n <= 65535 && (n > 0 || (zeroOK && n == 0))
}

// MaxStartups is ssh_max_startups read (valid once Validate passed).
func (c Config) MaxStartups() (Startups, error) { return parseStartups(c.SSHMaxStartups) }

// External is ssh_external read: its host and port (22 when it names a
// host alone).
func (c Config) External() (host string, port int, err error) { return splitExternal(c.SSHExternal) }
