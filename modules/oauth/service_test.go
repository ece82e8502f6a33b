package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// TestServiceWithoutHTTP drives provider.Service as an embedder, a page or
// an admin command would, with no request behind it: the same rules and
// the same errors as the API, the OAuth endpoints and the pages, and what
// it does is what they then show.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc provider.Service
	var lookup auth.UserLookup
	e := start(t, fennectest.WithExtract(&svc, &lookup))
	alice := e.CreateUser(t, "alice")
	as := func(id int64) context.Context {
		t.Helper()
		u, err := lookup.LookupUser(context.Background(), strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.ForUser(u)
		if err != nil {
			t.Fatal(err)
		}
		return auth.WithPrincipal(context.Background(), p)
	}
	admin := auth.WithPrincipal(context.Background(), auth.System())
	nobody := context.Background()
	asAlice := as(alice.ID)
	forbidden := func(err error) bool {
		var f *auth.ForbiddenError
		return errors.As(err, &f)
	}

	// Applications: administrators register them; users their own.
	in := provider.NewApplication{Name: "ci", RedirectURI: "https://ci.example/cb", Scopes: "api read_user", Confidential: true}
	if _, err := svc.CreateApplication(asAlice, in); !forbidden(err) {
		t.Fatalf("alice registers for the instance: %v", err)
	}
	if _, err := svc.OwnApplications(nobody); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("nobody's own applications: %v", err)
	}
	var invalid provider.InvalidError
	if _, err := svc.CreateApplication(admin, provider.NewApplication{Name: " ", RedirectURI: "javascript:alert(1)", Scopes: "sudo"}); !errors.Is(err, provider.ErrInvalid) ||
		!errors.As(err, &invalid) || len(invalid["name"]) != 1 || len(invalid["redirect_uri"]) != 1 || len(invalid["scopes"]) != 1 {
		t.Fatalf("invalid fields: %v", err)
	}
	app, err := svc.CreateApplication(admin, in)
	if err != nil || app.ID <= 0 || app.ClientID == "" || app.Secret == "" || app.OwnerID != 0 ||
		!slices.Equal(app.Scopes, []string{"api", "read_user"}) || !slices.Equal(app.RedirectURIs, []string{"https://ci.example/cb"}) {
		t.Fatalf("created %+v %v", app, err)
	}
	var listed []map[string]any
	if resp, _ := e.JSON(t, http.MethodGet, "/api/v4/applications", nil, &listed, "PRIVATE-TOKEN", e.RootToken); resp.StatusCode != 200 ||
		len(listed) != 1 || listed[0]["application_id"] != app.ClientID || listed[0]["secret"] != nil {
		t.Fatalf("the API lists %d %v", resp.StatusCode, listed)
	}
	own, err := svc.CreateOwnApplication(asAlice, provider.NewApplication{Name: "mine", RedirectURI: "com.example.app:/cb", Scopes: "openid"})
	if err != nil || own.OwnerID != alice.ID || own.Confidential {
		t.Fatalf("alice's own: %+v %v", own, err)
	}
	if list, err := svc.OwnApplications(asAlice); err != nil || len(list) != 1 || list[0].ID != own.ID || list[0].Secret != "" {
		t.Fatalf("alice's applications: %+v %v", list, err)
	}
	if err := svc.DeleteOwnApplication(asAlice, app.ID); !errors.Is(err, provider.ErrAppNotFound) {
		t.Fatalf("alice deletes the instance's: %v", err)
	}

	// Grants: the password grant through identity, the token's
	// information, a refresh, and a revocation.
	client := provider.Client{ID: app.ClientID, Secret: app.Secret}
	var pe *provider.Error
	if _, err := svc.PasswordGrant(nobody, provider.Client{ID: app.ClientID, Secret: "wrong"}, alice.Username, alice.Password, ""); !errors.As(err, &pe) || pe.Code != provider.InvalidClient {
		t.Fatalf("a wrong client secret: %v", err)
	}
	if _, err := svc.PasswordGrant(nobody, client, alice.Username, "wrong", ""); !errors.As(err, &pe) || pe.Code != provider.InvalidGrant {
		t.Fatalf("a wrong password: %v", err)
	}
	if _, err := svc.PasswordGrant(nobody, client, alice.Username, alice.Password, "openid"); !errors.As(err, &pe) || pe.Code != provider.InvalidScope {
		t.Fatalf("a scope the client may not have: %v", err)
	}
	tokens, err := svc.PasswordGrant(nobody, client, alice.Username, alice.Password, "read_user")
	if err != nil || tokens.AccessToken == "" || tokens.RefreshToken == "" || !slices.Equal(tokens.Scopes, []string{"read_user"}) ||
		tokens.ExpiresIn != provider.AccessTokenLifetime {
		t.Fatalf("password grant: %+v %v", tokens, err)
	}
	info, err := svc.TokenInfo(nobody, tokens.AccessToken)
	if err != nil || info.UserID != alice.ID || info.ClientID == nil || *info.ClientID != app.ClientID || info.ExpiresIn <= 0 {
		t.Fatalf("token info: %+v %v", info, err)
	}
	if resp, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Authorization", "Bearer "+tokens.AccessToken); resp.StatusCode != 200 {
		t.Fatalf("the access token on the API: %d", resp.StatusCode)
	}
	refreshed, err := svc.RefreshGrant(nobody, client, tokens.RefreshToken, "")
	if err != nil || refreshed.AccessToken == tokens.AccessToken {
		t.Fatalf("refresh: %+v %v", refreshed, err)
	}
	if _, err := svc.TokenInfo(nobody, tokens.AccessToken); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("the rotated token: %v", err)
	}
	if err := svc.Revoke(nobody, provider.Client{}, refreshed.AccessToken); !errors.As(err, &pe) || pe.Code != provider.UnauthorizedClient {
		t.Fatalf("a confidential client's token revoked by nobody: %v", err)
	}
	if err := svc.Revoke(nobody, client, refreshed.AccessToken); err != nil {
		t.Fatal(err)
	}
	if resp, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Authorization", "Bearer "+refreshed.AccessToken); resp.StatusCode != 401 {
		t.Fatalf("a revoked access token on the API: %d", resp.StatusCode)
	}

	// Authorization: the request's checks, then alice's consent and its
	// code, which the client trades once.
	req := provider.AuthorizationRequest{ClientID: app.ClientID, ResponseType: "code", State: "xyz"}
	if _, err := svc.CheckAuthorization(nobody, provider.AuthorizationRequest{ClientID: "nope", ResponseType: "code"}); !errors.Is(err, provider.ErrUnknownClient) {
		t.Fatalf("an unknown client: %v", err)
	}
	if ar, err := svc.CheckAuthorization(nobody, provider.AuthorizationRequest{ClientID: app.ClientID, State: "xyz"}); !errors.As(err, &pe) ||
		pe.Code != provider.InvalidRequest || ar.RedirectURI != "https://ci.example/cb" || ar.State != "xyz" {
		t.Fatalf("no response_type: %+v %v", ar, err)
	}
	if _, _, err := svc.Authorize(nobody, req); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("nobody's consent: %v", err)
	}
	ar, code, err := svc.Authorize(asAlice, req)
	if err != nil || code == "" || ar.App.ID != app.ID || !slices.Equal(ar.Scopes, []string{"api", "read_user"}) {
		t.Fatalf("alice's consent: %+v %q %v", ar, code, err)
	}
	if _, err := svc.CodeGrant(nobody, client, code, "https://ci.example/cb", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CodeGrant(nobody, client, code, "https://ci.example/cb", ""); !errors.As(err, &pe) || pe.Code != provider.InvalidGrant {
		t.Fatalf("a code used twice: %v", err)
	}

	// Web sessions.
	if _, err := svc.SignIn(nobody, alice.Username, "wrong"); !errors.Is(err, auth.ErrInvalidPassword) {
		t.Fatalf("a wrong password: %v", err)
	}
	sess, err := svc.SignIn(nobody, alice.Email, alice.Password)
	if err != nil || sess.Secret == "" || sess.User == nil || sess.User.ID != alice.ID {
		t.Fatalf("sign-in: %+v %v", sess, err)
	}
	if got, err := svc.Session(nobody, sess.Secret); err != nil || got.ID != sess.ID || got.Secret != "" {
		t.Fatalf("session: %+v %v", got, err)
	}
	if err := svc.EndSession(nobody, sess.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Session(nobody, sess.Secret); !errors.Is(err, auth.ErrUnknownToken) {
		t.Fatalf("an ended session: %v", err)
	}

	// Deleting the application ends its tokens.
	if err := svc.DeleteApplication(admin, app.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteApplication(admin, app.ID); !errors.Is(err, provider.ErrAppNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
}
