package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// TokenKind says where a token came from, so resolvers only see tokens that
// could be theirs.
type TokenKind int

const (
	// KindPrivate: PRIVATE-TOKEN header or private_token parameter (private,
	// personal access or impersonation token).
	KindPrivate TokenKind = iota
	// KindOAuth: Authorization: Bearer or access_token parameter.
	KindOAuth
	// KindBasic: the password half of HTTP basic auth used as a token (git).
	KindBasic
	// KindSession: the web session cookie (SessionCookie), sent by a
	// browser signed in on the server's pages. Read for GET and HEAD only.
	KindSession
)

// SessionCookie is the name of the web session cookie. The API honours it
// for GET and HEAD requests only (GitLab's rule): a cookie rides along with
// any cross-site form a browser submits, so accepting it on writes would
// open a CSRF hole in an API that has no CSRF tokens.
const SessionCookie = "_fennec_session"

// TokenResolver turns a secret into a principal. It returns ErrUnknownToken
// when the secret is not one of its tokens and ErrUnauthorized when it is but
// may not be used (expired, revoked, blocked user).
type TokenResolver interface {
	ResolveToken(ctx context.Context, kind TokenKind, secret string) (*Principal, error)
}

// PasswordAuthenticator checks a login (username or e-mail) and password.
// It may refuse with a *ThrottledError before checking anything; the
// client's address is in ctx (ClientAddrFrom).
type PasswordAuthenticator interface {
	AuthenticatePassword(ctx context.Context, login, password string) (*User, error)
}

// UserLookup finds a user by numeric id or username, for sudo.
type UserLookup interface {
	LookupUser(ctx context.Context, idOrUsername string) (*User, error)
}

// Credentials are what one request carries.
type Credentials struct {
	PrivateToken string
	BearerToken  string
	BasicUser    string
	BasicPass    string
	HasBasic     bool
	// Session is the web session cookie's value, read for GET and HEAD
	// requests only; the weakest credential, used when no other is sent.
	Session string
	Sudo    string
	// Addr is the client's address (http.Request.RemoteAddr), passed to
	// password checks so they can throttle failures per address.
	Addr string
}

// Empty reports whether no credential was sent.
func (c Credentials) Empty() bool {
	return c.PrivateToken == "" && c.BearerToken == "" && !c.HasBasic && c.Session == ""
}

// CredentialsFrom reads the headers of r; param reads a request parameter
// (query or merged body) for private_token, access_token and sudo.
func CredentialsFrom(r *http.Request, param func(string) string) Credentials {
	c := Credentials{
		PrivateToken: r.Header.Get("Private-Token"),
		Sudo:         r.Header.Get("Sudo"),
		Addr:         r.RemoteAddr,
	}
	if c.PrivateToken == "" && param != nil {
		c.PrivateToken = param("private_token")
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		c.BearerToken = strings.TrimSpace(h[7:])
	}
	if c.BearerToken == "" && param != nil {
		c.BearerToken = param("access_token")
	}
	if u, p, ok := r.BasicAuth(); ok {
		c.BasicUser, c.BasicPass, c.HasBasic = u, p, true
	}
	if c.Sudo == "" && param != nil {
		c.Sudo = param("sudo")
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if ck, err := r.Cookie(SessionCookie); err == nil {
			c.Session = ck.Value
		}
	}
	return c
}

// Resolver resolves credentials with the resolvers the modules provide.
type Resolver struct {
	Tokens    []TokenResolver
	Passwords PasswordAuthenticator
	Users     UserLookup
}

// Resolve returns the principal for c, applying sudo. No credentials give the
// anonymous principal; bad credentials give ErrUnauthorized.
func (r *Resolver) Resolve(ctx context.Context, c Credentials) (*Principal, error) {
	p, err := r.resolve(ctx, c)
	if err != nil {
		return nil, err
	}
	if c.Sudo != "" {
		if p, err = r.sudo(ctx, p, c.Sudo); err != nil {
			return nil, err
		}
	}
	// Background principals belong to the server's own work; a resolver
	// that hands one out for a credential is a bug, and must not make that
	// credential all-powerful.
	if p.IsSystem() || p.Method == MethodSystem {
		return nil, ErrUnauthorized
	}
	return p, nil
}

func (r *Resolver) resolve(ctx context.Context, c Credentials) (*Principal, error) {
	switch {
	case c.PrivateToken != "":
		return r.token(ctx, KindPrivate, c.PrivateToken)
	case c.BearerToken != "":
		return r.token(ctx, KindOAuth, c.BearerToken)
	case c.HasBasic:
		return r.basic(WithClientAddr(ctx, c.Addr), c.BasicUser, c.BasicPass)
	case c.Session != "":
		// A browser keeps a cookie after its session ended (signed out
		// elsewhere, expired, revoked): it browses on as anonymous, as a
		// signed-out browser would, instead of being refused outright.
		p, err := r.token(ctx, KindSession, c.Session)
		if errors.Is(err, ErrUnauthorized) {
			return anonymous, nil
		}
		return p, err
	}
	return anonymous, nil
}

func (r *Resolver) token(ctx context.Context, kind TokenKind, secret string) (*Principal, error) {
	for _, tr := range r.Tokens {
		p, err := tr.ResolveToken(ctx, kind, secret)
		if errors.Is(err, ErrUnknownToken) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if p.User == nil || p.User.Blocked {
			return nil, ErrUnauthorized
		}
		return p, nil
	}
	return nil, ErrUnauthorized
}

// basic accepts a username + password, or any username with a token as the
// password (git clients), as GitLab does.
func (r *Resolver) basic(ctx context.Context, user, pass string) (*Principal, error) {
	if pass == "" {
		return nil, ErrUnauthorized
	}
	// Resolvers whose tokens go with one user name (a CI job's token
	// with gitlab-ci-token) read it with BasicUserFrom.
	ctx = context.WithValue(ctx, basicUserKey{}, user)
	for _, tr := range r.Tokens {
		p, err := tr.ResolveToken(ctx, KindBasic, pass)
		if errors.Is(err, ErrUnknownToken) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if p.User == nil || p.User.Blocked {
			return nil, ErrUnauthorized
		}
		return p, nil
	}
	if r.Passwords == nil {
		return nil, ErrUnauthorized
	}
	// A *ThrottledError passes through as it is, so the API can answer 429.
	u, err := r.Passwords.AuthenticatePassword(ctx, user, pass)
	if err != nil {
		if errors.Is(err, ErrInvalidPassword) {
			return nil, ErrUnauthorized
		}
		return nil, err
	}
	if u.Blocked {
		return nil, ErrUnauthorized
	}
	return &Principal{User: u, Method: MethodPassword}, nil
}

type basicUserKey struct{}

// BasicUserFrom is the user name sent with a KindBasic token, for a
// TokenResolver whose tokens are valid with one name only.
func BasicUserFrom(ctx context.Context) string {
	u, _ := ctx.Value(basicUserKey{}).(string)
	return u
}

// Sudo refusals, in GitLab's words.
var (
	errSudoNotAdmin = Forbidden("Must be admin to use sudo")
	errSudoNotToken = Forbidden("Private token must be specified in order to use sudo")
)

// MaySudo reports whether the credentials behind p may act as another user
// (p's user must be an administrator too). Sudo turns a token into every
// user's rights, so only credentials meant for it qualify: a token with the
// sudo scope (GitLab 10.2+: personal access, impersonation and OAuth tokens)
// or the user's private token, which carries full rights (GitLab 9.x).
// Never a read_user or api-only token, a password or a job token.
func MaySudo(p *Principal) bool {
	switch p.Method {
	case MethodPrivateToken:
		return true
	case MethodPersonal, MethodImpersonation, MethodOAuth:
		// Not HasScope: nil scopes mean "unrestricted" there, and a resolver
		// that forgot to set them must not get sudo for free.
		return slices.Contains(p.Scopes, ScopeSudo)
	}
	return false
}

func (r *Resolver) sudo(ctx context.Context, p *Principal, target string) (*Principal, error) {
	if p.IsAnonymous() {
		return nil, ErrUnauthorized
	}
	if !p.User.Admin {
		return nil, errSudoNotAdmin
	}
	// Checked before the lookup, so a token that may not sudo cannot probe
	// which users exist.
	if !MaySudo(p) {
		return nil, errSudoNotToken
	}
	if r.Users == nil {
		return nil, &SudoNotFoundError{Value: target}
	}
	u, err := r.Users.LookupUser(ctx, target)
	if errors.Is(err, ErrUserNotFound) {
		return nil, &SudoNotFoundError{Value: target}
	}
	if err != nil {
		return nil, err
	}
	return &Principal{User: u, Method: p.Method, Scopes: p.Scopes, TokenID: p.TokenID, Sudoer: p.User}, nil
}

// ParseUserRef tells a numeric user id from a username.
func ParseUserRef(s string) (id int64, username string) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return n, ""
	}
	return 0, s
}

// NewUser is what Provisioner.CreateUser needs.
type NewUser struct {
	Username, Email, Name, Password string
	Admin, External                 bool
}

// Provisioner creates accounts and tokens without going through the API: for
// first-start bootstrapping, admin commands and test harnesses.
type Provisioner interface {
	CreateUser(ctx context.Context, u NewUser) (*User, error)
	// CreateToken issues a personal access token and returns its secret.
	CreateToken(ctx context.Context, userID int64, name string, scopes []string) (string, error)
}
