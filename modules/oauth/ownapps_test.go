package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

var createdField = regexp.MustCompile(`<code id="created-(client-id|secret)">([0-9a-f]{64})</code>`)

// registerOwn registers an application on the signed-in user's page and
// returns its client id and secret, read from the page.
func (w *webClient) registerOwn(t *testing.T, form url.Values) (status int, page, clientID, secret string) {
	t.Helper()
	_, list := w.page(t, http.MethodGet, "/oauth/applications", nil)
	f := formFields(list)
	for k, v := range form {
		f[k] = v
	}
	resp, page := w.page(t, http.MethodPost, "/oauth/applications", f)
	for _, m := range createdField.FindAllStringSubmatch(page, -1) {
		if m[1] == "client-id" {
			clientID = m[2]
		} else {
			secret = m[2]
		}
	}
	return resp.StatusCode, page, clientID, secret
}

func TestUsersRegisterTheirOwnApplications(t *testing.T) {
	t.Parallel()
	var bus *events.Bus
	e := start(t, fennectest.WithExtract(&bus))
	alice, bob := e.CreateUser(t, ""), e.CreateUser(t, "")

	// Signed out: the sign-in page, coming back here.
	anon := e.web(t)
	resp, page := anon.page(t, http.MethodGet, "/oauth/applications", nil)
	if resp.StatusCode != 401 || !strings.Contains(page, `name="return_to" value="/oauth/applications"`) {
		t.Fatalf("signed out: %d %s", resp.StatusCode, page)
	}

	w := e.web(t)
	w.signIn(t, alice.Username, alice.Password)
	status, page, id, secret := w.registerOwn(t, url.Values{"name": {"Alice's tool"}, "redirect_uri": {"https://tool.example.com/cb\r\nhttp://127.0.0.1:9/cb"},
		"scopes": {"api", "read_user"}, "confidential": {"1"}})
	if status != 201 || id == "" || secret == "" || !strings.Contains(page, "Alice&#39;s tool") {
		t.Fatalf("register: %d %s", status, page)
	}
	// The secret is shown once: the list shows the id only.
	_, page = w.page(t, http.MethodGet, "/oauth/applications", nil)
	if !strings.Contains(page, id) || strings.Contains(page, secret) {
		t.Fatalf("list: %s", page)
	}
	// It works as a client.
	tok := e.passwordToken(t, alice.Username, alice.Password, url.Values{"client_id": {id}, "client_secret": {secret}})
	if tok["scope"] != "api read_user" {
		t.Fatalf("token %v", tok)
	}

	// Bad input is shown on the page and stores nothing.
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"name": {""}, "redirect_uri": {"https://x.example.com/cb"}, "scopes": {"api"}}, "Name can&#39;t be blank"},
		{url.Values{"name": {"x"}, "redirect_uri": {"javascript:alert(1)"}, "scopes": {"api"}}, "Redirect URI must use https"},
		{url.Values{"name": {"x"}, "redirect_uri": {"https://x.example.com/cb"}}, "Scopes doesn&#39;t match"},
		{url.Values{"name": {"x"}, "redirect_uri": {"https://x.example.com/cb"}, "scopes": {"sudo"}}, "Scopes doesn&#39;t match"},
		{url.Values{"name": {"<script>alert(1)</script>", "again"}, "redirect_uri": {"https://x.example.com/cb"}, "scopes": {"api"}}, "The field name is repeated."},
	} {
		status, page, _, _ := w.registerOwn(t, c.form)
		if status != 400 || !strings.Contains(page, c.want) || strings.Contains(page, "<script>") {
			t.Errorf("%v: %d, want 400 with %q\n%s", c.form, status, c.want, page)
		}
	}
	if apps, _, err := e.Client.Applications.ListApplications(nil); err != nil || len(apps) != 1 {
		t.Fatalf("applications stored: %d %v", len(apps), err)
	}

	// Bob sees none of them and cannot delete Alice's.
	wb := e.web(t)
	wb.signIn(t, bob.Username, bob.Password)
	_, page = wb.page(t, http.MethodGet, "/oauth/applications", nil)
	if strings.Contains(page, id) {
		t.Fatal("bob sees alice's application")
	}
	apps, _, _ := e.Client.Applications.ListApplications(nil)
	del := "/oauth/applications/" + store.IDString(apps[0].ID) + "/delete"
	if resp, _ := wb.page(t, http.MethodPost, del, formFields(page)); resp.StatusCode != 404 {
		t.Fatalf("bob deleting alice's application: %d", resp.StatusCode)
	}
	// Alice needs her CSRF token.
	if resp, _ := w.page(t, http.MethodPost, del, url.Values{"authenticity_token": {"forged"}}); resp.StatusCode != 403 {
		t.Fatalf("forged delete: %d", resp.StatusCode)
	}
	_, page = w.page(t, http.MethodGet, "/oauth/applications", nil)
	if resp, _ := w.page(t, http.MethodPost, del, url.Values{"authenticity_token": {formFields(page).Get("authenticity_token")}}); resp.StatusCode != 303 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if _, r, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("the deleted application's token still works: %v", err)
	}

	// A deleted user's applications, tokens and sessions go with them.
	w.registerOwn(t, url.Values{"name": {"second"}, "redirect_uri": {"https://s.example.com/cb"}, "scopes": {"read_user"}})
	if _, err := e.Client.Users.DeleteUser(alice.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if apps, _, err := e.Client.Applications.ListApplications(nil); err != nil || len(apps) != 0 {
		t.Fatalf("a deleted user's applications remain: %v %v", apps, err)
	}
}
