package internal

import (
	"errors"
	"fmt"
	"net"
	"strconv"
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
	}
	return nil
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
