package internal

import (
	"context"
	"net/http"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

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

func (h *handlers) registerTokens(a *api.API) {
	tags := []string{"tokens"}
	api.Register(a, api.Op{ID: "list-impersonation-tokens", Method: http.MethodGet, Path: "/users/{user_id}/impersonation_tokens", Tags: tags,
		Summary: "A user's impersonation tokens (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *tokenListInput) (*tokensOutput, error) {
		return h.listTokens(ctx, in.UserID, user.ImpersonationToken, in.State, in.PageParams)
	})
	api.Register(a, api.Op{ID: "get-impersonation-token", Method: http.MethodGet, Path: "/users/{user_id}/impersonation_tokens/{impersonation_token_id}", Tags: tags,
		Summary: "One impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *impersonationPath) (*tokenOutput, error) {
		t, err := h.svc.Token(ctx, in.UserID, user.ImpersonationToken, in.TokenID)
		if err != nil {
			return nil, err
		}
		v := tokenView(t)
		return &tokenOutput{Body: &v}, nil
	})
	api.Register(a, api.Op{ID: "create-impersonation-token", Method: http.MethodPost, Path: "/users/{user_id}/impersonation_tokens", Tags: tags,
		Summary: "Create an impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *createTokenInput) (*tokenOutput, error) {
		return h.issueToken(ctx, in.UserID, user.ImpersonationToken, in.Body)
	})
	api.Register(a, api.Op{ID: "revoke-impersonation-token", Method: http.MethodDelete, Path: "/users/{user_id}/impersonation_tokens/{impersonation_token_id}", Tags: tags,
		Summary: "Revoke an impersonation token (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *impersonationPath) (*struct{}, error) {
		return nil, h.svc.RevokeToken(ctx, in.UserID, user.ImpersonationToken, in.TokenID)
	})
	api.Register(a, api.Op{ID: "create-personal-access-token", Method: http.MethodPost, Path: "/users/{user_id}/personal_access_tokens", Tags: tags,
		Summary: "Create a personal access token for a user (administrators)", Access: api.AdminOnly}, func(ctx context.Context, in *createTokenInput) (*tokenOutput, error) {
		return h.issueToken(ctx, in.UserID, user.PersonalToken, in.Body)
	})
	api.Register(a, api.Op{ID: "list-personal-access-tokens", Method: http.MethodGet, Path: "/personal_access_tokens", Tags: tags,
		Summary: "The caller's personal access tokens", Access: api.SignedIn}, func(ctx context.Context, in *ownTokenListInput) (*tokensOutput, error) {
		return h.listTokens(ctx, auth.FromContext(ctx).UserID(), user.PersonalToken, in.State, in.PageParams)
	})
	api.Register(a, api.Op{ID: "revoke-personal-access-token", Method: http.MethodDelete, Path: "/personal_access_tokens/{id}", Tags: tags,
		Summary: "Revoke one of the caller's personal access tokens", Access: api.SignedIn}, func(ctx context.Context, in *tokenIDPath) (*struct{}, error) {
		return nil, h.svc.RevokeToken(ctx, auth.FromContext(ctx).UserID(), user.PersonalToken, in.ID)
	})
}

func (h *handlers) issueToken(ctx context.Context, userID int64, kind user.TokenKind, b tokenBody) (*tokenOutput, error) {
	in := user.NewToken{Kind: kind, Name: b.Name, Scopes: b.Scopes}
	if b.ExpiresAt != nil {
		t := time.Time(*b.ExpiresAt)
		in.ExpiresAt = &t
	}
	t, err := h.svc.IssueToken(ctx, userID, in)
	if err != nil {
		return nil, err
	}
	v := tokenView(t)
	return &tokenOutput{Body: &v}, nil
}

func (h *handlers) listTokens(ctx context.Context, userID int64, kind user.TokenKind, state string, p api.PageParams) (*tokensOutput, error) {
	offset, limit := page(p)
	list, total, err := h.svc.Tokens(ctx, userID, kind, user.TokenState(state), offset, limit)
	if err != nil {
		return nil, err
	}
	out := &tokensOutput{PageHeaders: api.Paginate(ctx, p, total), Body: make([]TokenView, 0, len(list))}
	for _, t := range list {
		out.Body = append(out.Body, tokenView(t))
	}
	return out, nil
}
