package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAdministratorsCannotBeLockedOut drives the real binary: root may not
// block, delete or demote himself into an instance without administrators,
// and when an administrator is lost anyway (blocked by another, password
// forgotten) the operator's commands bring one back, through the admin
// socket while the server runs and on the data directory when it is
// stopped.
func TestAdministratorsCannotBeLockedOut(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")
	call := func(token, method, path, body string, want int) string {
		t.Helper()
		req, _ := http.NewRequest(method, s.url("/api/v4"+path), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("PRIVATE-TOKEN", token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&raw)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
		}
		return string(raw)
	}
	login := func(user, password string, want int) string {
		t.Helper()
		var session struct {
			Token string `json:"private_token"`
		}
		_ = json.Unmarshal([]byte(call("", http.MethodPost, "/session", `{"login":"`+user+`","password":"`+password+`"}`, want)), &session)
		return session.Token
	}
	fennec := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(binary, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr strings.Builder
		cmd.Stderr = &stderr // the command's log and errors; its report is stdout
		out, err := cmd.Output()
		if err != nil {
			return string(out) + stderr.String(), err
		}
		return string(out), nil
	}
	mustFennec := func(stdin string, args ...string) string {
		t.Helper()
		out, err := fennec(stdin, args...)
		if err != nil {
			t.Fatalf("fennec %v: %v\n%s", args, err, out)
		}
		return out
	}

	root := login("root", "password-123", http.StatusCreated)
	call(root, http.MethodPost, "/users/1/block", "", http.StatusForbidden)
	if got := call(root, http.MethodDelete, "/users/1", "", http.StatusForbidden); got != `{"message":"403 Forbidden - you cannot delete yourself"}` {
		t.Fatalf("self delete: %s", got)
	}
	if got := call(root, http.MethodPut, "/users/1", `{"admin":false}`, http.StatusForbidden); got != `{"message":"403 Forbidden - the last active administrator cannot be demoted"}` {
		t.Fatalf("last admin demoted: %s", got)
	}
	if got := call(root, http.MethodPost, "/users/1/block", "", http.StatusForbidden); got != `{"message":"403 Forbidden - you cannot block yourself"}` {
		t.Fatalf("self block: %s", got)
	}

	// A second administrator blocks root: allowed, one stays. The second
	// one may then not demote himself: he is the last one.
	call(root, http.MethodPost, "/users", `{"username":"ops","email":"ops@example.com","name":"Ops","password":"ops-password-1","admin":true}`, http.StatusCreated)
	ops := login("ops", "ops-password-1", http.StatusCreated)
	call(ops, http.MethodPost, "/users/1/block", "", http.StatusCreated)
	call(ops, http.MethodPut, "/users/2", `{"admin":false}`, http.StatusForbidden)
	login("root", "password-123", http.StatusUnauthorized)

	// Online: the operator unblocks root and gives him a new password
	// through standard input (never an argument).
	if out := mustFennec("", "user", "unblock", "--data", data, "root"); out != "root unblocked\n" {
		t.Fatalf("unblock said %q", out)
	}
	if out := mustFennec("new-root-password\n", "user", "reset-password", "--data", data, "root"); out != "password of root reset\n" {
		t.Fatalf("reset-password said %q", out)
	}
	login("root", "password-123", http.StatusUnauthorized)
	root = login("root", "new-root-password", http.StatusCreated)
	call(root, http.MethodGet, "/user", "", http.StatusOK)
	if out, err := fennec("short\n", "user", "reset-password", "--data", data, "root"); err == nil || !strings.Contains(out, "too short") {
		t.Fatalf("short password: %v %q", err, out)
	}
	if out, err := fennec("", "user", "unblock", "--data", data, "nobody"); err == nil || !strings.Contains(out, `no user "nobody"`) {
		t.Fatalf("unknown user: %v %q", err, out)
	}
	out := mustFennec("", "user", "list", "--data", data, "--admins")
	if !regexp.MustCompile(`(?m)^1\s+root\s+\S+\s+active\s+yes$`).MatchString(out) || !strings.Contains(out, "ops") {
		t.Fatalf("user list --admins:\n%s", out)
	}

	// Offline, with the server stopped: ops, demoted meanwhile, is made an
	// administrator again and given a generated password.
	call(root, http.MethodPut, "/users/2", `{"admin":false}`, http.StatusOK)
	if out := mustFennec("", "user", "list", "--data", data, "--admins"); strings.Contains(out, "ops") {
		t.Fatalf("ops still listed as an administrator:\n%s", out)
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	if out := mustFennec("", "user", "make-admin", "--data", data, "ops@example.com"); out != "ops is now an administrator\n" {
		t.Fatalf("make-admin said %q", out)
	}
	out = mustFennec("", "user", "reset-password", "--generate", "--data", data, "ops")
	m := regexp.MustCompile(`^password of ops reset to: (\S{20})\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("reset-password --generate said %q", out)
	}
	s = startServer(t, data)
	ops = login("ops", m[1], http.StatusCreated)
	if got := call(ops, http.MethodGet, "/user", "", http.StatusOK); !strings.Contains(got, `"is_admin":true`) {
		t.Fatalf("ops after make-admin: %s", got)
	}
}
