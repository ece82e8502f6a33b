package identity_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity/user"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives user.Service as an admin command, a page
// or an embedder would, with no request behind it: the same rules and the
// same domain errors as the users API, and what it does is what the API
// then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc user.Service
	var lookup auth.UserLookup
	s := stocktest.Start(t, fennectest.WithExtract(&svc, &lookup))
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	as := func(id int64) context.Context {
		t.Helper()
		u, err := lookup.LookupUser(context.Background(), strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.ForUser(u)
		if err != nil {
			t.Fatal(err)
		}
		return auth.WithPrincipal(context.Background(), p)
	}
	admin := auth.WithPrincipal(context.Background(), auth.System())
	nobody := context.Background()
	asAlice := as(alice.ID)
	str := func(s string) *string { return &s }
	forbidden := func(err error) bool {
		var f *auth.ForbiddenError
		return errors.As(err, &f)
	}

	// Accounts: administrators only; refusals are core/auth's.
	newAccount := user.NewAccount{Fields: user.Fields{Email: str("erin@example.com"), Username: str("erin"), Name: str("Erin")}, ResetPassword: true}
	if _, err := svc.CreateAccount(nobody, newAccount); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("anonymous create: %v", err)
	}
	if _, err := svc.CreateAccount(asAlice, newAccount); !forbidden(err) {
		t.Fatalf("alice's create: %v", err)
	}
	erin, err := svc.CreateAccount(admin, newAccount)
	if err != nil {
		t.Fatal(err)
	}
	if erin.ID <= 0 || erin.Username != "erin" || erin.State != user.StateActive || !erin.PasswordExpired || erin.ConfirmedAt == nil ||
		erin.ProjectsLimit != 100000 || !erin.CanCreateGroup || len(erin.Identities) != 0 {
		t.Fatalf("created %+v", erin)
	}
	r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/"+strconv.FormatInt(erin.ID, 10), nil)
	if o := r.object(t); r.Status != 200 || o["username"] != "erin" || o["password_expired"] != true {
		t.Fatalf("the API shows %d %s", r.Status, r.Body)
	}
	var invalid user.InvalidError
	if _, err := svc.CreateAccount(admin, newAccount); !errors.Is(err, user.ErrInvalid) || !errors.As(err, &invalid) ||
		!slices.Equal(invalid["email"], []string{"has already been taken"}) {
		t.Fatalf("a second erin: %v", err)
	}
	var taken *user.TakenError
	if _, err := svc.UpdateAccount(admin, erin.ID, user.Fields{Email: str(alice.Email)}); !errors.Is(err, user.ErrTaken) ||
		!errors.As(err, &taken) || taken.Field != "email" {
		t.Fatalf("alice's address for erin: %v", err)
	}
	if got, err := svc.UpdateAccount(admin, erin.ID, user.Fields{Name: str("  Erin E.  "), Bio: str("hi")}); err != nil ||
		got.Name != "Erin E." || got.Bio == nil || *got.Bio != "hi" {
		t.Fatalf("update: %+v %v", got, err)
	}
	if _, err := svc.Account(nobody, 1<<40); !errors.Is(err, user.ErrUserNotFound) {
		t.Fatalf("nobody's account: %v", err)
	}

	// Keys: the user's own, and administrators'.
	const pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop"
	if _, err := svc.AddKey(as(bob.ID), alice.ID, "laptop", pub); !forbidden(err) {
		t.Fatalf("bob adds alice's key: %v", err)
	}
	if _, err := svc.AddKey(asAlice, alice.ID, " ", "ssh-rsa nonsense"); !errors.As(err, &invalid) ||
		len(invalid["title"]) != 1 || len(invalid["key"]) != 1 || len(invalid["fingerprint"]) != 1 {
		t.Fatalf("an invalid key: %v", err)
	}
	key, err := svc.AddKey(asAlice, alice.ID, "laptop", pub)
	if err != nil || key.UserID != alice.ID || key.Title != "laptop" || key.Key != pub {
		t.Fatalf("add key: %+v %v", key, err)
	}
	if list, total, err := svc.Keys(asAlice, alice.ID, 0, 20); err != nil || total != 1 || len(list) != 1 || list[0].ID != key.ID {
		t.Fatalf("keys: %+v %d %v", list, total, err)
	}
	if k, owner, err := svc.KeyByFingerprint(admin, key.Fingerprint); err != nil || k.ID != key.ID || owner.ID != alice.ID {
		t.Fatalf("by fingerprint: %+v %+v %v", k, owner, err)
	}
	if _, _, err := svc.KeyByID(asAlice, key.ID); !forbidden(err) {
		t.Fatalf("alice's key by id, asked by alice: %v", err)
	}
	if _, err := svc.DeleteKey(asAlice, alice.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteKey(asAlice, alice.ID, key.ID); !errors.Is(err, user.ErrKeyNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}

	// Secondary addresses.
	e, err := svc.AddEmail(asAlice, alice.ID, "alice@work.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddEmail(admin, bob.ID, "Alice@Work.example"); !errors.As(err, &invalid) || !slices.Equal(invalid["email"], []string{"has already been taken"}) {
		t.Fatalf("alice's address for bob: %v", err)
	}
	if _, err := svc.SecondaryEmail(as(bob.ID), bob.ID, e.ID); !errors.Is(err, user.ErrEmailNotFound) {
		t.Fatalf("alice's address as bob's: %v", err)
	}
	r = call(t, s, alice.Token, http.MethodGet, "/api/v4/user/emails", nil)
	r.expect(t, 200, `[{"id":`+strconv.FormatInt(e.ID, 10)+`,"email":"alice@work.example"}]`)

	// Tokens: issued by administrators; the secret works at once, and not
	// once revoked.
	if _, err := svc.IssueToken(admin, bob.ID, user.NewToken{Kind: user.PersonalToken, Name: "ci"}); !errors.Is(err, user.ErrNoScopes) {
		t.Fatalf("no scopes: %v", err)
	}
	if _, err := svc.IssueToken(admin, bob.ID, user.NewToken{Kind: user.PersonalToken, Name: "ci", Scopes: []string{"write_everything"}}); !errors.Is(err, user.ErrInvalidScope) {
		t.Fatalf("a made-up scope: %v", err)
	}
	if _, err := svc.IssueToken(as(bob.ID), bob.ID, user.NewToken{Kind: user.PersonalToken, Name: "ci", Scopes: []string{"api"}}); !forbidden(err) {
		t.Fatalf("bob issues his own: %v", err)
	}
	tomorrow := time.Now().UTC().Add(48 * time.Hour)
	tok, err := svc.IssueToken(admin, bob.ID, user.NewToken{Kind: user.ImpersonationToken, Name: "support", Scopes: []string{"api", "api"}, ExpiresAt: &tomorrow})
	if err != nil || tok.Secret == "" || !tok.Active || tok.Kind != user.ImpersonationToken || !slices.Equal(tok.Scopes, []string{"api"}) ||
		tok.ExpiresAt == nil || tok.ExpiresAt.Hour() != 0 {
		t.Fatalf("issued %+v %v", tok, err)
	}
	call(t, s, tok.Secret, http.MethodGet, "/api/v4/user", nil).expectStatus(t, 200)
	var nf *user.TokenNotFoundError
	if _, err := svc.Token(admin, bob.ID, user.PersonalToken, tok.ID); !errors.Is(err, user.ErrTokenNotFound) || !errors.As(err, &nf) || nf.Kind != user.PersonalToken {
		t.Fatalf("an impersonation token as a personal one: %v", err)
	}
	if err := svc.RevokeToken(admin, bob.ID, user.ImpersonationToken, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := svc.Token(admin, bob.ID, user.ImpersonationToken, tok.ID); err != nil || !got.Revoked || got.Active || got.Secret != "" {
		t.Fatalf("revoked: %+v %v", got, err)
	}
	call(t, s, tok.Secret, http.MethodGet, "/api/v4/user", nil).expectStatus(t, 401)
	if list, total, err := svc.Tokens(admin, bob.ID, user.ImpersonationToken, user.ActiveTokens, 0, 20); err != nil || total != 0 || len(list) != 0 {
		t.Fatalf("active impersonation tokens: %+v %d %v", list, total, err)
	}

	// Block and unblock; blocking again changes nothing.
	if changed, err := svc.Block(admin, bob.ID); err != nil || !changed {
		t.Fatalf("block: %v %v", changed, err)
	}
	if changed, err := svc.Block(admin, bob.ID); err != nil || changed {
		t.Fatalf("block again: %v %v", changed, err)
	}
	call(t, s, bob.Token, http.MethodGet, "/api/v4/user", nil).expectStatus(t, 401)
	if changed, err := svc.Unblock(admin, bob.ID); err != nil || !changed {
		t.Fatalf("unblock: %v %v", changed, err)
	}
	root, _, err := svc.Login(nobody, "root", s.RootPassword)
	if err != nil || !root.Admin {
		t.Fatalf("login: %+v %v", root, err)
	}
	if _, err := svc.Block(as(root.ID), root.ID); !forbidden(err) {
		t.Fatalf("root blocks root: %v", err)
	}

	// Delete: what was deleted, then nothing.
	if got, err := svc.DeleteAccount(admin, erin.ID); err != nil || got == nil || got.Username != "erin" {
		t.Fatalf("delete: %+v %v", got, err)
	}
	if got, err := svc.DeleteAccount(admin, erin.ID); err != nil || got != nil {
		t.Fatalf("delete again: %+v %v", got, err)
	}
	call(t, s, s.RootToken, http.MethodGet, "/api/v4/users/"+strconv.FormatInt(erin.ID, 10), nil).
		expect(t, 404, `{"message":"404 User Not Found"}`)
}
