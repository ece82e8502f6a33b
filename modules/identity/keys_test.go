package identity_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const (
	keyInvalid   = `{"message":{"key":["is invalid"],"fingerprint":["cannot be generated"]}}`
	keyTaken     = `{"message":{"fingerprint":["has already been taken"]}}`
	keyNotFound  = `{"message":"404 Key Not Found"}`
	keyViewShape = "id,title,key,created_at"
)

func TestAddSSHKey(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")

	kinds := map[string]string{"ed25519": ed25519Key(t), "ecdsa P-256": ecdsaKey(t), "rsa 2048": rsaKey(t)}
	prefixes := map[string]string{"ed25519": "ssh-ed25519 AAAA", "ecdsa P-256": "ecdsa-sha2-nistp256 AAAA", "rsa 2048": "ssh-rsa AAAA"}
	for kind, key := range kinds {
		t.Run(kind, func(t *testing.T) {
			if !strings.HasPrefix(key, prefixes[kind]) {
				t.Fatalf("generated %q", key)
			}
			r := call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": kind, "key": key + " alice@host"})
			r.expectStatus(t, http.StatusCreated)
			m := r.object(t)
			wantExactKeys(t, "POST /user/keys", m, strings.Split(keyViewShape, ","))
			if m["title"] != kind || m["key"] != key+" alice@host" || num(m["id"]) <= 0 || !msTimestamp.MatchString(m["created_at"].(string)) {
				t.Fatalf("created key %v", m)
			}
			got, _, err := alice.Client.Users.GetSSHKey(num(m["id"]))
			if err != nil || got.Key != key+" alice@host" || got.Title != kind {
				t.Fatalf("GET /user/keys/:id: %v %+v", err, got)
			}
		})
	}
	t.Run("options are dropped, the comment is kept", func(t *testing.T) {
		key := ed25519Key(t)
		k, resp, err := alice.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("with options"),
			Key: gitlab.Ptr(`no-pty,command="x" ` + key + " alice@options")})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatal(err)
		}
		if k.Key != key+" alice@options" {
			t.Fatalf("key %q, want %q", k.Key, key+" alice@options")
		}
		key = ecdsaKey(t)
		r := call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "quoted",
			"key": `command="echo hello world",no-port-forwarding,from="10.0.0.1" ` + key + " my laptop"})
		r.expectStatus(t, http.StatusCreated)
		if m := r.object(t); m["key"] != key+" my laptop" {
			t.Fatalf("key %q, want %q", m["key"], key+" my laptop")
		}
	})
	t.Run("no comment", func(t *testing.T) {
		key := ed25519Key(t)
		k, _, err := alice.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("bare"), Key: gitlab.Ptr(key)})
		if err != nil || k.Key != key {
			t.Fatalf("%v %q", err, k.Key)
		}
	})
	t.Run("form-encoded", func(t *testing.T) {
		key := ecdsaKey(t)
		r := call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", "title=form&key="+q(key+" form@host"))
		r.expectStatus(t, http.StatusCreated)
		if m := r.object(t); m["key"] != key+" form@host" {
			t.Fatalf("key %v", m["key"])
		}
	})

	valid := ed25519Key(t)
	invalid := map[string]string{
		"garbage":            "this is not a key",
		"truncated base64":   valid[:len(valid)-12],
		"empty key":          "",
		"blank key":          "   ",
		"type only":          "ssh-ed25519",
		"private key":        privateKeyPEM(t),
		"two keys two lines": ed25519Key(t) + " one\n" + ed25519Key(t) + " two",
	}
	for name, key := range invalid {
		t.Run("invalid: "+name, func(t *testing.T) {
			call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "bad", "key": key}).
				expect(t, http.StatusBadRequest, keyInvalid)
		})
	}
	t.Run("duplicates", func(t *testing.T) {
		key := ed25519Key(t)
		if _, _, err := alice.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("first"), Key: gitlab.Ptr(key + " a")}); err != nil {
			t.Fatal(err)
		}
		for who, token := range map[string]string{"same user": alice.Token, "another user": bob.Token} {
			for _, variant := range []string{key + " a", key, key + " another comment", `no-agent-forwarding ` + key} {
				r := call(t, s, token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "again", "key": variant})
				if r.Status != http.StatusBadRequest || !sameJSON(t, r.Body, keyTaken) {
					t.Fatalf("%s, %q: got %d %s, want 400 %s", who, variant, r.Status, r.Body, keyTaken)
				}
			}
		}
		if keys, _, _ := bob.Client.Users.ListSSHKeys(nil); len(keys) != 0 {
			t.Fatalf("bob got keys %v", keys)
		}
		// admin route too
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(bob.ID)+"/keys", map[string]string{"title": "again", "key": key}).
			expect(t, http.StatusBadRequest, keyTaken)
	})
	t.Run("title missing", func(t *testing.T) {
		call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"key": ed25519Key(t)}).
			expect(t, http.StatusBadRequest, `{"error":"title is missing"}`)
		call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "no key"}).
			expect(t, http.StatusBadRequest, `{"error":"key is missing"}`)
	})
	t.Run("anonymous", func(t *testing.T) {
		call(t, s, "", http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "x", "key": ed25519Key(t)}).
			expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, "", http.MethodGet, "/api/v4/user/keys", nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("read_user impersonation token may not add keys", func(t *testing.T) {
		imp, _, err := s.Client.Users.CreateImpersonationToken(bob.ID, &gitlab.CreateImpersonationTokenOptions{Name: gitlab.Ptr("ro"), Scopes: &[]string{"read_user"}})
		if err != nil {
			t.Fatal(err)
		}
		call(t, s, imp.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "x", "key": ed25519Key(t)}).
			expect(t, http.StatusForbidden, badScope)
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/keys", nil).expect(t, http.StatusOK, `[]`)
	})
}

func TestOwnSSHKeys(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	var ids []int64
	var texts []string
	for i := 0; i < 3; i++ {
		text := ed25519Key(t) + " k" + store.IDString(int64(i))
		k, _, err := alice.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("key " + store.IDString(int64(i))), Key: gitlab.Ptr(text)})
		if err != nil {
			t.Fatal(err)
		}
		ids, texts = append(ids, k.ID), append(texts, text)
	}
	bobKey, _, err := bob.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("bob's"), Key: gitlab.Ptr(ed25519Key(t))})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("list", func(t *testing.T) {
		r := call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys", nil)
		r.expectStatus(t, http.StatusOK)
		list := r.array(t)
		if len(list) != 3 {
			t.Fatalf("%d keys", len(list))
		}
		for i, k := range list {
			wantExactKeys(t, "GET /user/keys", k, strings.Split(keyViewShape, ","))
			if num(k["id"]) != ids[i] || k["key"] != texts[i] || k["title"] != "key "+store.IDString(int64(i)) {
				t.Fatalf("key %d: %v", i, k)
			}
		}
		r.pageHeaders(t, 3, 1, 20, 1, "", "")
		r = call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys?per_page=2&page=2", nil)
		r.expectStatus(t, http.StatusOK)
		if list := r.array(t); len(list) != 1 || num(list[0]["id"]) != ids[2] {
			t.Fatalf("page 2: %s", r.Body)
		}
		r.pageHeaders(t, 3, 2, 2, 2, "", "1")
		keys, resp, err := alice.Client.Users.ListSSHKeys(&gitlab.ListSSHKeysOptions{ListOptions: gitlab.ListOptions{PerPage: 2}})
		if err != nil || len(keys) != 2 || keys[0].ID != ids[0] || resp.TotalItems != 3 || resp.NextPage != 2 {
			t.Fatalf("client-go: %v %v %+v", err, keys, resp)
		}
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/keys", nil).expectStatus(t, http.StatusOK)
		if got := call(t, s, bob.Token, http.MethodGet, "/api/v4/user/keys", nil).array(t); len(got) != 1 || num(got[0]["id"]) != bobKey.ID {
			t.Fatalf("bob sees %v", got)
		}
	})
	t.Run("get one", func(t *testing.T) {
		r := call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys/"+store.IDString(ids[1]), nil)
		r.expectStatus(t, http.StatusOK)
		m := r.object(t)
		wantExactKeys(t, "GET /user/keys/:id", m, strings.Split(keyViewShape, ","))
		if num(m["id"]) != ids[1] || m["key"] != texts[1] {
			t.Fatalf("%v", m)
		}
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys/"+store.IDString(bobKey.ID), nil).expect(t, http.StatusNotFound, keyNotFound)
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/keys/"+store.IDString(ids[0]), nil).expect(t, http.StatusNotFound, keyNotFound)
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys/987654", nil).expect(t, http.StatusNotFound, keyNotFound)
		call(t, s, "", http.MethodGet, "/api/v4/user/keys/"+store.IDString(ids[0]), nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("delete", func(t *testing.T) {
		// someone else's key: 200, nothing happens
		call(t, s, bob.Token, http.MethodDelete, "/api/v4/user/keys/"+store.IDString(ids[0]), nil).expect(t, http.StatusOK, "")
		if _, _, err := alice.Client.Users.GetSSHKey(ids[0]); err != nil {
			t.Fatalf("bob deleted alice's key: %v", err)
		}
		r := call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/keys/"+store.IDString(ids[0]), nil)
		r.expectStatus(t, http.StatusOK)
		if m := r.object(t); num(m["id"]) != ids[0] || m["key"] != texts[0] {
			t.Fatalf("deleted key body %v", m)
		}
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/keys/"+store.IDString(ids[0]), nil).expect(t, http.StatusOK, "")
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/keys/987654", nil).expect(t, http.StatusOK, "")
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/keys/"+store.IDString(ids[0]), nil).expect(t, http.StatusNotFound, keyNotFound)
		if resp, err := alice.Client.Users.DeleteSSHKey(ids[1]); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go delete: %v", err)
		}
		if resp, err := alice.Client.Users.DeleteSSHKey(ids[1]); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go delete again: %v", err)
		}
		keys, _, err := alice.Client.Users.ListSSHKeys(nil)
		if err != nil || len(keys) != 1 || keys[0].ID != ids[2] {
			t.Fatalf("after deletes: %v %v", err, keys)
		}
		// a deleted key may be added again
		if _, _, err := bob.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("reused"), Key: gitlab.Ptr(texts[0])}); err != nil {
			t.Fatalf("a deleted key cannot be added again: %v", err)
		}
		call(t, s, "", http.MethodDelete, "/api/v4/user/keys/"+store.IDString(ids[2]), nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("sudo acts on the user's keys", func(t *testing.T) {
		for _, sudo := range []string{"alice", store.IDString(alice.ID)} {
			r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/keys", nil, "SUDO", sudo)
			r.expectStatus(t, http.StatusOK)
			if list := r.array(t); len(list) != 1 || num(list[0]["id"]) != ids[2] {
				t.Fatalf("sudo %s: %s", sudo, r.Body)
			}
		}
		keys, _, err := s.Client.Users.ListSSHKeys(nil, gitlab.WithSudo("bob"))
		if err != nil || len(keys) != 2 {
			t.Fatalf("client-go sudo bob: %v %v", err, keys)
		}
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/keys", nil).expect(t, http.StatusOK, `[]`)
		// a key added with sudo belongs to that user
		key := ed25519Key(t)
		k, _, err := s.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("via sudo"), Key: gitlab.Ptr(key)}, gitlab.WithSudo(alice.ID))
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := alice.Client.Users.GetSSHKey(k.ID); err != nil || got.Key != key {
			t.Fatalf("sudo-added key is not alice's: %v", err)
		}
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/keys", nil, "SUDO", "alice").
			expect(t, http.StatusForbidden, `{"message":"403 Forbidden - Must be admin to use sudo"}`)
	})
}

func TestUserSSHKeysAdmin(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	alicePath := "/api/v4/users/" + store.IDString(alice.ID) + "/keys"

	t.Run("add for a user", func(t *testing.T) {
		key := rsaKey(t) + " added@admin"
		k, resp, err := s.Client.Users.AddSSHKeyForUser(alice.ID, &gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("by admin"), Key: gitlab.Ptr(key)})
		if err != nil || resp.StatusCode != http.StatusCreated || k.Key != key || k.Title != "by admin" {
			t.Fatalf("%v %+v", err, k)
		}
		own, _, err := alice.Client.Users.ListSSHKeys(nil)
		if err != nil || len(own) != 1 || own[0].ID != k.ID {
			t.Fatalf("alice's keys: %v %v", err, own)
		}
		r := call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{"title": "raw", "key": ed25519Key(t)})
		r.expectStatus(t, http.StatusCreated)
		wantExactKeys(t, "POST /users/:id/keys", r.object(t), strings.Split(keyViewShape, ","))
		call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{"title": "bad", "key": "nope"}).expect(t, http.StatusBadRequest, keyInvalid)
		call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{"key": ed25519Key(t)}).expect(t, http.StatusBadRequest, `{"error":"title is missing"}`)
		call(t, s, bob.Token, http.MethodPost, alicePath, map[string]string{"title": "x", "key": ed25519Key(t)}).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodPost, alicePath, map[string]string{"title": "x", "key": ed25519Key(t)}).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodPost, alicePath, map[string]string{"title": "x", "key": ed25519Key(t)}).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/987654/keys", map[string]string{"title": "x", "key": ed25519Key(t)}).expect(t, http.StatusNotFound, notFoundUser)
	})
	t.Run("list a user's keys", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, alicePath, nil)
		r.expectStatus(t, http.StatusOK)
		list := r.array(t)
		if len(list) != 2 || list[0]["title"] != "by admin" || list[1]["title"] != "raw" {
			t.Fatalf("%s", r.Body)
		}
		for _, k := range list {
			wantExactKeys(t, "GET /users/:id/keys", k, strings.Split(keyViewShape, ","))
		}
		r.pageHeaders(t, 2, 1, 20, 1, "", "")
		keys, _, err := s.Client.Users.ListSSHKeysForUser(alice.ID, nil)
		if err != nil || len(keys) != 2 {
			t.Fatalf("client-go: %v %v", err, keys)
		}
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/"+store.IDString(bob.ID)+"/keys", nil).expect(t, http.StatusOK, `[]`)
		call(t, s, bob.Token, http.MethodGet, alicePath, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodGet, alicePath, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodGet, alicePath, nil).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/987654/keys", nil).expect(t, http.StatusNotFound, notFoundUser)
	})
	t.Run("get a key with its user", func(t *testing.T) {
		own, _, err := alice.Client.Users.ListSSHKeys(nil)
		if err != nil || len(own) == 0 {
			t.Fatal(err)
		}
		k, resp, err := s.Client.Keys.GetKeyWithUser(own[0].ID)
		if err != nil || resp.StatusCode != http.StatusOK || k.ID != own[0].ID || k.Key != own[0].Key || k.Title != own[0].Title ||
			k.User.ID != alice.ID || k.User.Username != "alice" {
			t.Fatalf("%v %+v", err, k)
		}
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/keys/"+store.IDString(own[0].ID), nil)
		r.expectStatus(t, http.StatusOK)
		m := r.object(t)
		wantExactKeys(t, "GET /keys/:id", m, append(strings.Split(keyViewShape, ","), "user"))
		user, ok := m["user"].(map[string]any)
		if !ok {
			t.Fatalf("user %v", m["user"])
		}
		for _, key := range extendedUserKeys {
			if _, ok := user[key]; !ok {
				t.Fatalf("embedded user lacks %q: %v", key, user)
			}
		}
		call(t, s, alice.Token, http.MethodGet, "/api/v4/keys/"+store.IDString(own[0].ID), nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodGet, "/api/v4/keys/"+store.IDString(own[0].ID), nil).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/keys/987654", nil).expect(t, http.StatusNotFound, keyNotFound)
	})
	t.Run("delete a user's key", func(t *testing.T) {
		own, _, err := alice.Client.Users.ListSSHKeys(nil)
		if err != nil || len(own) != 2 {
			t.Fatal(err, own)
		}
		bobKey, _, err := bob.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("bob"), Key: gitlab.Ptr(ed25519Key(t))})
		if err != nil {
			t.Fatal(err)
		}
		target := alicePath + "/" + store.IDString(own[0].ID)
		call(t, s, bob.Token, http.MethodDelete, target, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodDelete, target, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodDelete, target, nil).expect(t, http.StatusUnauthorized, unauthorized)
		// bob's key under alice: not found, and it survives
		call(t, s, s.RootToken, http.MethodDelete, alicePath+"/"+store.IDString(bobKey.ID), nil).expect(t, http.StatusNotFound, keyNotFound)
		if _, _, err := bob.Client.Users.GetSSHKey(bobKey.ID); err != nil {
			t.Fatalf("bob's key was deleted through alice: %v", err)
		}
		r := call(t, s, s.RootToken, http.MethodDelete, target, nil)
		r.expectStatus(t, http.StatusOK)
		if m := r.object(t); num(m["id"]) != own[0].ID {
			t.Fatalf("deleted key body %v", m)
		}
		call(t, s, s.RootToken, http.MethodDelete, target, nil).expect(t, http.StatusNotFound, keyNotFound)
		call(t, s, s.RootToken, http.MethodDelete, alicePath+"/987654", nil).expect(t, http.StatusNotFound, keyNotFound)
		call(t, s, s.RootToken, http.MethodDelete, "/api/v4/users/987654/keys/"+store.IDString(own[1].ID), nil).expect(t, http.StatusNotFound, notFoundUser)
		if resp, err := s.Client.Users.DeleteSSHKeyForUser(alice.ID, own[1].ID); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go: %v", err)
		}
		if resp, err := s.Client.Users.DeleteSSHKeyForUser(alice.ID, own[1].ID); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("client-go again: %v", err)
		}
		left, _, err := alice.Client.Users.ListSSHKeys(nil)
		if err != nil || len(left) != 0 {
			t.Fatalf("alice still has %v", left)
		}
	})
}
