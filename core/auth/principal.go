package auth

import (
	"context"
	"slices"
)

// Token scopes.
const (
	ScopeAPI      = "api"
	ScopeReadUser = "read_user"
	ScopeSudo     = "sudo"
	// ScopeReadRepository allows git fetches over HTTP and nothing else (a
	// CI job's token).
	ScopeReadRepository = "read_repository"
)

// Method says how the caller proved who they are.
type Method string

const (
	MethodAnonymous     Method = ""
	MethodPrivateToken  Method = "private_token"
	MethodPersonal      Method = "personal_access_token"
	MethodImpersonation Method = "impersonation_token"
	MethodOAuth         Method = "oauth"
	MethodPassword      Method = "password"
	MethodJobToken      Method = "job_token"
	// MethodSession: the web session cookie of a browser signed in on the
	// server's pages (GET and HEAD only).
	MethodSession Method = "session"
	// MethodSystem: no credential; background work (System, ForUser).
	MethodSystem Method = "system"
)

// User is what the core needs to know about an account. Modules own the full
// record; this is a read-only summary.
type User struct {
	ID       int64
	Username string
	Admin    bool
	Blocked  bool
	External bool
}

// Principal is the caller of one request.
type Principal struct {
	// User is nil for anonymous callers.
	User   *User
	Method Method
	// Scopes of the token used; nil means unrestricted (password login).
	Scopes []string
	// TokenID identifies the token used, 0 when none.
	TokenID int64
	// Sudoer is the administrator who is acting as User through sudo.
	Sudoer *User
	// Impersonator is the administrator whose browser session acts as
	// User (the admin area's "Impersonate"): the pages show a banner to
	// stop it. Rights are User's alone; nil when nobody impersonates.
	Impersonator *User
	// Project, when not 0, is the one project the credential is for (a
	// CI job's token): on any other project the caller has no more rights
	// than an anonymous one. Git over HTTP, the only place such a token is
	// accepted (its scope is read_repository), applies it.
	Project int64

	// system marks the server's own principal (System). Unexported, so that
	// only this package makes one, and the Resolver refuses any principal
	// that carries it: no credential can yield it.
	system bool
}

// Anonymous is the principal of a request without credentials.
var anonymous = &Principal{}

// Anonymous returns the anonymous principal.
func Anonymous() *Principal { return anonymous }

// System returns the principal of the server itself, for background work
// that acts for no one (the CI scheduler, housekeeping, admin commands): it
// may do everything an administrator may. Its User has id 0 and name
// "system"; it authors nothing. Work done on behalf of a user runs as
// ForUser instead. A request never carries it (Resolver.Resolve refuses it).
func System() *Principal {
	return &Principal{User: &User{Username: "system", Admin: true}, Method: MethodSystem, system: true}
}

// IsSystem reports whether p is the server's own principal (System).
func (p *Principal) IsSystem() bool { return p != nil && p.system }

// ForUser returns the principal of background work done on behalf of u
// with no request behind it (a CI job runs with the rights of the user who
// started its pipeline): u's own rights, unrestricted by token scopes, and
// never sudo. A blocked user gets ErrUnauthorized, as their credentials
// would in a request. Find u with a UserLookup.
func ForUser(u *User) (*Principal, error) {
	if u == nil || u.Blocked {
		return nil, ErrUnauthorized
	}
	return &Principal{User: u, Method: MethodSystem}, nil
}

// IsAnonymous reports whether nobody signed in.
func (p *Principal) IsAnonymous() bool { return p == nil || p.User == nil }

// IsAdmin reports whether the (effective) user is an administrator.
func (p *Principal) IsAdmin() bool { return !p.IsAnonymous() && p.User.Admin }

// UserID is the effective user's id, 0 for anonymous.
func (p *Principal) UserID() int64 {
	if p.IsAnonymous() {
		return 0
	}
	return p.User.ID
}

// HasScope reports whether the credentials allow scope.
func (p *Principal) HasScope(scope string) bool {
	if p.IsAnonymous() || p.Scopes == nil {
		return true
	}
	return slices.Contains(p.Scopes, scope)
}

// AllowsAny reports whether the credentials carry at least one of scopes.
func (p *Principal) AllowsAny(scopes []string) bool {
	if p.IsAnonymous() || p.Scopes == nil || len(scopes) == 0 {
		return true
	}
	for _, s := range scopes {
		if slices.Contains(p.Scopes, s) {
			return true
		}
	}
	return false
}

type principalKey struct{}

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller stored by the API layer; anonymous when none.
func FromContext(ctx context.Context) *Principal {
	if p, ok := ctx.Value(principalKey{}).(*Principal); ok && p != nil {
		return p
	}
	return anonymous
}

type clientAddrKey struct{}

// WithClientAddr records the network address of the client (host or
// host:port) for the password checks of this request, which throttle
// failures per address.
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// ClientAddrFrom returns the address WithClientAddr recorded, "" when none.
func ClientAddrFrom(ctx context.Context) string {
	addr, _ := ctx.Value(clientAddrKey{}).(string)
	return addr
}
