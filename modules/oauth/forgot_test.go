package oauth_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

const (
	noticeResetRequested = "If an account has this e-mail address, a link to choose a new password is on its way to it."
	resetSubject         = "Reset password instructions"
)

// wantForgotPage checks the "forgot your password" page: its status, the
// headers of every page, and message in its error box ("" for none).
func wantForgotPage(t *testing.T, what string, resp *http.Response, page string, status int, message string) {
	t.Helper()
	wantPage(t, what, resp, page, status, "")
	if message != "" && !strings.Contains(page, `role="alert" id="forgot-error">`+html.EscapeString(message)+`</p>`) {
		t.Fatalf("%s: the page does not say %q:\n%s", what, message, page)
	}
	if !strings.Contains(page, `<form method="post" action="/users/password">`) || !strings.Contains(page, `<label for="user_email">E-mail</label>`) {
		t.Fatalf("%s: no form:\n%s", what, page)
	}
}

// forgot opens the "forgot your password" page in w and sends its form
// with address, returning the answer.
func (w *webClient) forgot(t *testing.T, address string) *http.Response {
	t.Helper()
	resp, page := w.page(t, http.MethodGet, "/users/password/new", nil)
	wantForgotPage(t, "forgot page", resp, page, http.StatusOK, "")
	f := formFields(page)
	if len(f.Get("authenticity_token")) != 64 || f.Has("_method") {
		t.Fatalf("forgot form fields %v", f)
	}
	f.Set("user[email]", address)
	resp, _ = w.page(t, http.MethodPost, "/users/password", f)
	return resp
}

// wantRequested: the answer of a request, the same for every address.
func wantRequested(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/users/sign_in?notice=reset_requested" {
		t.Fatalf("%s: %d %v", what, resp.StatusCode, resp.Header)
	}
}

// createWithPassword creates a user who chose their own password.
func (e *env) createWithPassword(t *testing.T, username, password string, opts ...func(*gitlab.CreateUserOptions)) *gitlab.User {
	t.Helper()
	o := &gitlab.CreateUserOptions{Email: gitlab.Ptr(username + "@example.com"), Username: gitlab.Ptr(username),
		Name: gitlab.Ptr("User " + username), Password: gitlab.Ptr(password), SkipConfirmation: gitlab.Ptr(true)}
	for _, f := range opts {
		f(o)
	}
	u, _, err := e.Client.Users.CreateUser(o)
	if err != nil {
		t.Fatalf("create %s: %v", username, err)
	}
	return u
}

// TestForgotPasswordMailsALink: the sign-in page links to the "forgot your
// password" form; an account's address gets a link (one a minute), which
// sets the password once; the answer is the same for an unknown address,
// and blocked and directory accounts get no mail.
func TestForgotPasswordMailsALink(t *testing.T) {
	t.Parallel()
	e := startWithResetClock(t)
	const old, chosen = "old-password-1", "chosen-password-4"
	u := e.createWithPassword(t, "forgetful", old)
	w := e.web(t)
	resp, page := w.page(t, http.MethodGet, "/users/sign_in", nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `<a href="/users/password/new">Forgot your password?</a>`) {
		t.Fatalf("sign-in page: %d\n%s", resp.StatusCode, page)
	}

	// Refused forms mail nothing (the one mail counted below is the
	// accepted request's) and show the address again, escaped.
	_, page = w.page(t, http.MethodGet, "/users/password/new", nil)
	form := formFields(page)
	for _, c := range []struct {
		what, email, token string
		status             int
		message            string
	}{
		{"no CSRF token", u.Email, "", 403, "The form expired. Send it again."},
		{"forged CSRF token", u.Email, strings.Repeat("ab", 32), 403, "The form expired. Send it again."},
		{"blank address", "  ", form.Get("authenticity_token"), 422, "E-mail can't be blank."},
		{"malformed address", "forgetful", form.Get("authenticity_token"), 422, "E-mail is invalid."},
		{"hostile address", `"><script>alert(1)</script>@x`, form.Get("authenticity_token"), 422, "E-mail is invalid."},
		{"oversized address", strings.Repeat("a", 300) + "@example.com", form.Get("authenticity_token"), 422, "E-mail is invalid."},
	} {
		f := url.Values{"user[email]": {c.email}}
		if c.token != "" {
			f.Set("authenticity_token", c.token)
		}
		resp, page := w.page(t, http.MethodPost, "/users/password", f)
		wantForgotPage(t, c.what, resp, page, c.status, c.message)
		if len(c.email) > 255 && strings.Contains(page, strings.Repeat("a", 300)) {
			t.Fatalf("%s: the oversized address is shown again", c.what)
		}
	}

	// An unknown address and a known one (in other case) get the same answer.
	wantRequested(t, "unknown address", w.forgot(t, "nobody@example.com"))
	wantRequested(t, "known address", w.forgot(t, "Forgetful@Example.com"))
	resp, page = w.page(t, http.MethodGet, "/users/sign_in?notice=reset_requested", nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `<p class="notice" role="status">`+html.EscapeString(noticeResetRequested)+`</p>`) {
		t.Fatalf("sign-in page after the request: %d\n%s", resp.StatusCode, page)
	}
	first := e.resetLinks(t, u.Email, 1)[0]
	if first.subject != resetSubject || !strings.Contains(first.text, "forgetful") {
		t.Fatalf("reset mail %q:\n%s", first.subject, first.text)
	}

	// A second request within the minute mails nothing; a minute later it
	// mails a new link, which replaces the first.
	wantRequested(t, "second request", w.forgot(t, u.Email))
	e.clock.advance(time.Minute + time.Second)
	wantRequested(t, "a minute later", w.forgot(t, u.Email))
	links := e.resetLinks(t, u.Email, 2)
	time.Sleep(200 * time.Millisecond) // a third mail would have been queued before the second's
	if links = e.resetLinks(t, u.Email, 2); len(links) != 2 || links[1].link == first.link {
		t.Fatalf("%d mails to %s after three requests, want 2 with two links", len(links), u.Email)
	}
	resp, page = w.send(t, w.openResetPage(t, first.link), "user[password]", chosen, "user[password_confirmation]", chosen)
	wantPage(t, "replaced link", resp, page, 422, msgInvalid)
	resp, _ = w.send(t, w.openResetPage(t, links[1].link), "user[password]", chosen, "user[password_confirmation]", chosen)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset with the mailed link: %d", resp.StatusCode)
	}
	if e.sessionStatus(t, u.Username, chosen) != http.StatusCreated || e.sessionStatus(t, u.Username, old) != http.StatusUnauthorized {
		t.Fatal("the mailed link did not change the password")
	}

	// Blocked and directory accounts: the same answer, no mail. A request
	// for an active account after theirs shows when they would have come.
	blocked := e.createWithPassword(t, "blockedforgetful", old)
	if err := e.Client.Users.BlockUser(blocked.ID); err != nil {
		t.Fatal(err)
	}
	ldap := e.createWithPassword(t, "ldapforgetful", old, func(o *gitlab.CreateUserOptions) {
		o.Provider, o.ExternUID = gitlab.Ptr("ldapmain"), gitlab.Ptr("uid=ldapforgetful,ou=people,dc=example,dc=com")
	})
	later := e.createWithPassword(t, "laterforgetful", old)
	for _, address := range []string{blocked.Email, ldap.Email, later.Email} {
		wantRequested(t, address, w.forgot(t, address))
	}
	e.resetLinks(t, later.Email, 1)
	time.Sleep(200 * time.Millisecond)
	for _, address := range []string{blocked.Email, ldap.Email, "nobody@example.com"} {
		if n := e.mailsTo(t, address); n != 0 {
			t.Fatalf("%d mails to %s", n, address)
		}
	}
}

// TestForgotPasswordIsRateLimited: unknown addresses count against the
// client's address as wrong passwords do (429 with Retry-After), known
// ones do not.
func TestForgotPasswordIsRateLimited(t *testing.T) {
	t.Parallel()
	e := startWithResetClock(t, fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) {
		c.SignInThrottle.AddressFailures = 3
	}))
	u := e.createWithPassword(t, "ratelimited", "old-password-2")
	w := e.web(t)
	for range 5 {
		wantRequested(t, "known address", w.forgot(t, u.Email)) // free
	}
	for i := range 3 {
		wantRequested(t, "unknown address", w.forgot(t, "guess"+store.IDString(int64(i))+"@example.com"))
	}
	resp := w.forgot(t, u.Email)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("request after three unknown addresses: %d %v", resp.StatusCode, resp.Header)
	}
}
