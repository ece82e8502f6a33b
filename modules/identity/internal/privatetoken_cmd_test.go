package internal_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/identity/internal"
)

// TestResetPrivateTokenCommand: the operator's user-reset-private-token
// makes the user's private token stop working; the next login gets another.
func TestResetPrivateTokenCommand(t *testing.T) {
	t.Parallel()
	s, svc := start(t)
	u := s.CreateUser(t, "cmduser")
	old := s.Login(t, u.Username, u.Password)
	var run func(context.Context, []string, *bytes.Buffer) error
	for _, c := range internal.Commands(svc) {
		if c.Name == "user-reset-private-token" {
			c := c
			run = func(ctx context.Context, args []string, out *bytes.Buffer) error { return c.Run(ctx, args, out) }
		}
	}
	if run == nil {
		t.Fatal("no user-reset-private-token command")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"cmduser@example.com"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "cmduser: private token reset; the next login gets a new one\n" {
		t.Fatalf("the command said %q", got)
	}
	if st := get(t, s, "/api/v4/user", "PRIVATE-TOKEN", old); st != http.StatusUnauthorized {
		t.Fatalf("the old private token after the command: %d", st)
	}
	if fresh := s.Login(t, u.Username, u.Password); fresh == old || get(t, s, "/api/v4/user", "PRIVATE-TOKEN", fresh) != http.StatusOK {
		t.Fatal("no working new private token after the command")
	}
	if err := run(context.Background(), []string{"nobody"}, &out); err == nil || err.Error() != `no user "nobody"` {
		t.Fatalf("unknown user: %v", err)
	}
}
