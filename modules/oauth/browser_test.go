package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/oauth2"
)

// callbackServer is the client application's redirect endpoint: it records
// what the browser brings back and answers with a small page.
type callbackServer struct {
	*httptest.Server
	got chan url.Values
}

func newCallbackServer(t *testing.T) *callbackServer {
	cb := &callbackServer{got: make(chan url.Values, 8)}
	cb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		cb.got <- r.URL.Query()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><title>client callback</title><p id="done">back at the client</p>`))
	}))
	t.Cleanup(cb.Close)
	return cb
}

// next waits for the browser's next visit to the callback.
func (cb *callbackServer) next(t *testing.T) url.Values {
	t.Helper()
	select {
	case q := <-cb.got:
		return q
	case <-time.After(60 * time.Second):
		t.Fatal("the browser never reached the client's callback")
		return nil
	}
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// The whole authorization-code flow in a real browser: sign in on the page,
// approve, come back to the client, exchange the code (PKCE S256) through
// golang.org/x/oauth2, call the API with the token through client-go. Then
// deny, a wrong password, a tampered state, a reused code and a redirect
// URI that does not match.
func TestAuthorizationCodeFlowInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	e := start(t)
	shots := chrome.Artifacts(t, "oauth")
	u := e.CreateUser(t, "")
	cb := newCallbackServer(t)
	a := e.app(t, "Dashboard <Test>", cb.URL+"/callback", "api read_user", true)
	conf := &oauth2.Config{ClientID: a.ApplicationID, ClientSecret: a.Secret, RedirectURL: cb.URL + "/callback",
		Scopes: []string{"read_user"}, Endpoint: oauth2.Endpoint{AuthURL: e.URL + "/oauth/authorize", TokenURL: e.URL + "/oauth/token"}}

	tab := b.Tab(t)
	state := "st-" + oauth2.GenerateVerifier()[:16] + " &=+/"
	verifier := oauth2.GenerateVerifier()
	must(t, "open authorize", chromedp.Do(tab, chromedp.Navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier))),
		chromedp.WaitVisible(chromedp.ID("login"))))
	chrome.Screenshot(t, tab, shots, "sign-in.png")
	chrome.CheckAccessibility(t, tab, "sign-in page")

	// A wrong password shows the page again with the reason, focused on
	// nothing but the form.
	must(t, "wrong password", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("login"), u.Username),
		chromedp.SendKeys(chromedp.ID("password"), "not-the-password"), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("sign-in-error"))))
	msg, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("sign-in-error")))
	must(t, "error text", err)
	if msg != "Invalid login or password." {
		t.Fatalf("error shown: %q", msg)
	}
	chrome.Screenshot(t, tab, shots, "sign-in-wrong-password.png")

	must(t, "sign in", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("login"), u.Username),
		chromedp.SendKeys(chromedp.ID("password"), u.Password), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("authorize"))))
	page, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
	must(t, "consent text", err)
	if !strings.Contains(page, "Authorize Dashboard <Test>?") || !strings.Contains(page, "read_user") || strings.Contains(page, "api:") ||
		!strings.Contains(page, u.Username) {
		t.Fatalf("consent page: %q", page)
	}
	chrome.Screenshot(t, tab, shots, "consent.png")
	chrome.CheckAccessibility(t, tab, "consent page")

	must(t, "authorize", chromedp.Do(tab, chromedp.Click(chromedp.ID("authorize")), chromedp.WaitVisible(chromedp.ID("done"))))
	q := cb.next(t)
	if q.Get("state") != state || len(q.Get("code")) != 64 || q.Has("error") {
		t.Fatalf("callback %v, want state %q and a code", q, state)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	must(t, "exchange", err)
	if tok.Extra("scope") != "read_user" || tok.ExpiresIn != 7200 {
		t.Fatalf("token %+v", tok)
	}
	c, err := gitlab.NewOAuthClient(tok.AccessToken, gitlab.WithBaseURL(e.URL+"/api/v4"), gitlab.WithoutRetries())
	must(t, "client", err)
	me, _, err := c.Users.CurrentUser()
	if err != nil || me.ID != u.ID {
		t.Fatalf("GET /user with the token: %v %v", me, err)
	}

	// The code is spent; using it again also revokes what it gave.
	_, err = conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("reused code: %v", err)
	}
	if _, r, err := c.Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("the token of a reused code still works: %v", err)
	}

	// Deny: back at the client with access_denied; the browser is signed
	// in, so the consent page comes at once.
	must(t, "deny", chromedp.Do(tab, chromedp.Navigate(conf.AuthCodeURL("deny-state")), chromedp.WaitVisible(chromedp.ID("deny")),
		chromedp.Click(chromedp.ID("deny")), chromedp.WaitVisible(chromedp.ID("done"))))
	if q := cb.next(t); q.Get("error") != "access_denied" || q.Get("state") != "deny-state" || q.Has("code") {
		t.Fatalf("deny: %v", q)
	}

	// A tampered state: the client keeps the state it sent and checks the
	// one that comes back, which the server returns unchanged, so a
	// swapped state is caught and no code is exchanged.
	kept := "kept-" + oauth2.GenerateVerifier()[:12]
	tampered := kept + "-tampered"
	must(t, "tampered", chromedp.Do(tab, chromedp.Navigate(conf.AuthCodeURL(tampered)), chromedp.WaitVisible(chromedp.ID("authorize")),
		chromedp.Click(chromedp.ID("authorize")), chromedp.WaitVisible(chromedp.ID("done"))))
	q = cb.next(t)
	if q.Get("state") != tampered {
		t.Fatalf("the server changed the state: %v", q)
	}
	if q.Get("state") == kept {
		t.Fatal("the client's state check cannot tell")
	}
	// That code, had it been accepted, is bound to this client and
	// redirect URI: another redirect URI cannot redeem it.
	bad := *conf
	bad.RedirectURL = cb.URL + "/elsewhere"
	if _, err := bad.Exchange(context.Background(), q.Get("code")); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("code with another redirect URI: %v", err)
	}

	// A redirect URI that does not match: an error page at the server,
	// never a redirect.
	for _, redirect := range []string{"http://evil.example.com/callback", cb.URL + "/other", "javascript:alert(1)"} {
		wrong := *conf
		wrong.RedirectURL = redirect
		must(t, "mismatched redirect", chromedp.Do(tab, chromedp.Navigate(wrong.AuthCodeURL("x")), chromedp.WaitVisible(chromedp.CSS("p.error"))))
		loc, err := chromedp.Run(tab, chromedp.Location())
		must(t, "location", err)
		title, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("h1")))
		must(t, "title", err)
		if !strings.HasPrefix(loc, e.URL+"/oauth/authorize") || title != "Invalid redirect URI" {
			t.Fatalf("redirect %s: at %s, %q", redirect, loc, title)
		}
	}
	select {
	case q := <-cb.got:
		t.Fatalf("the client's callback was reached after an error page: %v", q)
	default:
	}

	// The user registers an application of their own on the page.
	must(t, "own applications", chromedp.Do(tab, chromedp.Navigate(e.URL+"/oauth/applications"), chromedp.WaitVisible(chromedp.ID("name")),
		chromedp.SendKeys(chromedp.ID("name"), "My own tool"), chromedp.SendKeys(chromedp.ID("redirect_uri"), cb.URL+"/callback"),
		chromedp.Click(chromedp.ID("register")), chromedp.WaitVisible(chromedp.ID("created-secret"))))
	secret, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("created-secret")))
	must(t, "secret", err)
	if len(secret) != 64 {
		t.Fatalf("secret shown: %q", secret)
	}
	chrome.Screenshot(t, tab, shots, "applications.png")
	chrome.CheckAccessibility(t, tab, "applications page")

	// A new browser without the session must sign in again.
	other := b.Tab(t)
	must(t, "fresh browser", chromedp.Do(other, chromedp.Navigate(conf.AuthCodeURL("s")), chromedp.WaitVisible(chromedp.ID("login"))))
}

// The account mail's link in a real browser: a mismatched confirmation is
// shown on the page, the right one leads to the sign-in page with a
// notice, and the new password signs in there.
func TestResetPasswordInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	e := startWithResetClock(t)
	shots := chrome.Artifacts(t, "oauth")
	u, link := e.newHire(t, "browserhire")
	const chosen = "browser-chosen-password"

	tab := b.Tab(t)
	must(t, "open the link", chromedp.Do(tab, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("user_password"))))
	chrome.Screenshot(t, tab, shots, "reset-password.png")
	chrome.CheckAccessibility(t, tab, "reset password page")
	must(t, "mismatch", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("user_password"), chosen),
		chromedp.SendKeys(chromedp.ID("user_password_confirmation"), chosen+"-typo"), chromedp.Click(chromedp.ID("change-password")),
		chromedp.WaitVisible(chromedp.ID("reset-error"))))
	msg, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("reset-error")))
	must(t, "error text", err)
	if msg != "Password confirmation doesn't match the password." {
		t.Fatalf("error shown: %q", msg)
	}
	must(t, "change", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("user_password"), chosen),
		chromedp.SendKeys(chromedp.ID("user_password_confirmation"), chosen), chromedp.Click(chromedp.ID("change-password")),
		chromedp.WaitVisible(chromedp.CSS("p.notice"))))
	loc, err := chromedp.Run(tab, chromedp.Location())
	must(t, "location", err)
	if loc != e.URL+"/users/sign_in?notice=password_changed" {
		t.Fatalf("after the change the browser is at %s", loc)
	}
	chrome.Screenshot(t, tab, shots, "reset-password-done.png")
	must(t, "sign in", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("login"), u.Username),
		chromedp.SendKeys(chromedp.ID("password"), chosen), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("sign-out"))))
}
