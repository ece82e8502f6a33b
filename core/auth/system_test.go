package auth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
)

func TestSystemPrincipal(t *testing.T) {
	t.Parallel()
	sys := auth.System()
	if !sys.IsSystem() || !sys.IsAdmin() || sys.IsAnonymous() || sys.UserID() != 0 || !sys.HasScope(auth.ScopeAPI) {
		t.Fatalf("system principal %+v", sys)
	}
	if auth.MaySudo(sys) {
		t.Fatal("the system principal must not sudo")
	}
	// Each call is a fresh value: changing one cannot change the next.
	sys.User.Admin = false
	if !auth.System().IsAdmin() {
		t.Fatal("System() shares its user between calls")
	}
	for name, p := range map[string]*auth.Principal{
		"anonymous": auth.Anonymous(),
		"nil":       nil,
		"a user":    {User: &auth.User{ID: 1, Admin: true}, Method: auth.MethodPrivateToken},
		// The exported fields alone never make the system principal.
		"look-alike": {User: &auth.User{Username: "system", Admin: true}, Method: auth.MethodSystem},
	} {
		if p.IsSystem() {
			t.Errorf("%s is the system principal", name)
		}
	}
}

func TestForUser(t *testing.T) {
	t.Parallel()
	u := &auth.User{ID: 7, Username: "u"}
	p, err := auth.ForUser(u)
	if err != nil || p.User != u || p.IsSystem() || p.IsAdmin() || p.Scopes != nil || auth.MaySudo(p) {
		t.Fatalf("ForUser: %+v %v", p, err)
	}
	for name, u := range map[string]*auth.User{"blocked": {ID: 8, Blocked: true}, "nil": nil} {
		if _, err := auth.ForUser(u); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("%s user: %v, want ErrUnauthorized", name, err)
		}
	}
}

// TestNoCredentialYieldsABackgroundPrincipal: a token resolver that hands
// out the system principal, or a background one, for a secret (a bug in a
// module) makes that secret unauthorized, through every way a credential
// arrives and with sudo too, instead of all-powerful.
func TestNoCredentialYieldsABackgroundPrincipal(t *testing.T) {
	t.Parallel()
	bob := &auth.User{ID: 3, Username: "bob"}
	asBob, _ := auth.ForUser(bob)
	tokens := fakeTokens{"system": auth.System(), "background": asBob}
	r := &auth.Resolver{Tokens: []auth.TokenResolver{tokens}, Users: fakeUsers{"bob": bob}}
	for _, secret := range []string{"system", "background"} {
		for name, c := range map[string]auth.Credentials{
			"private token": {PrivateToken: secret},
			"bearer":        {BearerToken: secret},
			"basic":         {HasBasic: true, BasicUser: "x", BasicPass: secret},
			"sudo":          {PrivateToken: secret, Sudo: "bob"},
		} {
			p, err := r.Resolve(context.Background(), c)
			if err == nil || p != nil {
				t.Errorf("%s as %s: got %+v, want a refusal", secret, name, p)
			}
		}
	}
}
