package oauth_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestApplicationsAreAdminOnlyAndShowTheSecretOnce(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.app(t, "My CI dashboard", "https://dash.example.com/callback\nhttps://dash.example.com/other", "api read_user", true)
	if a.ID == 0 || len(a.ApplicationID) != 64 || len(a.Secret) != 64 || a.ApplicationName != "My CI dashboard" ||
		a.CallbackURL != "https://dash.example.com/callback\nhttps://dash.example.com/other" || !a.Confidential {
		t.Fatalf("created %+v", a)
	}
	// The list shows no secret.
	resp, raw := e.JSON(t, http.MethodGet, "/api/v4/applications", nil, nil, "PRIVATE-TOKEN", e.RootToken)
	if resp.StatusCode != 200 || bytes.Contains(raw, []byte("secret")) || !bytes.Contains(raw, []byte(a.ApplicationID)) {
		t.Fatalf("list: %d %s", resp.StatusCode, raw)
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
		t.Fatalf("list %s", raw)
	}
	for _, k := range []string{"id", "application_id", "application_name", "callback_url", "confidential"} {
		if _, ok := list[0][k]; !ok {
			t.Fatalf("list entry without %s: %s", k, raw)
		}
	}
	// The secret is stored hashed: it appears nowhere in the database file.
	var db bytes.Buffer
	if _, err := e.Store.Backup(&db); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db.Bytes(), []byte(a.Secret)) {
		t.Fatal("the application secret is stored in clear")
	}

	// Other users: 403; anonymous: 401.
	u := e.CreateUser(t, "")
	if _, resp, err := u.Client.Applications.ListApplications(nil); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-admin list: %v", err)
	}
	if _, resp, err := u.Client.Applications.CreateApplication(&gitlab.CreateApplicationOptions{Name: gitlab.Ptr("x"),
		RedirectURI: gitlab.Ptr("https://x.example.com/cb"), Scopes: gitlab.Ptr("api")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-admin create: %v", err)
	}
	if resp, _ := e.JSON(t, http.MethodGet, "/api/v4/applications", nil, nil); resp.StatusCode != 401 {
		t.Fatalf("anonymous list: %d", resp.StatusCode)
	}
	if resp, err := u.Client.Applications.DeleteApplication(a.ID); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-admin delete: %v", err)
	}

	// Delete: 204, then 404; its tokens stop working.
	tok := e.passwordToken(t, "root", e.RootPassword, map[string][]string{"client_id": {a.ApplicationID}, "client_secret": {a.Secret}})
	if _, _, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser(); err != nil {
		t.Fatal(err)
	}
	if dr, err := e.Client.Applications.DeleteApplication(a.ID); err != nil || dr.StatusCode != 204 {
		t.Fatalf("delete: %v", err)
	}
	resp, raw = e.JSON(t, http.MethodDelete, "/api/v4/applications/"+store.IDString(a.ID), nil, nil, "PRIVATE-TOKEN", e.RootToken)
	if resp.StatusCode != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Application Not Found"}` {
		t.Fatalf("delete again: %d %s", resp.StatusCode, raw)
	}
	if _, resp, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser(); err == nil || resp.StatusCode != 401 {
		t.Fatalf("a deleted application's token still works: %v", err)
	}
}

func TestApplicationBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	e := start(t)
	cases := []struct {
		name string
		body string
		want string
	}{
		{"no name", `{"redirect_uri":"https://a.example.com/cb","scopes":"api"}`, `{"error":"name is missing"}`},
		{"no redirect", `{"name":"a","scopes":"api"}`, `{"error":"redirect_uri is missing"}`},
		{"no scopes", `{"name":"a","redirect_uri":"https://a.example.com/cb"}`, `{"error":"scopes is missing"}`},
		{"blank name", `{"name":"  ","redirect_uri":"https://a.example.com/cb","scopes":"api"}`, `{"message":{"name":["can't be blank"]}}`},
		{"long name", `{"name":"` + strings.Repeat("n", 256) + `","redirect_uri":"https://a.example.com/cb","scopes":"api"}`, `{"message":{"name":["is too long (maximum is 255 characters)"]}}`},
		{"relative redirect", `{"name":"a","redirect_uri":"/cb","scopes":"api"}`, `{"message":{"redirect_uri":["must be an absolute URI."]}}`},
		{"javascript redirect", `{"name":"a","redirect_uri":"javascript:alert(1)","scopes":"api"}`, `{"message":{"redirect_uri":["must use https, http or a private-use (reverse domain) scheme."]}}`},
		{"data redirect", `{"name":"a","redirect_uri":"data:text/html,hi","scopes":"api"}`, `{"message":{"redirect_uri":["must use https, http or a private-use (reverse domain) scheme."]}}`},
		{"fragment", `{"name":"a","redirect_uri":"https://a.example.com/cb#x","scopes":"api"}`, `{"message":{"redirect_uri":["cannot contain a fragment."]}}`},
		{"one bad among several", `{"name":"a","redirect_uri":"https://a.example.com/cb\njavascript:x","scopes":"api"}`, `{"message":{"redirect_uri":["must use https, http or a private-use (reverse domain) scheme."]}}`},
		{"huge redirect", `{"name":"a","redirect_uri":"https://a.example.com/` + strings.Repeat("p", 2100) + `","scopes":"api"}`, `{"message":{"redirect_uri":["is too long (maximum is 2000 characters)"]}}`},
		{"unknown scope", `{"name":"a","redirect_uri":"https://a.example.com/cb","scopes":"api sudo"}`, `{"message":{"scopes":["doesn't match configured on the server."]}}`},
		{"blank scopes", `{"name":"a","redirect_uri":"https://a.example.com/cb","scopes":" "}`, `{"message":{"scopes":["doesn't match configured on the server."]}}`},
		{"malformed JSON", `{"name":`, ``},
	}
	for _, c := range cases {
		resp, raw := e.JSON(t, http.MethodPost, "/api/v4/applications", strings.NewReader(c.body), nil,
			"PRIVATE-TOKEN", e.RootToken, "Content-Type", "application/json")
		if resp.StatusCode != 400 || (c.want != "" && strings.TrimSpace(string(raw)) != c.want) {
			t.Errorf("%s: %d %s, want 400 %s", c.name, resp.StatusCode, raw, c.want)
		}
	}
	apps, _, err := e.Client.Applications.ListApplications(nil)
	if err != nil || len(apps) != 0 {
		t.Fatalf("bad input stored applications: %v %v", apps, err)
	}
	// A native app's private-use scheme is accepted.
	e.app(t, "desktop", "com.example.desktop:/oauth2redirect", "read_user", false)
}
