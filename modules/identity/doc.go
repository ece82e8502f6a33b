// Package identity owns users, passwords, tokens and sessions: who someone
// is and how they prove it. It implements the core/auth interfaces
// (TokenResolver, PasswordAuthenticator, UserLookup, Provisioner), creates
// the administrator on first start, and serves POST /session and GET /user.
//
// Other modules use only this root package; the implementation in internal/
// is private to the module. It imports core packages only.
package identity
