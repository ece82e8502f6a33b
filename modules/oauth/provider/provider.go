package provider

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
)

// Lifetimes (GitLab 15+ and the spec: access tokens live two hours; codes
// ten minutes, Doorkeeper's default; a browser session a week).
const (
	AccessTokenLifetime = 7200 * time.Second
	CodeLifetime        = 10 * time.Minute
	SessionLifetime     = 7 * 24 * time.Hour
)

// Clock tells the module the time. The module uses the wall clock unless
// the application provides one (tests move past token lifetimes with it):
//
//	fx.Supply(fx.Annotate(myClock, fx.As(new(oauth.Clock))))
type Clock interface{ Now() time.Time }

// Scopes are the scopes the server knows (GitLab 9.x's, without the
// registry's).
func Scopes() []string { return []string{auth.ScopeAPI, auth.ScopeReadUser, "openid"} }

// AppID is an application's id.
type AppID int64

// Application is a registered OAuth client.
type Application struct {
	ID AppID
	// ClientID is the client_id clients present (Doorkeeper's uid).
	ClientID     string
	Name         string
	RedirectURIs []string
	Scopes       []string
	// Confidential: the client keeps a secret (a server), and must
	// present it; a public one (a native app) must use PKCE instead.
	Confidential bool
	// OwnerID is the user who registered it for themself; 0 for one an
	// administrator registered.
	OwnerID   int64
	CreatedAt time.Time
	// Secret is set only in what a create returns: only its hash is kept.
	Secret string
}

// NewApplication is what an application is registered with, as the forms
// give it: RedirectURI holds one or more absolute URIs separated by white
// space (at most 10), Scopes one or more of Scopes() separated by spaces
// or commas.
type NewApplication struct {
	Name         string
	RedirectURI  string
	Scopes       string
	Confidential bool
}

// Client is how a client identified itself at the token or revoke
// endpoint: its client_id and, for a confidential client, its secret. The
// zero Client is none (the password grant's client is optional).
type Client struct {
	ID     string
	Secret string
}

// Tokens are what a grant issues: an access token and its refresh token
// (whose secrets are shown this once), for Scopes.
type Tokens struct {
	AccessToken  string
	RefreshToken string
	Scopes       []string
	CreatedAt    time.Time
	ExpiresIn    time.Duration
}

// TokenInfo is what an access token is, for its bearer.
type TokenInfo struct {
	UserID int64
	Scopes []string
	// ExpiresIn is how long it still works (negative once expired, while
	// its refresh token may still be used).
	ExpiresIn time.Duration
	CreatedAt time.Time
	// ClientID is the client's it was issued to; nil for a password grant
	// made without a client.
	ClientID *string
}

// AuthorizationRequest is an authorization request's parameters (RFC 6749
// 4.1.1, RFC 7636 4.3), as the client sent them.
type AuthorizationRequest struct {
	ClientID            string
	RedirectURI         string // "": the application's only one
	ResponseType        string // "code"
	Scope               string // "": the application's scopes
	State               string
	CodeChallenge       string
	CodeChallengeMethod string // S256 or plain (the default)
}

// Authorization is a checked authorization request: the client (without
// its secret) and the redirect URI are trusted, and State is echoed to it.
type Authorization struct {
	App                 Application
	RedirectURI         string
	State               string
	Scopes              []string
	CodeChallenge       string
	CodeChallengeMethod string
}

// Session is a browser's sign-in (a web session). Secret, the cookie's
// value, is set only in what SignIn returns.
type Session struct {
	ID     int64
	User   *auth.User
	Secret string
}

// SessionInfo is a web session as its user's list shows it (never its
// secret). UserAgent and IP are the browser's at sign-in.
type SessionInfo struct {
	ID                   int64
	CreatedAt, ExpiresAt time.Time
	UserAgent, IP        string
	Current              bool
}

// AuthorizedApplication is an application a user gave access to.
type AuthorizedApplication struct {
	ID     AppID
	Name   string
	Scopes []string
	// AuthorizedAt is when its oldest live token was issued.
	AuthorizedAt time.Time
}

// Service is the OAuth module. The caller is the principal in ctx
// (auth.FromContext): administrators manage every application; a
// signed-in user their own applications and the authorizations they grant.
// The token and revoke endpoints need no principal: the client's
// credentials and the tokens are the proof.
type Service interface {
	// Applications are the applications administrators registered, by id.
	Applications(ctx context.Context) ([]Application, error)
	// CreateApplication registers an application (administrators); an
	// InvalidError for fields it may not have.
	CreateApplication(ctx context.Context, in NewApplication) (Application, error)
	// DeleteApplication deletes an application with its grants and
	// tokens, which stop working at once (administrators);
	// ErrAppNotFound.
	DeleteApplication(ctx context.Context, id AppID) error
	// OwnApplications, CreateOwnApplication and DeleteOwnApplication are
	// the same for the caller's own applications (another user's is
	// ErrAppNotFound).
	OwnApplications(ctx context.Context) ([]Application, error)
	CreateOwnApplication(ctx context.Context, in NewApplication) (Application, error)
	DeleteOwnApplication(ctx context.Context, id AppID) error

	// PasswordGrant is the resource owner password credentials grant,
	// through identity's password check (local and directory users, the
	// sign-in throttle: *auth.ThrottledError; auth.ErrProviderUnavailable).
	// scope "" is the client's scopes (api without a client).
	PasswordGrant(ctx context.Context, client Client, login, password, scope string) (Tokens, error)
	// CodeGrant exchanges an authorization code. A code is used once: a
	// second use is refused and revokes what the first gave.
	CodeGrant(ctx context.Context, client Client, code, redirectURI, codeVerifier string) (Tokens, error)
	// RefreshGrant trades a refresh token for a new pair; the old one
	// stops working. A spent refresh token used again revokes its chain.
	RefreshGrant(ctx context.Context, client Client, refreshToken, scope string) (Tokens, error)
	// Revoke revokes the pair of an access or refresh token (RFC 7009);
	// an unknown token is no error. A token of a confidential client may
	// be revoked by that client only (UnauthorizedClient).
	Revoke(ctx context.Context, client Client, token string) error
	// TokenInfo is a live access token's information; auth.ErrUnknownToken
	// or auth.ErrUnauthorized (revoked, expired, its user blocked or gone).
	TokenInfo(ctx context.Context, accessToken string) (TokenInfo, error)

	// CheckAuthorization checks an authorization request. A client or a
	// redirect URI it cannot trust is ErrNoClientID, ErrUnknownClient,
	// ErrRedirectURIRequired or ErrRedirectURIInvalid, to be shown to the
	// user and never sent to the redirect URI; any other problem is an
	// *Error for the client, with the Authorization to send it to.
	CheckAuthorization(ctx context.Context, req AuthorizationRequest) (Authorization, error)
	// Authorize is the caller's consent: it checks the request as
	// CheckAuthorization does and returns a code for the client.
	Authorize(ctx context.Context, req AuthorizationRequest) (Authorization, string, error)

	// SignIn checks a password through identity (login is a username or
	// an e-mail address) and starts a web session: auth.ErrInvalidPassword
	// or auth.ErrUnauthorized (a blocked user), *auth.ThrottledError
	// (auth.WithClientAddr), auth.ErrProviderUnavailable.
	SignIn(ctx context.Context, login, password string) (Session, error)
	// Session is the live session of a cookie's secret:
	// auth.ErrUnknownToken, or auth.ErrUnauthorized once it expired or
	// its user is blocked or gone (then it is ended, so that unblocking
	// does not bring it back).
	Session(ctx context.Context, secret string) (Session, error)
	// EndSession signs the session of secret out.
	EndSession(ctx context.Context, secret string) error

	// The caller's own sessions and authorizations (the profile's
	// pages); auth.ErrUnauthorized for nobody signed in.

	// Sessions are the caller's live web sessions, newest first; Current
	// marks the one the caller signed in with.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// EndUserSession signs one of the caller's sessions out;
	// ErrSessionNotFound when there is no such session of theirs.
	EndUserSession(ctx context.Context, id int64) error
	// EndOtherSessions signs out every session of the caller but the one
	// they use, and says how many ended.
	EndOtherSessions(ctx context.Context) (int, error)
	// AuthorizedApplications are the applications holding live tokens of
	// the caller, by name.
	AuthorizedApplications(ctx context.Context) ([]AuthorizedApplication, error)
	// RevokeAuthorization revokes every token and code the caller gave
	// an application; ErrAppNotFound when it holds none.
	RevokeAuthorization(ctx context.Context, id AppID) error

	// Sweep deletes what can no longer matter: expired codes and
	// sessions, tokens revoked over an hour ago. It runs hourly.
	Sweep(ctx context.Context) (removed int, err error)
}

var (
	// ErrSessionNotFound: no such web session of the caller.
	ErrSessionNotFound = errors.New("oauth: session not found")
	// ErrAppNotFound: no such application, or not the caller's own.
	ErrAppNotFound = errors.New("oauth: application not found")
	// ErrInvalid: fields an application may not have (an InvalidError
	// says which and why).
	ErrInvalid = errors.New("oauth: invalid fields")
	// ErrNoClientID: an authorization request without a client_id.
	ErrNoClientID = errors.New("oauth: the request has no client_id")
	// ErrUnknownClient: no application has the request's client_id.
	ErrUnknownClient = errors.New("oauth: no application has this client_id")
	// ErrRedirectURIRequired: the application has several redirect URIs,
	// and the request names none.
	ErrRedirectURIRequired = errors.New("oauth: the request must name one of the application's redirect URIs")
	// ErrRedirectURIInvalid: the request's redirect URI is not one of the
	// application's (exactly).
	ErrRedirectURIInvalid = errors.New("oauth: the redirect URI is not one of the application's")
)

// InvalidError is ErrInvalid with every problem at once: field ("name",
// "redirect_uri", "scopes") -> what is wrong with it.
type InvalidError map[string][]string

func (e InvalidError) Error() string {
	b, _ := json.Marshal(map[string][]string(e))
	return "validation failed: " + string(b)
}

// Is makes an InvalidError an ErrInvalid.
func (e InvalidError) Is(target error) bool { return target == ErrInvalid }

// Fields is the field -> texts map.
func (e InvalidError) Fields() map[string][]string { return e }

// ErrorCode is an error code of the OAuth protocol (RFC 6749 4.1.2.1 and
// 5.2, RFC 7009 2.2.1).
type ErrorCode string

const (
	InvalidRequest          ErrorCode = "invalid_request"
	InvalidClient           ErrorCode = "invalid_client"
	InvalidGrant            ErrorCode = "invalid_grant"
	InvalidScope            ErrorCode = "invalid_scope"
	UnauthorizedClient      ErrorCode = "unauthorized_client"
	UnsupportedResponseType ErrorCode = "unsupported_response_type"
)

// Error is the protocol's refusal of a request, for the client: a code
// and its description (Doorkeeper's words where it has them).
type Error struct {
	Code        ErrorCode
	Description string
}

func (e *Error) Error() string { return "oauth: " + string(e.Code) + ": " + e.Description }
