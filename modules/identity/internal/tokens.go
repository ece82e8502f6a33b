package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// TokenView is the impersonation and personal access token resource. Token
// (the secret) is only present in the response that creates it: secrets are
// stored as hashes and cannot be shown again.
type TokenView struct {
	ID            uint64    `json:"id"`
	Name          string    `json:"name"`
	Revoked       bool      `json:"revoked"`
	CreatedAt     api.Time  `json:"created_at"`
	Scopes        []string  `json:"scopes"`
	UserID        uint64    `json:"user_id"`
	Active        bool      `json:"active"`
	ExpiresAt     *api.Date `json:"expires_at"`
	Impersonation bool      `json:"impersonation"`
	Token         *string   `json:"token,omitempty"`
}

func (s *Service) tokenView(t *Token) TokenView {
	v := TokenView{
		ID: t.ID, Name: t.Name, Revoked: t.Revoked, CreatedAt: api.NewTime(t.CreatedAt),
		Scopes: append([]string{}, t.Scopes...), UserID: t.UserID, Active: t.Active(s.now()),
		Impersonation: t.Kind == KindImpersonation,
	}
	if t.ExpiresAt != nil {
		v.ExpiresAt = api.DatePtr(*t.ExpiresAt)
	}
	return v
}

// allowedScopes are the scopes a token may be created with. sudo (GitLab
// 10.2) is what lets an administrator's personal access or impersonation
// token act as another user; without it such a token cannot sudo.
var allowedScopes = map[string]bool{auth.ScopeAPI: true, auth.ScopeReadUser: true, auth.ScopeSudo: true}

type tokenBody struct {
	Name      string    `json:"name" required:"true"`
	Scopes    []string  `json:"scopes" required:"true" doc:"api, read_user and/or sudo"`
	ExpiresAt *api.Date `json:"expires_at,omitempty" doc:"YYYY-MM-DD; the token stops working at the start of that day"`
}

type TokenUserPath struct {
	UserID int64 `path:"user_id"`
}

type createTokenInput struct {
	TokenUserPath
	Body tokenBody
}

type tokenListInput struct {
	TokenUserPath
	api.PageParams
	State string `query:"state" enum:"all,active,inactive" doc:"all (default), active or inactive"`
}

type ownTokenListInput struct {
	api.PageParams
	State string `query:"state" enum:"all,active,inactive"`
}

type impersonationPath struct {
	TokenUserPath
	TokenID int64 `path:"impersonation_token_id"`
}

type tokenIDPath struct {
	ID int64 `path:"id"`
}

type tokenOutput struct{ Body *TokenView }

type tokensOutput struct {
	api.PageHeaders
	Body []TokenView
}

func (s *Service) registerTokens(a *api.API) {
	tags := []string{"tokens"}
	api.Register(a, api.Op{ID: "list-impersonation-tokens", Method: http.MethodGet, Path: "/users/{user_id}/impersonation_tokens", Tags: tags,
		Summary: "A user's impersonation tokens (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *tokenListInput) (*tokensOutput, error) {
		if _, err := s.userByID(ctx, in.UserID); err != nil {
			return nil, err
		}
		return s.listTokens(ctx, in.UserID, KindImpersonation, in.State, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-impersonation-token", Method: http.MethodGet, Path: "/users/{user_id}/impersonation_tokens/{impersonation_token_id}", Tags: tags,
		Summary: "One impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *impersonationPath) (*tokenOutput, error) {
		if _, err := s.userByID(ctx, in.UserID); err != nil {
			return nil, err
		}
		t, err := s.ownedToken(ctx, in.UserID, in.TokenID, KindImpersonation)
		if err != nil {
			return nil, err
		}
		v := s.tokenView(t)
		return &tokenOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "create-impersonation-token", Method: http.MethodPost, Path: "/users/{user_id}/impersonation_tokens", Tags: tags,
		Summary: "Create an impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *createTokenInput) (*tokenOutput, error) {
		return s.createToken(ctx, in.UserID, KindImpersonation, in.Body)
	})
	api.Register(a, api.Op{ID: "revoke-impersonation-token", Method: http.MethodDelete, Path: "/users/{user_id}/impersonation_tokens/{impersonation_token_id}", Tags: tags,
		Summary: "Revoke an impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *impersonationPath) (*struct{}, error) {
		if _, err := s.userByID(ctx, in.UserID); err != nil {
			return nil, err
		}
		return nil, s.revokeToken(ctx, in.UserID, in.TokenID, KindImpersonation)
	})
	api.Register(a, api.Op{ID: "create-personal-access-token", Method: http.MethodPost, Path: "/users/{user_id}/personal_access_tokens", Tags: tags,
		Summary: "Create a personal access token for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *createTokenInput) (*tokenOutput, error) {
		return s.createToken(ctx, in.UserID, KindPersonal, in.Body)
	})
	api.Register(a, api.Op{ID: "list-personal-access-tokens", Method: http.MethodGet, Path: "/personal_access_tokens", Tags: tags,
		Summary: "The caller's personal access tokens", Access: api.SignedIn}, func(ctx context.Context, in *ownTokenListInput) (*tokensOutput, error) {
		return s.listTokens(ctx, auth.FromContext(ctx).UserID(), KindPersonal, in.State, in.PageParams)
	})
	api.Register(a, api.Op{ID: "revoke-personal-access-token", Method: http.MethodDelete, Path: "/personal_access_tokens/{id}", Tags: tags,
		Summary: "Revoke one of the caller's personal access tokens", Access: api.SignedIn}, func(ctx context.Context, in *tokenIDPath) (*struct{}, error) {
		return nil, s.revokeToken(ctx, auth.FromContext(ctx).UserID(), in.ID, KindPersonal)
	})
}

func tokenNotFound(kind string) error {
	if kind == KindImpersonation {
		return api.NotFound("Impersonation Token")
	}
	return api.NotFound("Personal Access Token")
}

func (s *Service) createToken(ctx context.Context, userID int64, kind string, b tokenBody) (*tokenOutput, error) {
	name := strings.TrimSpace(b.Name)
	if name == "" {
		return nil, ValidationError{"name": {"can't be blank"}}
	}
	if utf8.RuneCountInString(name) > 255 {
		return nil, ValidationError{"name": {"is too long (maximum is 255 characters)"}}
	}
	if len(b.Scopes) == 0 {
		return nil, api.Missing("scopes")
	}
	scopes := []string{}
	for _, sc := range b.Scopes {
		if !allowedScopes[sc] {
			return nil, api.NotValidValue("scopes")
		}
		if !contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	var expires *time.Time
	if b.ExpiresAt != nil {
		t := time.Time(*b.ExpiresAt)
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		expires = &day
	}
	var created *Token
	var secret string
	err := s.update(ctx, func(tx *store.Tx) error {
		if !users.Exists(tx, uint64(userID)) {
			return api.NotFound("User")
		}
		var err error
		secret, err = newSecret()
		if err != nil {
			return err
		}
		created = &Token{UserID: uint64(userID), Kind: kind, Name: name, Hash: hashToken(secret), Scopes: scopes, CreatedAt: s.now().UTC(), ExpiresAt: expires}
		return tokens.Insert(tx, created)
	})
	if err != nil {
		return nil, err
	}
	v := s.tokenView(created)
	v.Token = &secret
	return &tokenOutput{Body: &v}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (s *Service) listTokens(ctx context.Context, userID int64, kind, state string, p api.PageParams) (*tokensOutput, error) {
	now := s.now()
	var matching []*Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := tokens.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := tokens.Get(tx, id)
			if err != nil {
				return err
			}
			if t.Kind != kind {
				continue
			}
			switch state {
			case "active":
				if !t.Active(now) {
					continue
				}
			case "inactive":
				if t.Active(now) {
					continue
				}
			}
			matching = append(matching, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &tokensOutput{PageHeaders: api.Paginate(ctx, p, len(matching)), Body: []TokenView{}}
	for _, t := range api.Window(matching, p) {
		out.Body = append(out.Body, s.tokenView(t))
	}
	return out, nil
}

func (s *Service) ownedToken(ctx context.Context, userID, tokenID int64, kind string) (*Token, error) {
	var t *Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tokens.Get(tx, uint64(tokenID))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || tokenID <= 0 || (t != nil && (int64(t.UserID) != userID || t.Kind != kind)) {
		return nil, tokenNotFound(kind)
	}
	return t, err
}

func (s *Service) revokeToken(ctx context.Context, userID, tokenID int64, kind string) error {
	return s.update(ctx, func(tx *store.Tx) error {
		t, err := tokens.Get(tx, uint64(tokenID))
		if errors.Is(err, store.ErrNotFound) || (t != nil && (int64(t.UserID) != userID || t.Kind != kind)) {
			return tokenNotFound(kind)
		}
		if err != nil {
			return err
		}
		t.Revoked = true
		return tokens.Update(tx, t)
	})
}
