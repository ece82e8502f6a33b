package internal

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

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

// startups is ssh_max_startups read: from start connections not yet
// authenticated on, a new one is dropped with probability rate percent,
// rising linearly to 100 at full, where every new one is.
type startups struct{ start, rate, full int }

// parseStartups reads start:rate:full, or N for N:100:N.
func parseStartups(s string) (startups, error) {
	bad := fmt.Errorf("config: repository.ssh_max_startups %q is not start:rate:full (such as 10:30:100) with 0 < start <= full and 0 < rate <= 100", s)
	parts := strings.Split(s, ":")
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || len(parts) > 3 {
			return startups{}, bad
		}
		n[i] = v
	}
	var st startups
	switch len(parts) {
	case 1:
		st = startups{n[0], 100, n[0]}
	case 3:
		st = startups{n[0], n[1], n[2]}
	default:
		return startups{}, bad
	}
	if st.start <= 0 || st.start > st.full || st.rate <= 0 || st.rate > 100 {
		return startups{}, bad
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
