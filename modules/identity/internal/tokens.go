package internal

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The personal access and impersonation tokens of user.Service. The HTTP
// adapter is httptokens.go.

// tokenOf is the contract's record of t as it is at now (without its
// secret).
func tokenOf(t *Token, now time.Time) user.Token {
	return user.Token{
		ID: t.ID, UserID: t.UserID, Kind: user.TokenKind(t.Kind), Name: t.Name,
		Scopes: append([]string{}, t.Scopes...), CreatedAt: t.CreatedAt, ExpiresAt: clone(t.ExpiresAt),
		Revoked: t.Revoked, Active: t.Active(now),
	}
}

// mayManageTokens: impersonation tokens are the administrators'; a user's
// personal access tokens are theirs too.
func mayManageTokens(ctx context.Context, userID int64, kind user.TokenKind) error {
	if kind == user.ImpersonationToken {
		return requireAdmin(ctx)
	}
	return mayManage(ctx, userID)
}

func tokenNotFound(kind user.TokenKind) error { return &user.TokenNotFoundError{Kind: kind} }

// IssueToken implements user.Service.
func (s *Service) IssueToken(ctx context.Context, userID int64, in user.NewToken) (user.Token, error) {
	if err := requireAdmin(ctx); err != nil {
		return user.Token{}, err
	}
	return s.issueToken(ctx, userID, in)
}

// issueToken makes a token once the caller's right to it is checked.
func (s *Service) issueToken(ctx context.Context, userID int64, in user.NewToken) (user.Token, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return user.Token{}, ValidationError{"name": {"can't be blank"}}
	}
	if utf8.RuneCountInString(name) > 255 {
		return user.Token{}, ValidationError{"name": {"is too long (maximum is 255 characters)"}}
	}
	if len(in.Scopes) == 0 {
		return user.Token{}, user.ErrNoScopes
	}
	allowed := user.TokenScopes()
	scopes := []string{}
	for _, sc := range in.Scopes {
		if !slices.Contains(allowed, sc) {
			return user.Token{}, user.ErrInvalidScope
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		t := *in.ExpiresAt
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		expires = &day
	}
	var created *Token
	var secret string
	err := s.update(ctx, func(tx *store.Tx) error {
		if !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		var err error
		secret, err = newSecret()
		if err != nil {
			return err
		}
		created = &Token{UserID: userID, Kind: string(in.Kind), Name: name, Hash: hashToken(secret), Scopes: scopes, CreatedAt: s.now().UTC(), ExpiresAt: expires}
		return tokens.Insert(tx, created)
	})
	if err != nil {
		return user.Token{}, err
	}
	t := tokenOf(created, s.now())
	t.Secret = secret
	return t, nil
}

// Tokens implements user.Service.
func (s *Service) Tokens(ctx context.Context, userID int64, kind user.TokenKind, state user.TokenState, offset, limit int) ([]user.Token, int, error) {
	if err := mayManageTokens(ctx, userID, kind); err != nil {
		return nil, 0, err
	}
	now := s.now()
	var matching []*Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if userID <= 0 || !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		ids, err := tokens.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := tokens.Get(tx, id)
			if err != nil {
				return err
			}
			if t.Kind != string(kind) {
				continue
			}
			switch state {
			case user.ActiveTokens:
				if !t.Active(now) {
					continue
				}
			case user.InactiveTokens:
				if t.Active(now) {
					continue
				}
			}
			matching = append(matching, t)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	out := []user.Token{}
	for _, t := range store.Window(matching, offset, limit) {
		out = append(out, tokenOf(t, now))
	}
	return out, len(matching), nil
}

// Token implements user.Service.
func (s *Service) Token(ctx context.Context, userID int64, kind user.TokenKind, tokenID int64) (user.Token, error) {
	if err := mayManageTokens(ctx, userID, kind); err != nil {
		return user.Token{}, err
	}
	var t *Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if userID <= 0 || !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		var err error
		t, err = tokens.Get(tx, tokenID)
		if errors.Is(err, store.ErrNotFound) || tokenID <= 0 || (t != nil && (t.UserID != userID || t.Kind != string(kind))) {
			return tokenNotFound(kind)
		}
		return err
	})
	if err != nil {
		return user.Token{}, err
	}
	return tokenOf(t, s.now()), nil
}

// RevokeToken implements user.Service.
func (s *Service) RevokeToken(ctx context.Context, userID int64, kind user.TokenKind, tokenID int64) error {
	if err := mayManageTokens(ctx, userID, kind); err != nil {
		return err
	}
	return s.update(ctx, func(tx *store.Tx) error {
		if userID <= 0 || !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		t, err := tokens.Get(tx, tokenID)
		if errors.Is(err, store.ErrNotFound) || (t != nil && (t.UserID != userID || t.Kind != string(kind))) {
			return tokenNotFound(kind)
		}
		if err != nil {
			return err
		}
		t.Revoked = true
		return tokens.Update(tx, t)
	})
}
