package internal

import (
	"net"
	"testing"
)

func TestParseStartups(t *testing.T) {
	for in, want := range map[string]startups{"10:30:100": {10, 30, 100}, "5": {5, 100, 5}, "1:100:1": {1, 100, 1}} {
		if got, err := parseStartups(in); err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0:30:10", "10:0:100", "10:101:100", "20:30:10", "1:2", "a:b:c", "1:2:3:4", "-1:30:10"} {
		if _, err := parseStartups(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// The admission of connections not yet authenticated: per source, then
// OpenSSH's early drop between start and full; an authenticated one gives
// its place back and counts under ssh_max_sessions instead.
func TestAdmitStartupsAndSessions(t *testing.T) {
	s := &SSHServer{cfg: Config{SSHMaxStartupsPerAddress: 3, SSHMaxSessions: 2}, perSource: map[string]int{}}
	s.startups, _ = parseStartups("4:50:8")
	draw := 0
	s.chance = func(n int) int {
		if n != 100 {
			t.Fatalf("drawn in [0, %d)", n)
		}
		return draw
	}
	admit := func(source string, want bool) {
		t.Helper()
		if why := s.admit(source); (why == "") != want {
			t.Fatalf("admit %s with %d open, draw %d: %q, want admitted %v", source, s.unauth, draw, why, want)
		}
	}
	draw = 0 // would drop anything a draw decides: below start nothing is drawn
	admit("a", true)
	admit("a", true)
	admit("a", true)
	admit("a", false) // its address holds all of its places
	admit("b", true)  // 4 open: start
	// From start, dropped with probability 50% rising to 100% at full.
	draw = 49
	admit("c", false)
	draw = 50
	admit("c", true) // 5 open: 62%
	draw = 61
	admit("d", false)
	draw = 62
	admit("d", true) // 6 open: 75%
	draw = 99
	admit("e", true) // 7 open: 87%
	admit("e", true) // 8 open: full
	admit("f", false)
	if s.unauth != 8 || s.perSource["a"] != 3 || s.perSource["e"] != 2 {
		t.Fatalf("open %d, per source %v", s.unauth, s.perSource)
	}

	// Authenticated: places given back, sessions counted apart.
	if !s.authenticated("a", true) || !s.authenticated("a", true) {
		t.Fatal("the first two sessions refused")
	}
	if s.authenticated("a", true) {
		t.Fatal("a third session over ssh_max_sessions 2 taken")
	}
	if s.authenticated("b", false) {
		t.Fatal("a failed handshake counted as a session")
	}
	if _, ok := s.perSource["a"]; s.unauth != 4 || ok || s.authed != 2 {
		t.Fatalf("open %d, per source %v, sessions %d", s.unauth, s.perSource, s.authed)
	}
	admit("a", true) // its places are free again, and 4 open is start: a draw of 99 passes
	s.closedSession()
	if s.authed != 1 {
		t.Fatalf("sessions %d", s.authed)
	}
}

func TestSourceOf(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:2222":              "192.0.2.7",
		"[::ffff:192.0.2.7]:2222":     "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:22":   "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:4444": "2001:db8:1:2::/64",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := sourceOf(a); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}
