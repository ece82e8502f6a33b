package oauth_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/oauth"
)

// Spent codes, sessions and revoked tokens are deleted by the sweep; live
// refresh tokens are kept, even when their access token has expired.
func TestSweepDeletesOnlyWhatCannotMatter(t *testing.T) {
	t.Parallel()
	var sweeper oauth.Sweeper
	e := start(t, fennectest.WithExtract(&sweeper))
	u := e.CreateUser(t, "")
	a := e.app(t, "app", "https://app.example.com/cb", "api", true)
	w := e.web(t)
	w.signIn(t, u.Username, u.Password) // a session
	w.approve(t, url.Values{"client_id": {a.ApplicationID}, "redirect_uri": {"https://app.example.com/cb"},
		"response_type": {"code"}}, "authorize") // a code, never used
	revoked := e.passwordToken(t, u.Username, u.Password, nil)
	if resp, _ := e.post(t, "/oauth/revoke", url.Values{"token": {revoked["access_token"].(string)}}); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	kept := e.passwordToken(t, u.Username, u.Password, nil)

	ctx := context.Background()
	if n, err := sweeper.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep at once: %d %v", n, err)
	}
	e.clock.advance(8 * 24 * time.Hour)
	if n, err := sweeper.Sweep(ctx); err != nil || n != 3 {
		t.Fatalf("sweep a week later: %d %v, want the session, the code and the revoked token", n, err)
	}
	if n, err := sweeper.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep again: %d %v", n, err)
	}
	resp, body := e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {kept["refresh_token"].(string)}})
	if resp.StatusCode != 200 {
		t.Fatalf("the kept refresh token: %d %v", resp.StatusCode, body)
	}
	resp, body = e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {revoked["refresh_token"].(string)}})
	wantOAuthError(t, "a swept refresh token", resp, body, 400, "invalid_grant")
}
