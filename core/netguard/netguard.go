package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The reasons of a refusal, in GitLab's words (its UrlBlocker's).
const (
	ReasonLocalhost    = "Requests to localhost are not allowed"
	ReasonLocalNetwork = "Requests to the local network are not allowed"
	ReasonLinkLocal    = "Requests to the link local network are not allowed"
)

// ErrBlocked matches (errors.Is) every refusal of a destination.
var ErrBlocked = errors.New("netguard: destination not allowed")

// BlockedError is a refused destination. Its message is the Reason alone,
// fit to show the user who gave the URL.
type BlockedError struct {
	Addr   netip.Addr // what was refused; invalid when not an address
	Reason string
}

func (e *BlockedError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Guard is the policy of outbound connections. A nil or zero Guard refuses
// local destinations.
type Guard struct {
	allowLocal bool
}

// New returns the guard; allowLocal (Config.AllowLocalRequests) lets every
// destination through, for installations that import from or call hooks on
// their own network, and for tests.
func New(allowLocal bool) *Guard { return &Guard{allowLocal: allowLocal} }

// AllowsLocal reports whether local destinations are allowed.
func (g *Guard) AllowsLocal() bool { return g != nil && g.allowLocal }

// Check returns nil when ip may be connected to, a *BlockedError otherwise.
func (g *Guard) Check(ip netip.Addr) error {
	if g.AllowsLocal() {
		return nil
	}
	if r := classify(ip); r != "" {
		return &BlockedError{Addr: ip, Reason: r}
	}
	return nil
}

// CheckURL is the fast check of a URL a user gives: nil unless its host is
// literally a refused address (dotted, bracketed IPv6, or an old numeric
// IPv4 form such as 2130706433 or 0x7f.1, which resolvers still accept).
// Names are left to Control, at connect time.
func (g *Guard) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // not a URL: its caller's validation says so
	}
	if ip, ok := literalIP(u.Hostname()); ok {
		return g.Check(ip)
	}
	return nil
}

// Control is a net.Dialer.Control: it refuses to connect to a refused
// address. It runs on the address after resolution, for each attempt, so
// neither a name nor a rebinding of it gets around the policy.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	if g.AllowsLocal() {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Not an IP connection (a unix socket): nothing a user should reach.
		return &BlockedError{Reason: ReasonLocalhost}
	}
	return g.Check(ap.Addr())
}

// Dialer returns a dialer that connects only where the guard allows.
func (g *Guard) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 15 * time.Second, Control: g.Control}
}

// Transport returns an HTTP transport that connects only where the guard
// allows. It uses no proxy: through a proxy, the guard would check the
// proxy's address, not the destination's.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.Dialer().DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   2,
	}
}

// Resolve returns one address of host that the guard allows (host itself
// when it is an address), for clients that cannot take a dialer: they
// connect to that address, so what was checked is what is reached.
func (g *Guard) Resolve(ctx context.Context, host string) (netip.Addr, error) {
	if ip, ok := literalIP(host); ok {
		return ip, g.Check(ip)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, err
	}
	var first error
	for _, ip := range ips {
		err := g.Check(ip)
		if err == nil {
			return ip.Unmap(), nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return netip.Addr{}, first
}

var (
	sharedNet  = netip.MustParsePrefix("100.64.0.0/10")  // carrier-grade NAT
	ietfNet    = netip.MustParsePrefix("192.0.0.0/24")   // IETF protocol assignments
	benchNet   = netip.MustParsePrefix("198.18.0.0/15")  // benchmarking
	reserved4  = netip.MustParsePrefix("240.0.0.0/4")    // reserved, and broadcast
	siteLocal6 = netip.MustParsePrefix("fec0::/10")      // deprecated site-local
	nat64      = netip.MustParsePrefix("64:ff9b::/96")   // IPv4 behind NAT64
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64
	sixToFour  = netip.MustParsePrefix("2002::/16")      // 6to4: 2002:AABB:CCDD::/48
)

// classify returns why ip is refused, or "".
func classify(ip netip.Addr) string {
	if !ip.IsValid() {
		return ReasonLocalNetwork
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		if ip.IsUnspecified() || ip.IsLoopback() {
			return ReasonLocalhost
		}
		b := ip.As16()
		switch {
		case nat64Local.Contains(ip):
			return ReasonLocalNetwork
		case nat64.Contains(ip), isZero(b[:12]):
			// NAT64, or IPv4-compatible (::a.b.c.d): the IPv4 inside counts.
			return classify(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return classify(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case ip.IsUnspecified(), ip.IsLoopback(), ip.Is4() && ip.As4()[0] == 0:
		return ReasonLocalhost
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return ReasonLinkLocal
	case ip.IsPrivate(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast(),
		sharedNet.Contains(ip), ietfNet.Contains(ip), benchNet.Contains(ip), reserved4.Contains(ip), siteLocal6.Contains(ip):
		return ReasonLocalNetwork
	}
	return ""
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// numericPart is one part of an old-style IPv4 address: decimal, octal
// (leading 0) or hex (0x).
var numericPart = regexp.MustCompile(`^(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$`)

// literalIP parses host as an address: the standard forms, and the
// inet_aton forms (1 to 4 parts, each decimal, octal or hex; the last
// fills the remaining bytes) that C resolvers accept.
func literalIP(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(host, ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		if !numericPart.MatchString(p) {
			return netip.Addr{}, false
		}
		var err error
		switch {
		case p == "0x" || p == "0X":
			vals[i] = 0
		case len(p) > 2 && (p[1] == 'x' || p[1] == 'X'):
			vals[i], err = strconv.ParseUint(p[2:], 16, 64)
		case len(p) > 1 && p[0] == '0':
			vals[i], err = strconv.ParseUint(p[1:], 8, 64)
		default:
			vals[i], err = strconv.ParseUint(p, 10, 64)
		}
		if err != nil {
			return netip.Addr{}, false
		}
	}
	var v uint64
	for i, x := range vals[:len(vals)-1] {
		if x > 0xff {
			return netip.Addr{}, false
		}
		v |= x << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
