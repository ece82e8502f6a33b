package internal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The lifetimes of the contract.
const (
	AccessTokenLifetime = provider.AccessTokenLifetime
	CodeLifetime        = provider.CodeLifetime
	SessionLifetime     = provider.SessionLifetime
)

// Clock tells the time; tests supply one to move past token lifetimes
// without sleeping.
type Clock = provider.Clock

// Scopes the server knows.
var knownScopes = provider.Scopes()

// ErrAppNotFound is the contract's.
var ErrAppNotFound = provider.ErrAppNotFound

// Service is the OAuth module: applications, grants, tokens and sessions.
// Its HTTP adapter (the API, the OAuth endpoints and the pages) is the
// http*.go files.
type Service struct {
	db        *store.DB
	log       *zap.Logger
	passwords auth.PasswordAuthenticator
	users     identity.Users
	activity  identity.Activity
	// tokenCache keeps the access tokens in use, decoded, so that the
	// Bearer path costs what identity's private-token path costs. Every
	// write that revokes or deletes tokens invalidates it on commit
	// (updateTokens); issuing one needs not.
	tokenCache *store.ReadCache[[32]byte, *Token]
	clock      Clock
}

var _ provider.Service = (*Service)(nil)

// Deps are what the service is built from (fx fills them).
type Deps struct {
	fennec.In
	DB        *store.DB
	Log       *zap.Logger
	Passwords auth.PasswordAuthenticator
	Users     identity.Users
	Activity  identity.Activity `optional:"true"`
	Clock     Clock             `optional:"true"`
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// NewService builds the service.
func NewService(d Deps) *Service {
	s := &Service{db: d.DB, log: d.Log.Named("oauth"), passwords: d.Passwords, users: d.Users,
		activity: d.Activity, clock: d.Clock, tokenCache: store.NewReadCache[[32]byte, *Token](50000)}
	if s.clock == nil {
		s.clock = wallClock{}
	}
	s.db.OnSignal(tokensChanged, func([]byte) { s.tokenCache.Invalidate() })
	return s
}

func (s *Service) now() time.Time { return s.clock.Now().UTC() }

// Subscribers: a deleted user's grants, tokens and sessions go with them;
// a blocked user's sessions end, and so do those of a user whose password
// changed but the one they changed it from (their tokens are refused while the block
// lasts and work again after it, as GitLab's do; a session must be
// started anew).
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.SubscribeInTx("oauth.user-deleted", func(ctx context.Context, ev identity.UserDeleted) error {
			return s.updateTokens(ctx, func(tx *store.Tx) error { return removeUser(tx, ev.UserID) })
		}),
		events.SubscribeInTx("oauth.user-blocked", func(ctx context.Context, ev identity.UserBlocked) error {
			return s.db.Update(ctx, func(tx *store.Tx) error { return endSessions(tx, ev.UserID) })
		}),
		events.SubscribeInTx("oauth.password-changed", func(ctx context.Context, ev identity.PasswordChanged) error {
			return s.db.Update(ctx, func(tx *store.Tx) error { return endSessionsBut(tx, ev.UserID, ev.KeepSession) })
		}),
	}
}

// newSecret is 256 random bits in hex: client ids and secrets, codes,
// tokens and session keys alike (GitLab's are 64 hex characters too).
func newSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b[:])
}

// hashSecret is what the store keeps of a secret.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// secretMatches compares a presented secret with a stored hash in constant
// time.
func secretMatches(secret, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(hashSecret(secret)), []byte(hash)) == 1
}

// parseScopes splits a scope parameter (space separated, as RFC 6749;
// commas tolerated, as GitLab's forms) and reports false for an unknown
// scope. The result has no duplicates and keeps the given order.
func parseScopes(s string) ([]string, bool) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' || r == '\r' }) {
		if !slices.Contains(knownScopes, f) {
			return nil, false
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, true
}

// subset reports whether every scope of want is in have.
func subset(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// user finds a user for a grant, token or session through identity's read
// cache (which identity's writes, a block among them, invalidate); a
// missing or blocked user is auth.ErrUnauthorized.
func (s *Service) user(ctx context.Context, id int64) (*auth.User, error) {
	u, err := s.users.UserByID(ctx, id)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, auth.ErrUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if u.State != "active" {
		return nil, auth.ErrUnauthorized
	}
	return &auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin, External: u.External}, nil
}

// updateTokens is db.Update for writes that revoke or delete tokens: the
// token cache is invalidated when they commit.
func (s *Service) updateTokens(ctx context.Context, fn func(*store.Tx) error) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.Signal(tokensChanged, nil); err != nil {
			return err
		}
		return fn(tx)
	})
}

// tokensChanged is the signal of a committed revocation or deletion of
// tokens: every node drops its token cache (store.Tx.Signal).
const tokensChanged = "oauth.tokens.changed"

// ResolveToken implements auth.TokenResolver for OAuth access tokens
// (Bearer header or access_token parameter; as a git password, read-only)
// and web session cookies. One
// SHA-256 and one read transaction, plus the user's lookup (read on every
// use, so a blocked user's tokens and sessions stop at once).
func (s *Service) ResolveToken(ctx context.Context, kind auth.TokenKind, secret string) (*auth.Principal, error) {
	switch kind {
	case auth.KindOAuth:
		return s.resolveAccessToken(ctx, secret)
	case auth.KindBasic:
		// git over HTTP with an access token as the password ("oauth2" as
		// the user, by custom): clones and fetches only, as GitLab 9.x
		// allowed (download_code), and only for a token with the api scope.
		if len(secret) != 64 {
			return nil, auth.ErrUnknownToken
		}
		p, err := s.resolveAccessToken(ctx, secret)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(p.Scopes, auth.ScopeAPI) {
			return nil, auth.ErrUnauthorized
		}
		p.Scopes = []string{auth.ScopeReadRepository}
		return p, nil
	case auth.KindSession:
		sess, u, err := s.session(ctx, secret)
		if err != nil {
			return nil, err
		}
		p := &auth.Principal{User: u, Method: auth.MethodSession, TokenID: sess.ID}
		if sess.ImpersonatorID != 0 {
			if p.Impersonator, err = s.impersonator(ctx, sess); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	return nil, auth.ErrUnknownToken
}

func (s *Service) resolveAccessToken(ctx context.Context, secret string) (*auth.Principal, error) {
	t, err := s.accessToken(ctx, secret)
	if err != nil {
		return nil, err
	}
	u, err := s.user(ctx, t.UserID)
	if err != nil {
		return nil, err
	}
	return &auth.Principal{User: u, Method: auth.MethodOAuth, Scopes: t.Scopes, TokenID: t.ID}, nil
}

// accessToken finds a live access token: ErrUnknownToken when no token has
// this secret, ErrUnauthorized when it is revoked or expired.
func (s *Service) accessToken(ctx context.Context, secret string) (*Token, error) {
	sum := sha256.Sum256([]byte(secret))
	t, ok := s.tokenCache.Get(sum)
	if !ok {
		gen := s.tokenCache.Gen()
		err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			t, err = tokens.GetBy(tx, "access", hex.EncodeToString(sum[:]))
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return nil, auth.ErrUnknownToken
		}
		if err != nil {
			return nil, err
		}
		s.tokenCache.Put(gen, sum, t)
	}
	if t.RevokedAt != nil || t.expired(s.now()) {
		return nil, auth.ErrUnauthorized
	}
	return t, nil
}
