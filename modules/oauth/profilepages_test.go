package oauth_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

func wantSignInRedirect(t *testing.T, what string, p fennectest.Page) {
	t.Helper()
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("%s: %d %q, want the sign-in redirect", what, p.StatusCode, p.Header.Get("Location"))
	}
}

// signedInAs is a browser signed in with a User-Agent of its own.
func signedInAs(t *testing.T, e *env, login, password, agent string) *fennectest.Browser {
	t.Helper()
	b := e.NewBrowser(t)
	b.Transport = agentTransport{agent}
	token := b.Get(t, "/users/sign_in").CSRF()
	if p := b.Post(t, "/users/sign_in", url.Values{"login": {login}, "password": {password}, "authenticity_token": {token}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in %s: %d", login, p.StatusCode)
	}
	return b
}

type agentTransport struct{ agent string }

func (a agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("User-Agent", a.agent)
	return http.DefaultTransport.RoundTrip(r)
}

// TestProfileSessionsPage: a user's sessions are listed with their browser
// and address; revoking another one ends it (its cookie is sent to sign
// in), "all other sessions" ends the rest but this one; another user's
// session cannot be reached, and a forged form changes nothing.
func TestProfileSessionsPage(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	wantSignInRedirect(t, "anonymous sessions", e.NewBrowser(t).Get(t, "/profile/active_sessions"))
	wantSignInRedirect(t, "anonymous applications", e.NewBrowser(t).Get(t, "/profile/applications"))

	laptop := signedInAs(t, e, "alice", alice.Password, "Laptop/1.0 <b>")
	phone := signedInAs(t, e, "alice", alice.Password, "Phone/2.0")
	tablet := signedInAs(t, e, "alice", alice.Password, "Tablet/3.0")
	bobs := signedInAs(t, e, "bob", bob.Password, "Bob/1.0")

	page := laptop.Get(t, "/profile/active_sessions")
	page.Want(t, "sessions", 200, `<h1>Active Sessions</h1>`, `<a href="/profile/active_sessions" aria-current="page">Active Sessions</a>`,
		`<bdi>Laptop/1.0 &lt;b&gt;</bdi>`, `<bdi>Phone/2.0</bdi>`, `<bdi>Tablet/3.0</bdi>`, `This browser`, `127.0.0.1`,
		`Sign out of all other sessions`)
	page.WantNot(t, "sessions", `Bob/1.0`)
	if strings.Count(page.Body, `This browser`) != 1 {
		t.Error("more than one session is this browser's")
	}
	ids := regexp.MustCompile(`href="/profile/active_sessions/(\d+)/revoke"`).FindAllStringSubmatch(page.Body, -1)
	if len(ids) != 3 {
		t.Fatalf("revoke links: %v", ids)
	}
	// Newest first: the tablet, the phone, the laptop.
	phoneID := ids[1][1]
	bobPage := bobs.Get(t, "/profile/active_sessions")
	bobID := regexp.MustCompile(`href="/profile/active_sessions/(\d+)/revoke"`).FindStringSubmatch(bobPage.Body)[1]
	csrf := page.CSRF()

	laptop.Get(t, "/profile/active_sessions/"+bobID+"/revoke").Want(t, "confirm bob's", 404)
	laptop.Post(t, "/profile/active_sessions/"+bobID+"/revoke", url.Values{"authenticity_token": {csrf}}).Want(t, "revoke bob's", 404)
	laptop.Post(t, "/profile/active_sessions/"+phoneID+"/revoke", url.Values{"authenticity_token": {"forged"}}).Want(t, "forged", 403)
	bobs.Get(t, "/profile/active_sessions").Want(t, "bob still signed in", 200)
	phone.Get(t, "/profile/active_sessions").Want(t, "phone still signed in", 200)

	laptop.Get(t, "/profile/active_sessions/"+phoneID+"/revoke").Want(t, "confirm", 200, `Sign out the session started`, `from 127.0.0.1?`)
	laptop.Post(t, "/profile/active_sessions/"+phoneID+"/revoke", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "revoke phone", http.StatusSeeOther, "/profile/active_sessions?notice=session_ended")
	wantSignInRedirect(t, "the phone's cookie", phone.Get(t, "/profile/active_sessions"))
	tablet.Get(t, "/profile/active_sessions").Want(t, "tablet", 200)

	laptop.Post(t, "/profile/active_sessions/others", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "others", http.StatusSeeOther, "/profile/active_sessions?notice=others_ended")
	wantSignInRedirect(t, "the tablet's cookie", tablet.Get(t, "/profile/active_sessions"))
	after := laptop.Get(t, "/profile/active_sessions?notice=others_ended")
	after.Want(t, "after", 200, `Every other session was signed out.`, `<bdi>Laptop/1.0 &lt;b&gt;</bdi>`)
	after.WantNot(t, "after", `Tablet/3.0`, `Sign out of all other sessions`)
	bobs.Get(t, "/profile/active_sessions").Want(t, "bob unaffected", 200, `Bob/1.0`)

	// Revoking this browser's own session signs it out.
	own := regexp.MustCompile(`href="/profile/active_sessions/(\d+)/revoke"`).FindStringSubmatch(after.Body)[1]
	laptop.Post(t, "/profile/active_sessions/"+own+"/revoke", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "own", http.StatusSeeOther, "/users/sign_in")
	wantSignInRedirect(t, "the laptop after signing itself out", laptop.Get(t, "/profile/active_sessions"))
}

// TestProfileApplicationsPage: an application the user gave a token to is
// listed with its scopes; revoking it stops its token at once; another
// user's authorization is not reachable.
func TestProfileApplicationsPage(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	app := e.app(t, "Reader <app>", "https://client.example/cb", "api read_user", true)
	other := e.app(t, "Other", "https://other.example/cb", "api", true)
	client := url.Values{"client_id": {app.ApplicationID}, "client_secret": {app.Secret}}
	tok := e.passwordToken(t, "alice", alice.Password, url.Values{"client_id": client["client_id"], "client_secret": client["client_secret"], "scope": {"read_user"}})
	access := tok["access_token"].(string)
	e.passwordToken(t, "bob", bob.Password, url.Values{"client_id": {other.ApplicationID}, "client_secret": {other.Secret}})

	b := e.SignedIn(t, "alice", alice.Password)
	page := b.Get(t, "/profile/applications")
	page.Want(t, "applications", 200, `<bdi>Reader &lt;app&gt;</bdi>`, `read_user`, `href="/oauth/applications"`,
		`href="/profile/applications/`+strconv.FormatInt(int64(app.ID), 10)+`/revoke"`)
	page.WantNot(t, "applications", `Other`)
	csrf := page.CSRF()
	otherID := strconv.FormatInt(int64(other.ID), 10)
	b.Get(t, "/profile/applications/"+otherID+"/revoke").Want(t, "confirm bob's app", 404)
	b.Post(t, "/profile/applications/"+otherID+"/revoke", url.Values{"authenticity_token": {csrf}}).Want(t, "revoke bob's app", 404)
	appID := strconv.FormatInt(int64(app.ID), 10)
	b.Post(t, "/profile/applications/"+appID+"/revoke", url.Values{"authenticity_token": {"x"}}).Want(t, "forged", 403)
	if u, _, err := e.bearer(t, access).Users.CurrentUser(); err != nil || u.Username != "alice" {
		t.Fatalf("the token before revoking: %v", err)
	}
	b.Get(t, "/profile/applications/"+appID+"/revoke").Want(t, "confirm", 200, `Revoke the access you gave Reader &lt;app&gt;?`)
	b.Post(t, "/profile/applications/"+appID+"/revoke", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "revoke", http.StatusSeeOther, "/profile/applications?notice=revoked")
	if _, resp, err := e.bearer(t, access).Users.CurrentUser(); err == nil || resp.StatusCode != 401 {
		t.Fatalf("a revoked application's token still works: %v", err)
	}
	b.Get(t, "/profile/applications?notice=revoked").Want(t, "after", 200, `The application&#39;s access was revoked.`, `You have not authorized any application.`)
}
