package internal

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The caller's own web sessions and the applications they authorised,
// for the profile's pages (httppagesprofile.go).

// maxUserAgent bounds the user agent a session keeps: enough to tell
// browsers apart, not a place to store a client's megabytes.
const maxUserAgent = 256

type userAgentKey struct{}

// withUserAgent carries the browser's User-Agent to SignIn, which keeps it
// with the session.
func withUserAgent(ctx context.Context, ua string) context.Context {
	return context.WithValue(ctx, userAgentKey{}, ua)
}

func userAgentFrom(ctx context.Context) string {
	ua, _ := ctx.Value(userAgentKey{}).(string)
	if len(ua) > maxUserAgent {
		ua = ua[:maxUserAgent]
		for !utf8.ValidString(ua) {
			ua = ua[:len(ua)-1]
		}
	}
	return strings.ToValidUTF8(ua, "")
}

// clientIP is the address part of a client's "host:port".
func clientIP(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	if len(addr) > 64 {
		return ""
	}
	return addr
}

// caller is the signed-in caller's id and the session they use (0 when
// they came with a token).
func caller(ctx context.Context) (user, session int64, err error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return 0, 0, auth.ErrUnauthorized
	}
	if p.Method == auth.MethodSession {
		session = p.TokenID
	}
	return p.UserID(), session, nil
}

// impersonating tells an administrator's session that acts as the user
// (other than the caller's own): it is the administrator's, not the
// user's, so the user's list neither shows it (its address and browser
// are the administrator's) nor ends it; it ends when the administrator
// stops, or when either is blocked.
func impersonating(sess *Session, current int64) bool {
	return sess.ImpersonatorID != 0 && sess.ID != current
}

// Sessions implements provider.Service.
func (s *Service) Sessions(ctx context.Context) ([]provider.SessionInfo, error) {
	user, current, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	var rows []*Session
	err = s.db.View(ctx, func(tx *store.Tx) error {
		rows, err = sessions.AllBy(tx, "user", store.IDString(user))
		return err
	})
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]provider.SessionInfo, 0, len(rows))
	for _, r := range rows {
		if !now.Before(r.ExpiresAt) || impersonating(r, current) {
			continue
		}
		out = append(out, provider.SessionInfo{ID: r.ID, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
			UserAgent: r.UserAgent, IP: r.IP, Current: r.ID == current})
	}
	slices.Reverse(out) // ids grow with time: newest first
	return out, nil
}

// EndUserSession implements provider.Service.
func (s *Service) EndUserSession(ctx context.Context, id int64) error {
	user, current, err := caller(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		sess, err := sessions.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (sess.UserID != user || impersonating(sess, current))) {
			return provider.ErrSessionNotFound
		}
		if err != nil {
			return err
		}
		return sessions.Delete(tx, id)
	})
}

// EndOtherSessions implements provider.Service.
func (s *Service) EndOtherSessions(ctx context.Context) (int, error) {
	user, current, err := caller(ctx)
	if err != nil {
		return 0, err
	}
	ended := 0
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ended = 0
		ids, err := sessions.IDsBy(tx, "user", store.IDString(user))
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id == current {
				continue
			}
			sess, err := sessions.Get(tx, id)
			if err != nil {
				return err
			}
			if impersonating(sess, current) {
				continue
			}
			if err := sessions.Delete(tx, id); err != nil {
				return err
			}
			ended++
		}
		return nil
	})
	return ended, err
}

// liveTokensOf are the caller's tokens an application holds that still
// give access: not revoked (an expired access token may still be
// refreshed).
func liveTokensOf(tx *store.Tx, user int64) ([]*Token, error) {
	all, err := tokens.AllBy(tx, "user", store.IDString(user))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(t *Token) bool { return t.RevokedAt != nil || t.AppID == 0 }), nil
}

// AuthorizedApplications implements provider.Service.
func (s *Service) AuthorizedApplications(ctx context.Context) ([]provider.AuthorizedApplication, error) {
	user, _, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	var out []provider.AuthorizedApplication
	err = s.db.View(ctx, func(tx *store.Tx) error {
		out = nil
		live, err := liveTokensOf(tx, user)
		if err != nil {
			return err
		}
		byApp := map[provider.AppID]int{}
		for _, t := range live {
			i, seen := byApp[t.AppID]
			if !seen {
				app, err := apps.Get(tx, t.AppID)
				if errors.Is(err, store.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
				byApp[t.AppID] = len(out)
				out = append(out, provider.AuthorizedApplication{ID: app.ID, Name: app.Name, AuthorizedAt: t.CreatedAt})
				i = len(out) - 1
			}
			a := &out[i]
			for _, sc := range t.Scopes {
				if !slices.Contains(a.Scopes, sc) {
					a.Scopes = append(a.Scopes, sc)
				}
			}
			if t.CreatedAt.Before(a.AuthorizedAt) {
				a.AuthorizedAt = t.CreatedAt
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b provider.AuthorizedApplication) int { return strings.Compare(a.Name, b.Name) })
	return out, err
}

// RevokeAuthorization implements provider.Service.
func (s *Service) RevokeAuthorization(ctx context.Context, id provider.AppID) error {
	user, _, err := caller(ctx)
	if err != nil {
		return err
	}
	return s.updateTokens(ctx, func(tx *store.Tx) error {
		live, err := liveTokensOf(tx, user)
		if err != nil {
			return err
		}
		now := s.now()
		revoked := 0
		for _, t := range live {
			if t.AppID != id {
				continue
			}
			if err := revokeToken(tx, t, now); err != nil {
				return err
			}
			revoked++
		}
		// Codes not yet exchanged would bring the access back.
		given, err := grants.AllBy(tx, "user", store.IDString(user))
		if err != nil {
			return err
		}
		for _, g := range given {
			if g.AppID == id {
				if err := grants.Delete(tx, g.ID); err != nil {
					return err
				}
				revoked++
			}
		}
		if revoked == 0 {
			return provider.ErrAppNotFound
		}
		return nil
	})
}
