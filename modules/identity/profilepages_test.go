package identity_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// newAuthorizedKey is a fresh ed25519 public key as an authorized_keys
// line with a comment, and its SHA256 fingerprint.
func newAuthorizedKey(t *testing.T, comment string) (string, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " " + comment, ssh.FingerprintSHA256(sp)
}

func wantSignInRedirect(t *testing.T, what string, p fennectest.Page) {
	t.Helper()
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("%s: %d %q, want the sign-in redirect", what, p.StatusCode, p.Header.Get("Location"))
	}
}

// TestProfilePages walks every page of the identity module's settings:
// each renders in the profile area for its user and sends an anonymous
// visitor to sign in; each form changes what the API shows, refuses bad
// input with the page and nothing changed, and never reaches another
// user's keys, addresses or tokens.
func TestProfilePages(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	b := s.SignedIn(t, "alice", alice.Password)
	elsewhere := s.SignedIn(t, "alice", alice.Password) // another browser of alice's
	anon := s.NewBrowser(t)

	pages := map[string]string{
		"/profile":                        `<h1>Profile</h1>`,
		"/profile/emails":                 `<h1>Emails</h1>`,
		"/profile/password/edit":          `<h1>Password</h1>`,
		"/profile/keys":                   `<h1>SSH Keys</h1>`,
		"/profile/personal_access_tokens": `<h1>Personal Access Tokens</h1>`,
	}
	for path, h1 := range pages {
		b.Get(t, path).Want(t, path, 200, h1, `<nav class="sidenav" aria-label="User settings">`,
			`<a href="`+path+`" aria-current="page">`, `<a href="/profile/keys">SSH Keys</a>`[:0]+`href="/profile">Settings</a>`)
		wantSignInRedirect(t, "anonymous "+path, anon.Get(t, path))
	}
	wantSignInRedirect(t, "anonymous key page", anon.Get(t, "/profile/keys/1"))
	// A post without a session is no write either.
	anon.Post(t, "/profile", url.Values{"name": {"x"}}).Want(t, "anonymous post", 403)

	// The profile: saved, shown by the API; a blank name is refused.
	page := b.Get(t, "/profile")
	csrf := page.CSRF()
	page.Want(t, "profile", 200, `value="User alice"`, `href="/alice"`)
	saved := b.Post(t, "/profile", url.Values{"authenticity_token": {csrf}, "name": {"Alice <A>"}, "location": {"Lyon"},
		"website_url": {"https://a.example"}, "bio": {"hi"}})
	saved.WantRedirect(t, "save profile", http.StatusSeeOther, "/profile?notice=profile")
	b.Get(t, "/profile?notice=profile").Want(t, "saved", 200, `Profile was successfully updated.`, `value="Alice &lt;A&gt;"`, `value="Lyon"`)
	me, _, err := alice.Client.Users.CurrentUser()
	if err != nil || me.Name != "Alice <A>" || me.Location != "Lyon" || me.WebsiteURL != "https://a.example" || me.Bio != "hi" {
		t.Fatalf("the API's user after the form: %v %+v", err, me)
	}
	b.Post(t, "/profile", url.Values{"authenticity_token": {csrf}, "name": {" "}, "location": {"Paris"}}).
		Want(t, "blank name", 422, `The profile was not saved: Name can&#39;t be blank.`, `value="Paris"`)
	b.Post(t, "/profile", url.Values{"authenticity_token": {csrf}, "name": {"Alice"}, "organization": {strings.Repeat("o", 256)}}).
		Want(t, "oversized", 422, `Organization is too long (maximum is 255 characters).`)
	b.Post(t, "/profile", url.Values{"authenticity_token": {"0123abcd"}, "name": {"Forged"}}).Want(t, "forged CSRF", 403)
	b.Post(t, "/profile", url.Values{"name": {"Forged"}}).Want(t, "missing CSRF", 403)
	if me, _, _ := alice.Client.Users.CurrentUser(); me.Name != "Alice <A>" || me.Location != "Lyon" {
		t.Fatalf("a refused form changed the user: %+v", me)
	}

	// E-mail addresses.
	b.Post(t, "/profile/emails", url.Values{"authenticity_token": {csrf}, "email": {"alice2@example.com"}}).
		WantRedirect(t, "add email", http.StatusSeeOther, "/profile/emails?notice=email_added")
	b.Post(t, "/profile/emails", url.Values{"authenticity_token": {csrf}, "email": {"bob@example.com"}}).
		Want(t, "taken email", 422, `The address was not added: Email has already been taken.`, `value="bob@example.com"`)
	b.Post(t, "/profile/emails", url.Values{"authenticity_token": {csrf}, "email": {"not an address"}}).
		Want(t, "bad email", 422, `Email is invalid.`)
	emails, _, err := alice.Client.Users.ListEmails()
	if err != nil || len(emails) != 1 || emails[0].Email != "alice2@example.com" {
		t.Fatalf("emails: %v %+v", err, emails)
	}
	aliceEmail := strconv.FormatInt(emails[0].ID, 10)
	b.Get(t, "/profile/emails").Want(t, "emails", 200, `alice2@example.com`, `href="/profile/emails/`+aliceEmail+`/delete"`)
	bobEmail, _, err := bob.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("bob2@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	bobEmailID := strconv.FormatInt(bobEmail.ID, 10)
	b.Get(t, "/profile/emails/"+bobEmailID+"/delete").Want(t, "confirm bob's email", 404)
	b.Post(t, "/profile/emails/"+bobEmailID+"/delete", url.Values{"authenticity_token": {csrf}}).Want(t, "remove bob's email", 404)
	b.Post(t, "/profile/emails/../../etc/delete", url.Values{"authenticity_token": {csrf}}).Want(t, "traversal", 404)
	if got, _, _ := bob.Client.Users.ListEmails(); len(got) != 1 {
		t.Fatalf("bob's addresses after alice's attempt: %+v", got)
	}
	b.Get(t, "/profile/emails/"+aliceEmail+"/delete").Want(t, "confirm", 200, `Remove the address alice2@example.com?`,
		`action="/profile/emails/`+aliceEmail+`/delete"`)
	b.Post(t, "/profile/emails/"+aliceEmail+"/delete", url.Values{"authenticity_token": {"bad"}}).Want(t, "forged remove", 403)
	b.Post(t, "/profile/emails/"+aliceEmail+"/delete", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "remove", http.StatusSeeOther, "/profile/emails?notice=email_removed")
	if got, _, _ := alice.Client.Users.ListEmails(); len(got) != 0 {
		t.Fatalf("alice's addresses after removing: %+v", got)
	}

	// SSH keys: an invalid key is refused and nothing stored; a good one
	// shows its fingerprint; bob's cannot be reached.
	b.Post(t, "/profile/keys", url.Values{"authenticity_token": {csrf}, "title": {"junk"}, "key": {"ssh-ed25519 AAAAnotakey"}}).
		Want(t, "invalid key", 422, `The key was not added: `, `Key is invalid.`, `ssh-ed25519 AAAAnotakey</textarea>`)
	if keys, _, _ := alice.Client.Users.ListSSHKeys(nil); len(keys) != 0 {
		t.Fatalf("an invalid key was stored: %+v", keys)
	}
	line, fp := newAuthorizedKey(t, "alice@laptop")
	fp = strings.ReplaceAll(fp, "+", "&#43;") // as html/template writes it
	added := b.Post(t, "/profile/keys", url.Values{"authenticity_token": {csrf}, "title": {""}, "key": {line}})
	keys, _, err := alice.Client.Users.ListSSHKeys(nil)
	if err != nil || len(keys) != 1 || keys[0].Title != "alice@laptop" {
		t.Fatalf("keys after the form: %v %+v", err, keys)
	}
	keyID := strconv.FormatInt(keys[0].ID, 10)
	added.WantRedirect(t, "add key", http.StatusSeeOther, "/profile/keys/"+keyID+"?notice=key_added")
	b.Get(t, "/profile/keys/"+keyID+"?notice=key_added").Want(t, "key page", 200, `The SSH key was added.`, fp, `<dt>Fingerprint (MD5)</dt>`, `>ssh-ed25519 `+strings.ReplaceAll(strings.Fields(line)[1], "+", "&#43;"))
	b.Get(t, "/profile/keys").Want(t, "key list", 200, fp, `href="/profile/keys/`+keyID+`/delete"`)
	b.Post(t, "/profile/keys", url.Values{"authenticity_token": {csrf}, "title": {"again"}, "key": {line}}).
		Want(t, "duplicate key", 422, `The key was not added`)
	bobLine, _ := newAuthorizedKey(t, "bob")
	bobKey, _, err := bob.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("bob"), Key: gitlab.Ptr(bobLine)})
	if err != nil {
		t.Fatal(err)
	}
	bobKeyID := strconv.FormatInt(bobKey.ID, 10)
	b.Get(t, "/profile/keys/"+bobKeyID).Want(t, "bob's key", 404)
	b.Get(t, "/profile/keys/"+bobKeyID+"/delete").Want(t, "confirm bob's key", 404)
	b.Post(t, "/profile/keys/"+bobKeyID+"/delete", url.Values{"authenticity_token": {csrf}}).Want(t, "remove bob's key", 404)
	b.Get(t, "/profile/keys/01").Want(t, "non-canonical id", 404)
	if got, _, _ := bob.Client.Users.ListSSHKeys(nil); len(got) != 1 {
		t.Fatalf("bob's keys after alice's attempt: %+v", got)
	}
	b.Get(t, "/profile/keys/"+keyID+"/delete").Want(t, "confirm key", 200, `Remove the SSH key alice@laptop (`+fp+`)?`)
	b.Post(t, "/profile/keys/"+keyID+"/delete", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "remove key", http.StatusSeeOther, "/profile/keys?notice=key_removed")
	if got, _, _ := alice.Client.Users.ListSSHKeys(nil); len(got) != 0 {
		t.Fatalf("alice's keys after removing: %+v", got)
	}

	// Personal access tokens: shown once, with the scopes asked; revoked.
	tokens := b.Get(t, "/profile/personal_access_tokens")
	tokens.Want(t, "tokens", 200, `value="api"`, `value="read_user"`)
	tokens.WantNot(t, "tokens", `value="sudo"`)
	b.Post(t, "/profile/personal_access_tokens", url.Values{"authenticity_token": {csrf}, "name": {"ci"}}).
		Want(t, "no scopes", 422, `Select at least one scope.`, `value="ci"`)
	b.Post(t, "/profile/personal_access_tokens", url.Values{"authenticity_token": {csrf}, "name": {"ci"}, "scopes": {"read_user"}, "expires_at": {"2001-01-01"}}).
		Want(t, "past expiry", 422, `Expires at must be in the future.`, `value="read_user" checked`)
	created := b.Post(t, "/profile/personal_access_tokens", url.Values{"authenticity_token": {csrf}, "name": {"reader"},
		"scopes": {"read_user"}, "expires_at": {"2999-12-31"}})
	m := regexp.MustCompile(`id="created-token" type="text" readonly value="([A-Za-z0-9]+)"`).FindStringSubmatch(created.Body)
	if created.StatusCode != 200 || m == nil {
		t.Fatalf("created: %d %.2000s", created.StatusCode, created.Body)
	}
	secret := m[1]
	if created.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the token's page may be cached: %q", created.Header.Get("Cache-Control"))
	}
	again := b.Get(t, "/profile/personal_access_tokens")
	again.Want(t, "list", 200, `<bdi>reader</bdi>`, `2999-12-31`)
	again.WantNot(t, "list after creating", secret)
	reader := s.NewClient(t, secret)
	if u, _, err := reader.Users.CurrentUser(); err != nil || u.Username != "alice" {
		t.Fatalf("the new token reading the user: %v %+v", err, u)
	}
	if _, resp, err := reader.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("x@example.com")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a read_user token wrote: %v", err)
	}
	revokeLink := regexp.MustCompile(`href="/profile/personal_access_tokens/(\d+)/revoke" aria-label="Revoke reader"`).FindStringSubmatch(again.Body)
	if revokeLink == nil {
		t.Fatalf("no revoke link for reader: %.3000s", again.Body)
	}
	tokenID := revokeLink[1]
	var bobPATs []struct{ ID int64 }
	if resp, body := s.JSON(t, http.MethodGet, "/api/v4/personal_access_tokens", nil, &bobPATs,
		"PRIVATE-TOKEN", bob.Token); resp.StatusCode != 200 || len(bobPATs) == 0 {
		t.Fatalf("bob's tokens: %d %s", resp.StatusCode, body)
	}
	bobTokenID := strconv.FormatInt(bobPATs[0].ID, 10)
	b.Get(t, "/profile/personal_access_tokens/"+bobTokenID+"/revoke").Want(t, "confirm bob's token", 404)
	b.Post(t, "/profile/personal_access_tokens/"+bobTokenID+"/revoke", url.Values{"authenticity_token": {csrf}}).Want(t, "revoke bob's", 404)
	if _, _, err := bob.Client.Users.CurrentUser(); err != nil {
		t.Fatalf("bob's token after alice's attempt: %v", err)
	}
	b.Get(t, "/profile/personal_access_tokens/"+tokenID+"/revoke").Want(t, "confirm revoke", 200, `Revoke the personal access token reader?`)
	b.Post(t, "/profile/personal_access_tokens/"+tokenID+"/revoke", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "revoke", http.StatusSeeOther, "/profile/personal_access_tokens?notice=token_revoked")
	if _, resp, err := reader.Users.CurrentUser(); err == nil || resp.StatusCode != 401 {
		t.Fatalf("a revoked token still works: %v", err)
	}
	b.Get(t, "/profile/personal_access_tokens").Want(t, "revoked list", 200, `Inactive personal access tokens (1)`, `Revoked`)

	// The password: a wrong current one and a mismatched confirmation are
	// refused; the change lets alice sign in with the new one only.
	b.Post(t, "/profile/password", url.Values{"authenticity_token": {csrf}, "current_password": {"wrong-pw"},
		"password": {"new-secret-1"}, "password_confirmation": {"new-secret-1"}}).
		Want(t, "wrong current", 422, `Current password is invalid.`)
	b.Post(t, "/profile/password", url.Values{"authenticity_token": {csrf}, "current_password": {alice.Password},
		"password": {"new-secret-1"}, "password_confirmation": {"new-secret-2"}}).
		Want(t, "mismatch", 422, `Password confirmation doesn&#39;t match Password.`)
	b.Post(t, "/profile/password", url.Values{"authenticity_token": {csrf}, "current_password": {alice.Password},
		"password": {"short"}, "password_confirmation": {"short"}}).Want(t, "short", 422, `Password is too short`)
	s.Drain(t)
	elsewhere.Get(t, "/profile").Want(t, "another session before the change", 200)
	b.Post(t, "/profile/password", url.Values{"authenticity_token": {csrf}, "current_password": {alice.Password},
		"password": {"new-secret-1"}, "password_confirmation": {"new-secret-1"}}).
		WantRedirect(t, "change", http.StatusSeeOther, "/profile/password/edit?notice=password")
	// Every other browser is signed out; this one stays.
	s.Drain(t)
	wantSignInRedirect(t, "another session after the change", elsewhere.Get(t, "/profile"))
	b.Get(t, "/profile/password/edit?notice=password").Want(t, "this session after the change", 200, `Password was successfully updated.`)
	s.SignedIn(t, "alice", "new-secret-1")
	old := s.NewBrowser(t)
	form := old.Get(t, "/users/sign_in")
	if p := old.Post(t, "/users/sign_in", url.Values{"login": {"alice"}, "password": {alice.Password}, "authenticity_token": {form.CSRF()}}); p.StatusCode == http.StatusSeeOther {
		t.Fatal("the old password still signs in")
	}
}
