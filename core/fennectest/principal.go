package fennectest

import (
	"context"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
)

// AsUser is a context acting as user id, with no request behind it: what a
// test hands a module's service to drive it as a page, an admin command or
// an embedder would. users is the identity module's lookup (extract it
// with WithExtract).
func AsUser(t testing.TB, users auth.UserLookup, id int64) context.Context {
	t.Helper()
	u, err := users.LookupUser(context.Background(), strconv.FormatInt(id, 10))
	if err != nil {
		t.Fatalf("fennectest: look up user %d: %v", id, err)
	}
	p, err := auth.ForUser(u)
	if err != nil {
		t.Fatalf("fennectest: principal of user %d: %v", id, err)
	}
	return auth.WithPrincipal(context.Background(), p)
}
