package identity_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const impNotFound = `{"message":"404 Impersonation Token Not Found"}`

// tokenKeys are the keys every token view has (the spec's list without the
// secret, which only the creating answer shows).
var tokenKeys = []string{"id", "name", "scopes", "active", "revoked", "impersonation", "created_at", "expires_at"}

func wantTokenView(t *testing.T, what string, m map[string]any, withSecret bool) {
	t.Helper()
	for _, k := range tokenKeys {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: key %q missing: %v", what, k, keysOf(m))
		}
	}
	if _, ok := m["token"]; ok != withSecret {
		t.Fatalf("%s: token key present = %v, want %v", what, ok, withSecret)
	}
	if withSecret && !tokenRE.MatchString(m["token"].(string)) {
		t.Fatalf("%s: token %q is not 20 letters and digits", what, m["token"])
	}
	if !msTimestamp.MatchString(m["created_at"].(string)) {
		t.Fatalf("%s: created_at %v", what, m["created_at"])
	}
}

func TestCreateImpersonationToken(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	path := "/api/v4/users/" + store.IDString(alice.ID) + "/impersonation_tokens"
	tomorrow := utcDay(time.Now().Add(24 * time.Hour))
	yesterday := utcDay(time.Now().Add(-24 * time.Hour))

	t.Run("api token, form-encoded", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodPost, path, "name=deploy&scopes[]=api&expires_at=2099-12-31")
		r.expectStatus(t, http.StatusCreated)
		m := r.object(t)
		wantTokenView(t, "create", m, true)
		if m["name"] != "deploy" || m["impersonation"] != true || m["active"] != true || m["revoked"] != false ||
			m["expires_at"] != "2099-12-31" || !slices.Equal(toStrings(m["scopes"]), []string{"api"}) {
			t.Fatalf("created %v", m)
		}
		secret := m["token"].(string)
		var me map[string]any
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/user", nil, &me, "PRIVATE-TOKEN", secret)
		if resp.StatusCode != http.StatusOK || me["username"] != "alice" || num(me["id"]) != alice.ID {
			t.Fatalf("the token does not act as alice: %d %s", resp.StatusCode, body)
		}
		// api scope may write as alice
		k, _, err := s.NewClient(t, secret).Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("imp"), Key: gitlab.Ptr(ed25519Key(t))})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := alice.Client.Users.GetSSHKey(k.ID); err != nil {
			t.Fatalf("the key added with the impersonation token is not alice's: %v", err)
		}
	})
	t.Run("read_user token, JSON, client-go", func(t *testing.T) {
		tok, resp, err := s.Client.Users.CreateImpersonationToken(alice.ID, &gitlab.CreateImpersonationTokenOptions{
			Name: gitlab.Ptr("reader"), Scopes: &[]string{"read_user"}})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatal(err)
		}
		if !tokenRE.MatchString(tok.Token) || !tok.Active || tok.Revoked || tok.Name != "reader" || tok.ExpiresAt != nil ||
			!slices.Equal(tok.Scopes, []string{"read_user"}) {
			t.Fatalf("%+v", tok)
		}
		ro := s.NewClient(t, tok.Token)
		if me, _, err := ro.Users.CurrentUser(); err != nil || me.ID != alice.ID {
			t.Fatalf("read_user GET /user: %v", err)
		}
		if list, _, err := ro.Users.ListUsers(nil); err != nil || len(list) != 3 {
			t.Fatalf("read_user GET /users: %v %v", err, list)
		}
		if u, _, err := ro.Users.GetUser(bob.ID, gitlab.GetUsersOptions{}); err != nil || u.Username != "bob" {
			t.Fatalf("read_user GET /users/:id: %v", err)
		}
		call(t, s, tok.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "x", "key": ed25519Key(t)}).
			expect(t, http.StatusForbidden, badScope)
		call(t, s, tok.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{"email": "ro@example.com"}).
			expect(t, http.StatusForbidden, badScope)
	})
	t.Run("both scopes, duplicates collapse", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodPost, path, map[string]any{"name": "both", "scopes": []string{"api", "read_user", "api"}, "expires_at": tomorrow})
		r.expectStatus(t, http.StatusCreated)
		m := r.object(t)
		if !slices.Equal(toStrings(m["scopes"]), []string{"api", "read_user"}) || m["expires_at"] != tomorrow || m["active"] != true {
			t.Fatalf("%v", m)
		}
		if st := meStatus(t, s, m["token"].(string)); st != http.StatusOK {
			t.Fatalf("token expiring tomorrow: %d", st)
		}
	})
	t.Run("expired", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodPost, path, map[string]any{"name": "old", "scopes": []string{"api"}, "expires_at": yesterday})
		r.expectStatus(t, http.StatusCreated)
		m := r.object(t)
		if m["expires_at"] != yesterday || m["active"] != false || m["revoked"] != false {
			t.Fatalf("%v", m)
		}
		call(t, s, m["token"].(string), http.MethodGet, "/api/v4/user", nil).expect(t, http.StatusUnauthorized, unauthorized)
		got, _, err := s.Client.Users.GetImpersonationToken(alice.ID, num(m["id"]))
		if err != nil || got.Active || got.Revoked {
			t.Fatalf("GET: %v %+v", err, got)
		}
	})
	t.Run("expires_at as an ISO 8601 time (client-go)", func(t *testing.T) {
		tok, _, err := s.Client.Users.CreateImpersonationToken(alice.ID, &gitlab.CreateImpersonationTokenOptions{
			Name: gitlab.Ptr("timed"), Scopes: &[]string{"api"}, ExpiresAt: gitlab.Ptr(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC))})
		if err != nil || tok.ExpiresAt == nil || tok.ExpiresAt.String() != "2030-01-02" {
			t.Fatalf("%v %+v", err, tok)
		}
	})

	errors := []struct {
		name string
		body any
		want string
	}{
		{"scopes missing", map[string]any{"name": "x"}, `{"error":"scopes is missing"}`},
		{"scopes empty", map[string]any{"name": "x", "scopes": []string{}}, `{"error":"scopes is missing"}`},
		{"unknown scope", map[string]any{"name": "x", "scopes": []string{"sudo_everything"}}, `{"error":"scopes does not have a valid value"}`},
		{"unknown scope among good ones", map[string]any{"name": "x", "scopes": []string{"api", "write_repository"}}, `{"error":"scopes does not have a valid value"}`},
		{"unknown scope, form", "name=x&scopes[]=nope", `{"error":"scopes does not have a valid value"}`},
		{"name missing", map[string]any{"scopes": []string{"api"}}, `{"error":"name is missing"}`},
		{"bad expires_at", map[string]any{"name": "x", "scopes": []string{"api"}, "expires_at": "next week"}, `{"error":"expires_at is invalid"}`},
	}
	for _, c := range errors {
		t.Run(c.name, func(t *testing.T) {
			call(t, s, s.RootToken, http.MethodPost, path, c.body).expect(t, http.StatusBadRequest, c.want)
		})
	}
	t.Run("access", func(t *testing.T) {
		body := map[string]any{"name": "x", "scopes": []string{"api"}}
		call(t, s, alice.Token, http.MethodPost, path, body).expect(t, http.StatusForbidden, forbidden)
		call(t, s, bob.Token, http.MethodPost, path, body).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodPost, path, body).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/987654/impersonation_tokens", body).expect(t, http.StatusNotFound, notFoundUser)
	})
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestListAndRevokeImpersonationTokens(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	path := "/api/v4/users/" + store.IDString(alice.ID) + "/impersonation_tokens"
	yesterday := utcDay(time.Now().Add(-24 * time.Hour))

	mk := func(name, expires string) madeToken {
		body := map[string]any{"name": name, "scopes": []string{"api"}}
		if expires != "" {
			body["expires_at"] = expires
		}
		r := call(t, s, s.RootToken, http.MethodPost, path, body)
		r.expectStatus(t, http.StatusCreated)
		m := r.object(t)
		return madeToken{num(m["id"]), m["token"].(string)}
	}
	a1, expired, a2, a3 := mk("one", ""), mk("expired", yesterday), mk("two", "2099-01-01"), mk("three", "")
	bobTok, _, err := s.Client.Users.CreateImpersonationToken(bob.ID, &gitlab.CreateImpersonationTokenOptions{Name: gitlab.Ptr("bob's"), Scopes: &[]string{"api"}})
	if err != nil {
		t.Fatal(err)
	}
	pat, _, err := s.Client.Users.CreatePersonalAccessToken(alice.ID, &gitlab.CreatePersonalAccessTokenOptions{Name: gitlab.Ptr("pat"), Scopes: &[]string{"api"}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(r apiResp) []string {
		t.Helper()
		var out []string
		for _, m := range r.array(t) {
			wantTokenView(t, r.req, m, false)
			if m["impersonation"] != true {
				t.Fatalf("%s lists a non-impersonation token %v", r.req, m)
			}
			out = append(out, m["name"].(string))
		}
		return out
	}

	t.Run("list with state", func(t *testing.T) {
		for query, want := range map[string][]string{
			"":                {"one", "expired", "two", "three"},
			"?state=all":      {"one", "expired", "two", "three"},
			"?state=active":   {"one", "two", "three"},
			"?state=inactive": {"expired"},
		} {
			r := call(t, s, s.RootToken, http.MethodGet, path+query, nil)
			r.expectStatus(t, http.StatusOK)
			if got := names(r); !slices.Equal(got, want) {
				t.Fatalf("GET %s: %v, want %v", query, got, want)
			}
			if r.Header.Get("X-Total") != store.IDString(int64(len(want))) {
				t.Fatalf("GET %s: X-Total %q", query, r.Header.Get("X-Total"))
			}
		}
		call(t, s, s.RootToken, http.MethodGet, path+"?state=revoked", nil).expect(t, http.StatusBadRequest, `{"error":"state does not have a valid value"}`)
	})
	t.Run("pagination", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, path+"?per_page=3&page=2", nil)
		r.expectStatus(t, http.StatusOK)
		if got := names(r); !slices.Equal(got, []string{"three"}) {
			t.Fatalf("page 2: %v", got)
		}
		r.pageHeaders(t, 4, 2, 3, 2, "", "1")
		list, resp, err := s.Client.Users.GetAllImpersonationTokens(alice.ID, &gitlab.GetAllImpersonationTokensOptions{
			ListOptions: gitlab.ListOptions{PerPage: 2}, State: gitlab.Ptr("active")})
		if err != nil || len(list) != 2 || list[0].ID != a1.id || list[1].ID != a2.id || resp.TotalItems != 3 || resp.NextPage != 2 {
			t.Fatalf("client-go: %v %v %+v", err, list, resp)
		}
		for _, tok := range list {
			if tok.Token != "" {
				t.Fatalf("the list shows a secret: %+v", tok)
			}
		}
	})
	t.Run("get one", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, path+"/"+store.IDString(a2.id), nil)
		r.expectStatus(t, http.StatusOK)
		m := r.object(t)
		wantTokenView(t, "GET one", m, false)
		if num(m["id"]) != a2.id || m["name"] != "two" || m["expires_at"] != "2099-01-01" || m["active"] != true || m["impersonation"] != true {
			t.Fatalf("%v", m)
		}
		tok, _, err := s.Client.Users.GetImpersonationToken(alice.ID, a1.id)
		if err != nil || tok.Name != "one" || tok.Token != "" || !tok.Active {
			t.Fatalf("client-go: %v %+v", err, tok)
		}
		call(t, s, s.RootToken, http.MethodGet, path+"/987654", nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodGet, path+"/"+store.IDString(bobTok.ID), nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodGet, path+"/"+store.IDString(pat.ID), nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/987654/impersonation_tokens/"+store.IDString(a1.id), nil).expect(t, http.StatusNotFound, notFoundUser)
	})
	t.Run("access", func(t *testing.T) {
		for _, p := range []string{path, path + "/" + store.IDString(a1.id)} {
			call(t, s, alice.Token, http.MethodGet, p, nil).expect(t, http.StatusForbidden, forbidden)
			call(t, s, bob.Token, http.MethodGet, p, nil).expect(t, http.StatusForbidden, forbidden)
			call(t, s, "", http.MethodGet, p, nil).expect(t, http.StatusUnauthorized, unauthorized)
		}
		call(t, s, alice.Token, http.MethodDelete, path+"/"+store.IDString(a1.id), nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodDelete, path+"/"+store.IDString(a1.id), nil).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/987654/impersonation_tokens", nil).expect(t, http.StatusNotFound, notFoundUser)
		if st := meStatus(t, s, a1.secret); st != http.StatusOK {
			t.Fatalf("a refused revoke revoked the token: %d", st)
		}
	})
	t.Run("not listed as personal access tokens", func(t *testing.T) {
		for _, c := range []struct {
			token string
			extra []string
		}{{alice.Token, nil}, {s.RootToken, []string{"SUDO", "alice"}}, {a1.secret, nil}} {
			r := call(t, s, c.token, http.MethodGet, "/api/v4/personal_access_tokens", nil, c.extra...)
			r.expectStatus(t, http.StatusOK)
			var got []string
			for _, m := range r.array(t) {
				if m["impersonation"] != false {
					t.Fatalf("GET /personal_access_tokens lists %v", m)
				}
				got = append(got, m["name"].(string))
			}
			if !slices.Equal(got, []string{"fennectest", "pat"}) {
				t.Fatalf("GET /personal_access_tokens: %v", got)
			}
		}
	})
	t.Run("revoke", func(t *testing.T) {
		if _, err := s.Client.Users.RevokeImpersonationToken(alice.ID, a3.id); err != nil {
			t.Fatal(err)
		}
		call(t, s, a3.secret, http.MethodGet, "/api/v4/user", nil).expect(t, http.StatusUnauthorized, unauthorized)
		r := call(t, s, s.RootToken, http.MethodGet, path+"/"+store.IDString(a3.id), nil)
		r.expectStatus(t, http.StatusOK)
		if m := r.object(t); m["revoked"] != true || m["active"] != false {
			t.Fatalf("after revoke: %v", m)
		}
		if got := names(call(t, s, s.RootToken, http.MethodGet, path+"?state=inactive", nil)); !slices.Equal(got, []string{"expired", "three"}) {
			t.Fatalf("inactive after revoke: %v", got)
		}
		if got := names(call(t, s, s.RootToken, http.MethodGet, path+"?state=active", nil)); !slices.Equal(got, []string{"one", "two"}) {
			t.Fatalf("active after revoke: %v", got)
		}
		// the other tokens are untouched
		if st := meStatus(t, s, a1.secret); st != http.StatusOK {
			t.Fatalf("another token stopped working: %d", st)
		}
		if st := meStatus(t, s, expired.secret); st != http.StatusUnauthorized {
			t.Fatalf("expired token: %d", st)
		}
		call(t, s, s.RootToken, http.MethodDelete, path+"/987654", nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodDelete, path+"/"+store.IDString(bobTok.ID), nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodDelete, path+"/"+store.IDString(pat.ID), nil).expect(t, http.StatusNotFound, impNotFound)
		call(t, s, s.RootToken, http.MethodDelete, "/api/v4/users/987654/impersonation_tokens/"+store.IDString(a1.id), nil).expect(t, http.StatusNotFound, notFoundUser)
		if st := meStatus(t, s, bobTok.Token); st != http.StatusOK {
			t.Fatalf("bob's token was revoked through alice: %d", st)
		}
		if st := meStatus(t, s, pat.Token); st != http.StatusOK {
			t.Fatalf("the personal access token was revoked as an impersonation token: %d", st)
		}
	})
	t.Run("revoke answers 204", func(t *testing.T) {
		call(t, s, s.RootToken, http.MethodDelete, path+"/"+store.IDString(a2.id), nil).expect(t, http.StatusNoContent, "")
		if st := meStatus(t, s, a2.secret); st != http.StatusUnauthorized {
			t.Fatalf("revoked token: %d", st)
		}
	})
}

func TestPersonalAccessTokens(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	path := "/api/v4/users/" + store.IDString(alice.ID) + "/personal_access_tokens"

	r := call(t, s, s.RootToken, http.MethodPost, path, map[string]any{"name": "ci", "scopes": []string{"api"}, "expires_at": "2099-06-30"})
	r.expectStatus(t, http.StatusCreated)
	m := r.object(t)
	wantTokenView(t, "create PAT", m, true)
	if m["name"] != "ci" || m["impersonation"] != false || m["active"] != true || m["revoked"] != false || m["expires_at"] != "2099-06-30" {
		t.Fatalf("%v", m)
	}
	ci := madeToken{num(m["id"]), m["token"].(string)}
	if st := meStatus(t, s, ci.secret); st != http.StatusOK {
		t.Fatalf("the new PAT does not work: %d", st)
	}
	ro, resp, err := s.Client.Users.CreatePersonalAccessToken(alice.ID, &gitlab.CreatePersonalAccessTokenOptions{Name: gitlab.Ptr("ro"), Scopes: &[]string{"read_user"}})
	if err != nil || resp.StatusCode != http.StatusCreated || !tokenRE.MatchString(ro.Token) || !ro.Active || ro.Revoked {
		t.Fatalf("client-go: %v %+v", err, ro)
	}
	call(t, s, ro.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "x", "key": ed25519Key(t)}).expect(t, http.StatusForbidden, badScope)

	t.Run("create: errors and access", func(t *testing.T) {
		body := map[string]any{"name": "x", "scopes": []string{"api"}}
		call(t, s, alice.Token, http.MethodPost, path, body).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodPost, path, body).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/987654/personal_access_tokens", body).expect(t, http.StatusNotFound, notFoundUser)
		call(t, s, s.RootToken, http.MethodPost, path, map[string]any{"name": "x", "scopes": []string{"god"}}).expect(t, http.StatusBadRequest, `{"error":"scopes does not have a valid value"}`)
		call(t, s, s.RootToken, http.MethodPost, path, map[string]any{"name": "x"}).expect(t, http.StatusBadRequest, `{"error":"scopes is missing"}`)
	})
	t.Run("list own", func(t *testing.T) {
		r := call(t, s, alice.Token, http.MethodGet, "/api/v4/personal_access_tokens", nil)
		r.expectStatus(t, http.StatusOK)
		var got []string
		for _, m := range r.array(t) {
			wantTokenView(t, "GET /personal_access_tokens", m, false)
			got = append(got, m["name"].(string))
		}
		if !slices.Equal(got, []string{"fennectest", "ci", "ro"}) {
			t.Fatalf("alice's tokens %v", got)
		}
		r.pageHeaders(t, 3, 1, 20, 1, "", "")
		list, _, err := bob.Client.PersonalAccessTokens.ListPersonalAccessTokens(nil)
		if err != nil || len(list) != 1 || list[0].Name != "fennectest" || list[0].Token != "" {
			t.Fatalf("bob's tokens: %v %v", err, list)
		}
		call(t, s, "", http.MethodGet, "/api/v4/personal_access_tokens", nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("revoke", func(t *testing.T) {
		call(t, s, bob.Token, http.MethodDelete, "/api/v4/personal_access_tokens/"+store.IDString(ci.id), nil).
			expect(t, http.StatusNotFound, `{"message":"404 Personal Access Token Not Found"}`)
		if st := meStatus(t, s, ci.secret); st != http.StatusOK {
			t.Fatalf("bob revoked alice's token: %d", st)
		}
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/personal_access_tokens/987654", nil).
			expect(t, http.StatusNotFound, `{"message":"404 Personal Access Token Not Found"}`)
		if _, err := alice.Client.PersonalAccessTokens.RevokePersonalAccessToken(ci.id); err != nil {
			t.Fatal(err)
		}
		call(t, s, ci.secret, http.MethodGet, "/api/v4/user", nil).expect(t, http.StatusUnauthorized, unauthorized)
		list, _, err := alice.Client.PersonalAccessTokens.ListPersonalAccessTokens(&gitlab.ListPersonalAccessTokensOptions{State: gitlab.Ptr("inactive")})
		if err != nil || len(list) != 1 || list[0].ID != ci.id || !list[0].Revoked || list[0].Active {
			t.Fatalf("inactive: %v %v", err, list)
		}
		if st := meStatus(t, s, alice.Token); st != http.StatusOK {
			t.Fatalf("another token of alice stopped working: %d", st)
		}
		call(t, s, "", http.MethodDelete, "/api/v4/personal_access_tokens/"+store.IDString(ro.ID), nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("revoke answers 204", func(t *testing.T) {
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/personal_access_tokens/"+store.IDString(ro.ID), nil).expect(t, http.StatusNoContent, "")
		if st := meStatus(t, s, ro.Token); st != http.StatusUnauthorized {
			t.Fatalf("revoked token: %d", st)
		}
	})
}

type madeToken struct {
	id     int64
	secret string
}
