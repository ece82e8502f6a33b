package internal_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
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

// command is the admin command name of svc, run as the command line runs
// it: a plain context, output to a buffer.
func command(t *testing.T, svc *internal.Service, name string) func(args ...string) (string, error) {
	t.Helper()
	for _, c := range internal.Commands(svc) {
		if c.Name == name {
			return func(args ...string) (string, error) {
				var out bytes.Buffer
				err := c.Run(context.Background(), args, &out)
				return out.String(), err
			}
		}
	}
	t.Fatalf("no %s command", name)
	return nil
}

// TestUserCommands: unblock, make-admin and list act through the service
// as the API does (the unblock and the promotion show in the API), say
// what they did, and refuse what they cannot do.
func TestUserCommands(t *testing.T) {
	t.Parallel()
	s, svc := start(t)
	u := s.CreateUser(t, "blockme")
	if st := s.Call(t, s.RootToken, http.MethodPost, "/api/v4/users/"+strconv.FormatInt(u.ID, 10)+"/block", nil).Status; st != http.StatusCreated {
		t.Fatalf("block: %d", st)
	}
	unblock, makeAdmin, list := command(t, svc, "user-unblock"), command(t, svc, "user-make-admin"), command(t, svc, "user-list")

	if out, err := unblock("blockme"); err != nil || out != "blockme unblocked\n" {
		t.Fatalf("unblock: %q %v", out, err)
	}
	if out, err := unblock("BlockMe"); err != nil || out != "blockme was not blocked\n" {
		t.Fatalf("unblock twice: %q %v", out, err)
	}
	if st := get(t, s, "/api/v4/user", "PRIVATE-TOKEN", u.Token); st != http.StatusOK {
		t.Fatalf("the unblocked user: %d", st)
	}
	if out, err := makeAdmin("blockme@example.com"); err != nil || out != "blockme is now an administrator\n" {
		t.Fatalf("make admin: %q %v", out, err)
	}
	if out, err := makeAdmin("blockme"); err != nil || out != "blockme was already an administrator\n" {
		t.Fatalf("make admin twice: %q %v", out, err)
	}
	if got := s.Call(t, u.Token, http.MethodGet, "/api/v4/user", nil).Expect(t, 200, "").Object(t); got["is_admin"] != true {
		t.Fatalf("the promoted user: %v", got)
	}
	out, err := list("--admins")
	if err != nil || !strings.HasPrefix(out, "ID  USERNAME") || !strings.Contains(out, " root ") || !strings.Contains(out, " blockme ") {
		t.Fatalf("list --admins: %q %v", out, err)
	}
	for _, bad := range [][]string{{}, {"a", "b"}, {" "}} {
		if _, err := unblock(bad...); err == nil || err.Error() != "name one user: a username or an e-mail address" {
			t.Errorf("unblock %q: %v", bad, err)
		}
	}
	if _, err := makeAdmin("nobody"); err == nil || err.Error() != `no user "nobody"` {
		t.Errorf("unknown user: %v", err)
	}
	if _, err := list("--everyone"); err == nil {
		t.Error("list takes an unknown flag")
	}
}
