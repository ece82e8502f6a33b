package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/plugins/auth-ldap/ldaptest"
)

// TestLDAPEndToEnd runs the stock binary with the shipped LDAP plugin against
// a real slapd, as an operator would: directory logins create linked users,
// local logins survive a plugin crash, the crashed plugin comes back, users
// who leave the directory are blocked by the sync, and shutdown leaves no
// plugin process behind.
func TestLDAPEndToEnd(t *testing.T) {
	url := ldaptest.Start(t)
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "fennec.yaml")
	yaml := fmt.Sprintf(`directory_sync_interval: 300ms
plugins:
  - name: ldapmain
    kind: auth
    path: auth-ldap
    settings:
      url: %s
      bind_dn: %s
      bind_password: %s
      base: %s
      user_filter: "(&(objectClass=inetOrgPerson)(uid=%%s))"
      attributes: {username: uid, email: mail, name: cn}
      timeout: 5s
`, url, ldaptest.RootDN, ldaptest.RootPW, ldaptest.Suffix)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServerArgs(t, data, []string{"--config", cfg}, "FENNEC_ROOT_PASSWORD=password-123")
	// The server answers before its plugins are up: wait for the line.
	running := s.logs.await("plugin running")
	if running == nil || running["plugin"] != "ldapmain" {
		t.Fatalf("the LDAP plugin is not running:\n%s", s.logs.text())
	}
	pid := int(running["pid"].(float64))

	var retryAfter string // of the last login
	login := func(user, password string) (int, map[string]any) {
		body := strings.NewReader(fmt.Sprintf(`{"login":%q,"password":%q}`, user, password))
		resp, err := http.Post(s.url("/api/v4/session"), "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		retryAfter = resp.Header.Get("Retry-After")
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}

	// A directory login creates the user, linked to the directory entry.
	code, alice := login("alice", ldaptest.AlicePW)
	if code != http.StatusCreated || alice["username"] != "alice" || alice["email"] != "alice@example.com" || alice["name"] != "Alice Liddell" {
		t.Fatalf("LDAP login: %d %v", code, alice)
	}
	ids, _ := alice["identities"].([]any)
	if len(ids) != 1 || ids[0].(map[string]any)["provider"] != "ldapmain" || ids[0].(map[string]any)["extern_uid"] != "uid=alice,ou=people,dc=example,dc=com" {
		t.Fatalf("identities: %v", alice["identities"])
	}
	if code, _ := login("alice", "wrong-password"); code != http.StatusUnauthorized {
		t.Fatalf("wrong LDAP password: %d", code)
	}
	_, root := login("root", "password-123")
	rootToken, _ := root["private_token"].(string)

	// The plugin crashes: local logins carry on, and it comes back.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code, _ := login("root", "password-123"); code != http.StatusCreated {
		t.Fatalf("local login right after the plugin crashed: %d", code)
	}
	// Meanwhile a directory user is told to try again (503 with
	// Retry-After), never that the password is wrong.
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, bob := login("bob", ldaptest.BobPW)
		if code == http.StatusCreated && bob["username"] == "bob" {
			break
		}
		if code != http.StatusServiceUnavailable || retryAfter == "" ||
			bob["message"] != "503 Service Unavailable - a sign-in provider is restarting; try again shortly" {
			t.Fatalf("LDAP login while the plugin restarts: %d %v (Retry-After %q)", code, bob, retryAfter)
		}
		if time.Now().After(deadline) {
			t.Fatalf("LDAP logins did not come back after the crash: %d %v\n%s", code, bob, s.logs.text())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// alice leaves the directory: the sync blocks her, and the API cannot
	// unblock her.
	ldaptest.Delete(t, url, "uid=alice,ou=people,dc=example,dc=com")
	aliceURL := s.url(fmt.Sprintf("/api/v4/users/%v", alice["id"]))
	deadline = time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, aliceURL, nil)
		req.Header.Set("PRIVATE-TOKEN", rootToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if v["state"] == "blocked" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice was not blocked by the directory sync: %v", v)
		}
		time.Sleep(100 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, aliceURL+"/unblock", nil)
	req.Header.Set("PRIVATE-TOKEN", rootToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unblocking an LDAP-blocked user: %d", resp.StatusCode)
	}

	// Shutdown stops the plugin too, the restarted process included.
	if n := len(pluginProcesses(t)); n != 1 {
		t.Fatalf("%d auth-ldap processes while running, want 1", n)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if left := pluginProcesses(t); len(left) > 0 {
		t.Fatalf("auth-ldap processes left after shutdown: %v", left)
	}
}

// pluginProcesses lists the live processes running the auth-ldap binary this
// test built (read from /proc; zombies do not count).
func pluginProcesses(t *testing.T) []int {
	t.Helper()
	bin := filepath.Join(filepath.Dir(binary), "plugins", "auth-ldap")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), bin) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}
