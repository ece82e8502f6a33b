package identity_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const (
	emailInvalid  = `{"message":{"email":["is invalid"]}}`
	emailTaken    = `{"message":{"email":["has already been taken"]}}`
	emailNotFound = `{"message":"404 Email Not Found"}`
)

func TestAddEmail(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")

	t.Run("created", func(t *testing.T) {
		r := call(t, s, alice.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{"email": "alice.work@example.com"})
		r.expectStatus(t, http.StatusCreated)
		m := r.object(t)
		if !sameJSON(t, r.Body, `{"id":`+store.IDString(num(m["id"]))+`,"email":"alice.work@example.com"}`) || num(m["id"]) <= 0 {
			t.Fatalf("body %s", r.Body)
		}
		e, resp, err := alice.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("alice.home@example.com")})
		if err != nil || resp.StatusCode != http.StatusCreated || e.Email != "alice.home@example.com" || e.ID <= num(m["id"]) {
			t.Fatalf("client-go: %v %+v", err, e)
		}
		r = call(t, s, alice.Token, http.MethodPost, "/api/v4/user/emails", "email="+q("alice.form@example.com"))
		r.expectStatus(t, http.StatusCreated)
		if r.object(t)["email"] != "alice.form@example.com" {
			t.Fatal(r.Body)
		}
	})
	for name, addr := range map[string]string{
		"no at sign":        "not-an-email",
		"no local part":     "@example.com",
		"no domain":         "alice@",
		"display name form": "Alice <alice.x@example.com>",
		"two at signs":      "a@b@example.com",
	} {
		t.Run("invalid: "+name, func(t *testing.T) {
			call(t, s, alice.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{"email": addr}).
				expect(t, http.StatusBadRequest, emailInvalid)
		})
	}
	t.Run("email missing", func(t *testing.T) {
		call(t, s, alice.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{}).
			expect(t, http.StatusBadRequest, `{"error":"email is missing"}`)
	})
	if _, _, err := bob.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("bob.second@example.com")}); err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{
		"another user's primary":               "bob@example.com",
		"another user's primary, other case":   "BOB@Example.com",
		"another user's secondary":             "bob.second@example.com",
		"another user's secondary, other case": "Bob.Second@EXAMPLE.com",
		"own primary":                          "alice@example.com",
		"own secondary":                        "ALICE.WORK@example.com",
		"root's primary":                       "admin@example.com",
	} {
		t.Run("taken: "+name, func(t *testing.T) {
			call(t, s, alice.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{"email": addr}).
				expect(t, http.StatusBadRequest, emailTaken)
			call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(alice.ID)+"/emails", map[string]string{"email": addr}).
				expect(t, http.StatusBadRequest, emailTaken)
		})
	}
	t.Run("a secondary address blocks it as a new user's primary", func(t *testing.T) {
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users", map[string]any{"email": "ALICE.HOME@example.com", "username": "newbie", "name": "N", "password": "newbie-pw"}).
			expect(t, http.StatusBadRequest, emailTaken)
	})
	t.Run("anonymous", func(t *testing.T) {
		call(t, s, "", http.MethodPost, "/api/v4/user/emails", map[string]string{"email": "anon@example.com"}).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, "", http.MethodGet, "/api/v4/user/emails", nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("nothing rejected was stored", func(t *testing.T) {
		list, _, err := alice.Client.Users.ListEmails()
		if err != nil || len(list) != 3 {
			t.Fatalf("%v %v", err, list)
		}
		for _, e := range list {
			if !strings.HasPrefix(e.Email, "alice.") {
				t.Fatalf("stored %q", e.Email)
			}
		}
	})
}

func TestOwnEmails(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	var ids []int64
	addrs := []string{"a1@example.com", "a2@example.com", "a3@example.com"}
	for _, a := range addrs {
		e, _, err := alice.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr(a)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	bobEmail, _, err := bob.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("b1@example.com")})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("list", func(t *testing.T) {
		r := call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails", nil)
		r.expect(t, http.StatusOK, `[{"id":`+store.IDString(ids[0])+`,"email":"a1@example.com"},{"id":`+store.IDString(ids[1])+`,"email":"a2@example.com"},{"id":`+store.IDString(ids[2])+`,"email":"a3@example.com"}]`)
		r.pageHeaders(t, 3, 1, 20, 1, "", "")
		r = call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails?per_page=2&page=2", nil)
		r.expect(t, http.StatusOK, `[{"id":`+store.IDString(ids[2])+`,"email":"a3@example.com"}]`)
		r.pageHeaders(t, 3, 2, 2, 2, "", "1")
		list, _, err := alice.Client.Users.ListEmails()
		if err != nil || len(list) != 3 || list[0].ID != ids[0] || list[0].Email != addrs[0] {
			t.Fatalf("client-go: %v %v", err, list)
		}
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/emails", nil).expect(t, http.StatusOK, `[{"id":`+store.IDString(bobEmail.ID)+`,"email":"b1@example.com"}]`)
	})
	t.Run("get one", func(t *testing.T) {
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails/"+store.IDString(ids[1]), nil).
			expect(t, http.StatusOK, `{"id":`+store.IDString(ids[1])+`,"email":"a2@example.com"}`)
		e, _, err := alice.Client.Users.GetEmail(ids[1])
		if err != nil || e.Email != "a2@example.com" {
			t.Fatalf("client-go: %v %+v", err, e)
		}
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails/"+store.IDString(bobEmail.ID), nil).expect(t, http.StatusNotFound, emailNotFound)
		call(t, s, bob.Token, http.MethodGet, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).expect(t, http.StatusNotFound, emailNotFound)
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails/987654", nil).expect(t, http.StatusNotFound, emailNotFound)
		call(t, s, "", http.MethodGet, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("delete", func(t *testing.T) {
		call(t, s, bob.Token, http.MethodDelete, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).expect(t, http.StatusOK, "")
		if _, _, err := alice.Client.Users.GetEmail(ids[0]); err != nil {
			t.Fatalf("bob deleted alice's address: %v", err)
		}
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).
			expect(t, http.StatusOK, `{"id":`+store.IDString(ids[0])+`,"email":"a1@example.com"}`)
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).expect(t, http.StatusOK, "")
		call(t, s, alice.Token, http.MethodDelete, "/api/v4/user/emails/987654", nil).expect(t, http.StatusOK, "")
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails/"+store.IDString(ids[0]), nil).expect(t, http.StatusNotFound, emailNotFound)
		if resp, err := alice.Client.Users.DeleteEmail(ids[1]); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go: %v", err)
		}
		if resp, err := alice.Client.Users.DeleteEmail(ids[1]); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go again: %v", err)
		}
		call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails", nil).expect(t, http.StatusOK, `[{"id":`+store.IDString(ids[2])+`,"email":"a3@example.com"}]`)
		// a deleted address is free for anyone
		if _, _, err := bob.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("A1@example.com")}); err != nil {
			t.Fatalf("a deleted address cannot be reused: %v", err)
		}
		apiUser(t, s, map[string]any{"email": "a2@example.com", "username": "carol", "name": "Carol", "password": "carol-password"})
		call(t, s, "", http.MethodDelete, "/api/v4/user/emails/"+store.IDString(ids[2]), nil).expect(t, http.StatusUnauthorized, unauthorized)
	})
	t.Run("sudo", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/emails", nil, "SUDO", "alice")
		r.expect(t, http.StatusOK, `[{"id":`+store.IDString(ids[2])+`,"email":"a3@example.com"}]`)
		e, _, err := s.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("bob.sudo@example.com")}, gitlab.WithSudo("bob"))
		if err != nil {
			t.Fatal(err)
		}
		if got, _, err := bob.Client.Users.GetEmail(e.ID); err != nil || got.Email != "bob.sudo@example.com" {
			t.Fatalf("sudo-added address is not bob's: %v", err)
		}
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/user/emails", nil).expect(t, http.StatusOK, `[]`)
	})
}

func TestUserEmailsAdmin(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	alicePath := "/api/v4/users/" + store.IDString(alice.ID) + "/emails"

	e, resp, err := s.Client.Users.AddEmailForUser(alice.ID, &gitlab.AddEmailOptions{Email: gitlab.Ptr("alice.admin@example.com")})
	if err != nil || resp.StatusCode != http.StatusCreated || e.Email != "alice.admin@example.com" {
		t.Fatalf("%v %+v", err, e)
	}
	r := call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{"email": "alice.raw@example.com"})
	r.expectStatus(t, http.StatusCreated)
	raw := num(r.object(t)["id"])
	if !sameJSON(t, r.Body, `{"id":`+store.IDString(raw)+`,"email":"alice.raw@example.com"}`) {
		t.Fatal(r.Body)
	}
	if own, _, err := alice.Client.Users.ListEmails(); err != nil || len(own) != 2 || own[0].ID != e.ID {
		t.Fatalf("alice's own list: %v %v", err, own)
	}
	bobEmail, _, err := bob.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("bob.second@example.com")})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("add: errors", func(t *testing.T) {
		call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{"email": "nope"}).expect(t, http.StatusBadRequest, emailInvalid)
		call(t, s, s.RootToken, http.MethodPost, alicePath, map[string]string{}).expect(t, http.StatusBadRequest, `{"error":"email is missing"}`)
		call(t, s, bob.Token, http.MethodPost, alicePath, map[string]string{"email": "x@example.com"}).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodPost, alicePath, map[string]string{"email": "x@example.com"}).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodPost, alicePath, map[string]string{"email": "x@example.com"}).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/987654/emails", map[string]string{"email": "x@example.com"}).expect(t, http.StatusNotFound, notFoundUser)
	})
	t.Run("list", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodGet, alicePath, nil)
		r.expect(t, http.StatusOK, `[{"id":`+store.IDString(e.ID)+`,"email":"alice.admin@example.com"},{"id":`+store.IDString(raw)+`,"email":"alice.raw@example.com"}]`)
		r.pageHeaders(t, 2, 1, 20, 1, "", "")
		call(t, s, s.RootToken, http.MethodGet, alicePath+"?per_page=1&page=2", nil).
			expect(t, http.StatusOK, `[{"id":`+store.IDString(raw)+`,"email":"alice.raw@example.com"}]`)
		list, _, err := s.Client.Users.ListEmailsForUser(alice.ID, nil)
		if err != nil || len(list) != 2 {
			t.Fatalf("client-go: %v %v", err, list)
		}
		call(t, s, bob.Token, http.MethodGet, alicePath, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodGet, alicePath, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodGet, alicePath, nil).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/987654/emails", nil).expect(t, http.StatusNotFound, notFoundUser)
	})
	t.Run("delete", func(t *testing.T) {
		target := alicePath + "/" + store.IDString(e.ID)
		call(t, s, bob.Token, http.MethodDelete, target, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, alice.Token, http.MethodDelete, target, nil).expect(t, http.StatusForbidden, forbidden)
		call(t, s, "", http.MethodDelete, target, nil).expect(t, http.StatusUnauthorized, unauthorized)
		call(t, s, s.RootToken, http.MethodDelete, alicePath+"/"+store.IDString(bobEmail.ID), nil).expect(t, http.StatusNotFound, emailNotFound)
		if _, _, err := bob.Client.Users.GetEmail(bobEmail.ID); err != nil {
			t.Fatalf("bob's address was deleted through alice: %v", err)
		}
		call(t, s, s.RootToken, http.MethodDelete, target, nil).expect(t, http.StatusOK, `{"id":`+store.IDString(e.ID)+`,"email":"alice.admin@example.com"}`)
		call(t, s, s.RootToken, http.MethodDelete, target, nil).expect(t, http.StatusNotFound, emailNotFound)
		call(t, s, s.RootToken, http.MethodDelete, alicePath+"/987654", nil).expect(t, http.StatusNotFound, emailNotFound)
		call(t, s, s.RootToken, http.MethodDelete, "/api/v4/users/987654/emails/"+store.IDString(raw), nil).expect(t, http.StatusNotFound, notFoundUser)
		if resp, err := s.Client.Users.DeleteEmailForUser(alice.ID, raw); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("client-go: %v", err)
		}
		if resp, err := s.Client.Users.DeleteEmailForUser(alice.ID, raw); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("client-go again: %v", err)
		}
		call(t, s, s.RootToken, http.MethodGet, alicePath, nil).expect(t, http.StatusOK, `[]`)
	})
}

func TestConcurrentSameEmailAndKey(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	const n = 8
	var users []*fennectest.User
	for i := 0; i < n; i++ {
		users = append(users, s.CreateUser(t, ""))
	}
	key := ed25519Key(t)
	type result struct{ email, key apiResp }
	results := make([]result, n)
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].email = call(t, s, u.Token, http.MethodPost, "/api/v4/user/emails", map[string]string{"email": "Shared@example.com"})
			results[i].key = call(t, s, u.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "shared", "key": key})
		}()
	}
	wg.Wait()
	emails, keys := 0, 0
	for _, r := range results {
		if r.email.Status == http.StatusCreated {
			emails++
		} else {
			r.email.expect(t, http.StatusBadRequest, emailTaken)
		}
		if r.key.Status == http.StatusCreated {
			keys++
		} else {
			r.key.expect(t, http.StatusBadRequest, keyTaken)
		}
	}
	if emails != 1 || keys != 1 {
		t.Fatalf("%d e-mails and %d keys created, want one each", emails, keys)
	}
}
