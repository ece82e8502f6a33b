package internal

import "github.com/fennec-forge/fennec/modules/repository/gitrepo"

// startups is ssh_max_startups read (gitrepo.Config.MaxStartups): from
// start connections not yet authenticated on, a new one is dropped with
// probability rate percent, rising linearly to 100 at full.
type startups struct{ start, rate, full int }

// parseStartups reads start:rate:full, or N for N:100:N.
func parseStartups(s string) (startups, error) {
	st, err := gitrepo.Config{SSHMaxStartups: s}.MaxStartups()
	return startups{st.Start, st.Rate, st.Full}, err
}

// splitExternal reads ssh_external: host:port, or a host alone for port 22.
func splitExternal(s string) (string, int, error) {
	return gitrepo.Config{SSHExternal: s}.External()
}
