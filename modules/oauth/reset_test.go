package oauth_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/oauth"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// startWithResetClock is start with the test clock given to identity as
// well, so that a reset token's 48 hours pass without waiting.
func startWithResetClock(t *testing.T, opts ...fennectest.Option) *env {
	t.Helper()
	clock := &testClock{}
	opts = append([]fennectest.Option{fennectest.WithModules(fennec.NewModule("reset-test-clock",
		fennec.Supply[oauth.Clock](clock), fennec.Supply[identity.Clock](clock)))}, opts...)
	return &env{Server: stocktest.Start(t, opts...), clock: clock}
}

// newHire creates a user with reset_password through client-go, as an
// administrator would, and returns the link mailed to them.
func (e *env) newHire(t *testing.T, username string, opts ...func(*gitlab.CreateUserOptions)) (*gitlab.User, string) {
	t.Helper()
	o := &gitlab.CreateUserOptions{Email: gitlab.Ptr(username + "@example.com"), Username: gitlab.Ptr(username),
		Name: gitlab.Ptr("New " + username), ResetPassword: gitlab.Ptr(true)}
	for _, f := range opts {
		f(o)
	}
	u, resp, err := e.Client.Users.CreateUser(o)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create %s: %v", username, err)
	}
	return u, e.resetLink(t, username+"@example.com")
}

// resetLink waits for the account mail to address in the file outbox
// (<data>/mail/outbox, where mail goes without SMTP) and returns its link.
func (e *env) resetLink(t *testing.T, address string) string {
	t.Helper()
	return e.resetLinks(t, address, 1)[0].link
}

// mailedLink is a mail of the outbox with a reset link.
type mailedLink struct{ subject, link, text string }

// resetLinks waits until the outbox holds at least n mails to address and
// returns them all, each with its reset link.
func (e *env) resetLinks(t *testing.T, address string, n int) []mailedLink {
	t.Helper()
	outbox := filepath.Join(e.DataDir, "mail", "outbox")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []mailedLink
		entries, _ := os.ReadDir(outbox) // in name order: the order they were written
		for _, entry := range entries {
			if !strings.HasSuffix(entry.Name(), ".eml") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(outbox, entry.Name()))
			if err != nil {
				t.Fatal(err)
			}
			to, subject, text := mailText(t, raw)
			if to != address {
				continue
			}
			prefix := e.URL + "/users/password/edit?reset_password_token="
			i := strings.Index(text, prefix)
			if i < 0 {
				t.Fatalf("no reset link in the mail:\n%s", text)
			}
			out = append(out, mailedLink{subject: subject, link: strings.Fields(text[i:])[0], text: text})
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mails to %s in %s, want %d", len(out), address, outbox, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mailsTo counts the mails to address in the outbox now.
func (e *env) mailsTo(t *testing.T, address string) int {
	t.Helper()
	outbox := filepath.Join(e.DataDir, "mail", "outbox")
	entries, _ := os.ReadDir(outbox)
	n := 0
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".eml") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(outbox, entry.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if to, _, _ := mailText(t, raw); to == address {
			n++
		}
	}
	return n
}

// mailText is a mail's recipient, its subject and its text part.
func mailText(t *testing.T, raw []byte) (string, string, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	to, err := mail.ParseAddress(msg.Header.Get("To"))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			body, err := io.ReadAll(p) // quoted-printable is decoded by the reader
			if err != nil {
				t.Fatal(err)
			}
			subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			return to.Address, subject, string(body)
		}
	}
}

// sessionStatus is the status of POST /api/v4/session with a password.
func (e *env) sessionStatus(t *testing.T, login, password string) int {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"login": login, "password": password})
	resp := e.Do(t, http.MethodPost, "/api/v4/session", bytes.NewReader(b), "Content-Type", "application/json")
	resp.Body.Close()
	return resp.StatusCode
}

// openResetPage opens the mailed link in w and returns the form's fields.
func (w *webClient) openResetPage(t *testing.T, link string) url.Values {
	t.Helper()
	path := strings.TrimPrefix(link, w.e.URL)
	resp, page := w.page(t, http.MethodGet, path, nil)
	wantPage(t, "reset page", resp, page, http.StatusOK, "")
	for _, want := range []string{`<form method="post" action="/users/password">`,
		`<label for="user_password">New password</label>`, `<label for="user_password_confirmation">Confirm new password</label>`,
		`name="user[password]"`, `name="user[password_confirmation]"`, `autocomplete="new-password"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("reset page lacks %s:\n%s", want, page)
		}
	}
	f := formFields(page)
	token, _ := url.Parse(link)
	if f.Get("user[reset_password_token]") != token.Query().Get("reset_password_token") || len(f.Get("authenticity_token")) != 64 ||
		f.Get("_method") != "put" {
		t.Fatalf("reset form fields %v", f)
	}
	return f
}

// wantPage checks a page's status, the headers every page has, and that it
// shows message (in its error box when the status is not 200).
func wantPage(t *testing.T, what string, resp *http.Response, page string, status int, message string) {
	t.Helper()
	h := resp.Header
	if resp.StatusCode != status || h.Get("X-Frame-Options") != "DENY" || h.Get("Cache-Control") != "no-store" ||
		h.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		!strings.HasPrefix(h.Get("Content-Type"), "text/html") || strings.Contains(page, "<script") {
		t.Fatalf("%s: %d %v, want %d\n%s", what, resp.StatusCode, h, status, page)
	}
	if message != "" && !strings.Contains(page, `role="alert" id="reset-error">`+html.EscapeString(message)+`</p>`) {
		t.Fatalf("%s: the page does not say %q:\n%s", what, message, page)
	}
}

// send posts the reset form with fields changed as given ("" deletes one).
func (w *webClient) send(t *testing.T, form url.Values, set ...string) (*http.Response, string) {
	t.Helper()
	f := url.Values{}
	for k, v := range form {
		f[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			f.Del(set[i])
		} else {
			f.Set(set[i], set[i+1])
		}
	}
	return w.page(t, http.MethodPost, "/users/password", f)
}

const (
	msgInvalid = "Reset password token is invalid"
	msgShort   = "Password is too short (minimum is 8 characters)."
	// msgExpiredForm: a failed CSRF check; the page then has no form.
	msgExpiredForm = "The form expired. Open the link from the mail again."
)

// TestResetPasswordLinkSetsThePasswordOnce: the link of the account mail
// opens a form; what the form refuses changes nothing, the right password
// is set once and the link then stops working.
func TestResetPasswordLinkSetsThePasswordOnce(t *testing.T) {
	t.Parallel()
	e := startWithResetClock(t)
	u, link := e.newHire(t, "hire")
	w := e.web(t)
	form := w.openResetPage(t, link)
	const chosen = "chosen-password-1"

	refused := []struct {
		what    string
		set     []string
		status  int
		message string
	}{
		{"mismatched confirmation", []string{"user[password]", chosen, "user[password_confirmation]", chosen + "x"}, 422,
			"Password confirmation doesn't match the password."},
		{"short password", []string{"user[password]", "short7!", "user[password_confirmation]", "short7!"}, 422, msgShort},
		{"empty password", []string{"user[password]", "", "user[password_confirmation]", ""}, 422, msgShort},
		{"password over 72 bytes", []string{"user[password]", strings.Repeat("é", 37), "user[password_confirmation]", strings.Repeat("é", 37)}, 422,
			"Password is too long (maximum is 72 characters)."},
		{"no CSRF token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "authenticity_token", ""}, 403,
			msgExpiredForm},
		{"forged CSRF token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "authenticity_token", strings.Repeat("ab", 32)}, 403,
			msgExpiredForm},
		{"unknown token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "user[reset_password_token]", "x" + strings.Repeat("A", 19)}, 422, msgInvalid},
		{"no token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "user[reset_password_token]", ""}, 422, msgInvalid},
		{"oversized token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "user[reset_password_token]", strings.Repeat("A", 5000)}, 422, msgInvalid},
		{"hostile token", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "user[reset_password_token]", `"><script>alert(1)</script>`}, 422, msgInvalid},
		{"another method", []string{"user[password]", chosen, "user[password_confirmation]", chosen, "_method", "delete"}, 400, ""},
	}
	for _, c := range refused {
		resp, page := w.send(t, form, c.set...)
		wantPage(t, c.what, resp, page, c.status, c.message)
		if hasForm := strings.Contains(page, "<form"); hasForm != (c.status == 422 && c.message != msgInvalid) {
			t.Fatalf("%s: form shown %v:\n%s", c.what, hasForm, page)
		}
	}
	// The cookie is the other half of the CSRF check: the right token from
	// a browser without the cookie is refused too.
	resp, page := e.web(t).send(t, form, "user[password]", chosen, "user[password_confirmation]", chosen)
	wantPage(t, "CSRF token without its cookie", resp, page, 403, msgExpiredForm)
	// Nothing was set: none of those passwords signs in.
	for _, p := range []string{chosen, chosen + "x", "short7!"} {
		if got := e.sessionStatus(t, u.Username, p); got != 401 {
			t.Fatalf("sign-in with %q after refused forms: %d", p, got)
		}
	}

	resp, _ = w.send(t, form, "user[password]", chosen, "user[password_confirmation]", chosen)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/users/sign_in?notice=password_changed" {
		t.Fatalf("reset: %d %v", resp.StatusCode, resp.Header)
	}
	resp, page = w.page(t, http.MethodGet, resp.Header.Get("Location"), nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `<p class="notice" role="status">Your password was changed. Sign in with your new password.</p>`) {
		t.Fatalf("sign-in page after the reset: %d\n%s", resp.StatusCode, page)
	}
	if got := e.sessionStatus(t, u.Username, chosen); got != http.StatusCreated {
		t.Fatalf("sign-in with the new password: %d", got)
	}
	e.passwordToken(t, u.Email, chosen, nil) // the OAuth password grant too
	if resp := e.web(t).signIn(t, u.Username, chosen); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in page with the new password: %d", resp.StatusCode)
	}
	var view struct {
		PasswordExpired *bool `json:"password_expired"`
	}
	if resp, raw := e.JSON(t, http.MethodGet, "/api/v4/users/"+store.IDString(u.ID), nil, &view, "PRIVATE-TOKEN", e.RootToken); resp.StatusCode != 200 ||
		view.PasswordExpired == nil || *view.PasswordExpired {
		t.Fatalf("the chosen password is still marked expired: %d %s", resp.StatusCode, raw)
	}

	// The link works once: the same form again, or the link opened anew.
	resp, page = w.send(t, form, "user[password]", "another-password", "user[password_confirmation]", "another-password")
	wantPage(t, "used link", resp, page, 422, msgInvalid)
	if strings.Contains(page, "<form") {
		t.Fatalf("the page of a refused token still has the form:\n%s", page)
	}
	again := e.web(t)
	resp, page = again.send(t, again.openResetPage(t, link), "user[password]", "another-password", "user[password_confirmation]", "another-password")
	wantPage(t, "used link in another browser", resp, page, 422, msgInvalid)
	if e.sessionStatus(t, u.Username, "another-password") != 401 || e.sessionStatus(t, u.Username, chosen) != 201 {
		t.Fatal("a used link changed the password")
	}

	// A link without a token shows no form.
	resp, page = w.page(t, http.MethodGet, "/users/password/edit", nil)
	wantPage(t, "link without a token", resp, page, 422, msgInvalid)
}

// TestResetPasswordRefusals: an expired link, a blocked user and a
// directory (LDAP) user are refused and their password is not changed;
// PUT, as GitLab's form method, works as POST.
func TestResetPasswordRefusals(t *testing.T) {
	t.Parallel()
	e := startWithResetClock(t)
	const chosen = "chosen-password-2"
	setPassword := func(w *webClient, form url.Values) (*http.Response, string) {
		return w.send(t, form, "user[password]", chosen, "user[password_confirmation]", chosen)
	}

	// Blocked: refused while blocked; once unblocked the link works, by PUT.
	blocked, link := e.newHire(t, "blockedhire")
	w := e.web(t)
	form := w.openResetPage(t, link)
	if err := e.Client.Users.BlockUser(blocked.ID); err != nil {
		t.Fatal(err)
	}
	resp, page := setPassword(w, form)
	wantPage(t, "blocked user", resp, page, 422, "Your account is blocked: its password cannot be set. Ask an administrator.")
	if err := e.Client.Users.UnblockUser(blocked.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.sessionStatus(t, blocked.Username, chosen); got != 401 {
		t.Fatalf("the blocked user's password changed: %d", got)
	}
	form.Set("user[password]", chosen)
	form.Set("user[password_confirmation]", chosen)
	resp, _ = w.page(t, http.MethodPut, "/users/password", form)
	if resp.StatusCode != http.StatusSeeOther || e.sessionStatus(t, blocked.Username, chosen) != 201 {
		t.Fatalf("PUT after unblocking: %d", resp.StatusCode)
	}

	// A directory user's password is the directory's.
	ldap, link := e.newHire(t, "ldaphire", func(o *gitlab.CreateUserOptions) {
		o.Provider, o.ExternUID = gitlab.Ptr("ldapmain"), gitlab.Ptr("uid=ldaphire,ou=people,dc=example,dc=com")
	})
	w = e.web(t)
	resp, page = setPassword(w, w.openResetPage(t, link))
	wantPage(t, "directory user", resp, page, 422, "Your account signs in through a directory (LDAP): change your password there.")
	if got := e.sessionStatus(t, ldap.Username, chosen); got != 401 {
		t.Fatalf("the directory user's password changed: %d", got)
	}

	// Expired: 48 hours after the mail.
	late, link := e.newHire(t, "latehire")
	w = e.web(t)
	form = w.openResetPage(t, link)
	e.clock.advance(48*time.Hour + time.Minute)
	resp, page = setPassword(w, form)
	wantPage(t, "expired link", resp, page, 422, "Reset password token has expired. Ask for a new link.")
	if got := e.sessionStatus(t, late.Username, chosen); got != 401 {
		t.Fatalf("an expired link changed the password: %d", got)
	}
}

// TestResetTokenGuessesAreRateLimited: unknown tokens count against the
// client's address as wrong passwords do; once it is locked even a right
// token waits (429, Retry-After).
func TestResetTokenGuessesAreRateLimited(t *testing.T) {
	t.Parallel()
	e := startWithResetClock(t, fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) {
		c.SignInThrottle.AddressFailures = 3
	}))
	u, link := e.newHire(t, "guessed")
	w := e.web(t)
	form := w.openResetPage(t, link)
	const chosen = "chosen-password-3"
	for i := range 3 {
		resp, page := w.send(t, form, "user[password]", chosen, "user[password_confirmation]", chosen,
			"user[reset_password_token]", "guess"+strings.Repeat("x", 15+i))
		wantPage(t, "guess", resp, page, 422, msgInvalid)
	}
	resp, page := w.send(t, form, "user[password]", chosen, "user[password_confirmation]", chosen)
	wantPage(t, "right token after the guesses", resp, page, 429, "")
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(page, "Too many failed attempts.") {
		t.Fatalf("429 without Retry-After or message: %v\n%s", resp.Header, page)
	}
	// One allowance per address: its sign-ins wait too.
	if got := e.sessionStatus(t, u.Username, chosen); got != 429 {
		t.Fatalf("sign-in from the locked address: %d", got)
	}
}
