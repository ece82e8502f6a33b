// Package netguard decides which network destinations Fennec may connect
// to on behalf of its users: a repository import (import_url), later the
// webhooks. Without it, anyone who may create a project can make the
// server fetch from its own loopback, the private network behind it or a
// cloud metadata service (169.254.169.254), and read the answer, or at
// least learn which ports are open.
//
// One Guard holds the policy (Config.AllowLocalRequests: off by default)
// and offers it in two places:
//
//   - CheckURL, the fast check of a URL a user gives: a host that is
//     literally a local or private address is refused at once, so the API
//     can answer 400. Names are not resolved here.
//   - Control, a net.Dialer.Control run on the address actually connected
//     to, after name resolution, for every attempt: a name that resolves
//     (or is rebound between two lookups) to a refused address fails there.
//     Dialer and Transport wrap it; Resolve pins a name to one checked
//     address for clients that cannot take a dialer.
//
// Refused: loopback, unspecified, private (RFC 1918, unique-local
// fc00::/7), shared (100.64.0.0/10), link-local (169.254.0.0/16 with the
// metadata services, fe80::/10), multicast, broadcast and reserved
// ranges, and the same IPv4 addresses embedded in IPv6 (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4).
//
// It imports only the standard library and knows no module.
package netguard
