package identity_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// memDirectory is an in-process auth provider (what an embedder registers
// with fennec.WithAuthProvider): a map of people. The LDAP plugin is tested
// against a real slapd in plugins/auth-ldap and end to end in hostapp.
type memDirectory struct {
	mu     sync.Mutex
	people map[string]person // by login
	down   bool
	calls  int
}

type person struct {
	password string
	id       authprovider.Identity
}

func (d *memDirectory) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{Name: "mem", Version: "1", APIVersions: []string{"v1"}, Features: []string{"sync_users"}}, nil
}

func (d *memDirectory) Configure(context.Context, []byte) error { return nil }

func (d *memDirectory) Authenticate(_ context.Context, login, password string) (authprovider.Identity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	if d.down {
		return authprovider.Identity{}, authprovider.ErrUnavailable
	}
	p, ok := d.people[login]
	if !ok {
		return authprovider.Identity{}, authprovider.ErrUnknownUser
	}
	if p.password != password {
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	return p.id, nil
}

func (d *memDirectory) SyncUsers(_ context.Context, ids []string) ([]authprovider.Identity, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return nil, authprovider.ErrUnavailable
	}
	var present []authprovider.Identity
	for _, want := range ids {
		for _, p := range d.people {
			if p.id.ExternalID == want {
				present = append(present, p.id)
			}
		}
	}
	return present, nil
}

func (d *memDirectory) set(login, password, dn, email, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.people[login] = person{password, authprovider.Identity{ExternalID: dn, Username: login, Email: email, Name: name}}
}

func (d *memDirectory) remove(login string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.people, login)
}

func (d *memDirectory) setDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

func startWithDirectory(t *testing.T) (*fennectest.Server, *memDirectory, identity.DirectorySync) {
	t.Helper()
	dir := &memDirectory{people: map[string]person{}}
	var syncer identity.DirectorySync
	s := stocktest.Start(t, fennectest.WithOptions(fennec.WithAuthProvider("ldapmain", dir)), fennectest.WithExtract(&syncer))
	return s, dir, syncer
}

type sessionView struct {
	ID           int64  `json:"id"`
	Username     string `json:"username"`
	Email        string `json:"email"`
	Name         string `json:"name"`
	State        string `json:"state"`
	PrivateToken string `json:"private_token"`
	Identities   []struct {
		Provider  string `json:"provider"`
		ExternUID string `json:"extern_uid"`
	} `json:"identities"`
}

func sessionLogin(t *testing.T, s *fennectest.Server, login, password string) (int, sessionView) {
	t.Helper()
	var v sessionView
	resp, _ := s.JSON(t, http.MethodPost, "/api/v4/session", jsonBody(t, map[string]string{"login": login, "password": password}), &v, "Content-Type", "application/json")
	return resp.StatusCode, v
}

func TestExternalLoginCreatesAndRefreshesTheUser(t *testing.T) {
	t.Parallel()
	s, dir, _ := startWithDirectory(t)
	dir.set("alice", "dir-password", "uid=alice,ou=people,dc=example,dc=com", "alice@example.com", "Alice Liddell")

	code, v := sessionLogin(t, s, "alice", "dir-password")
	if code != http.StatusCreated || v.Username != "alice" || v.Email != "alice@example.com" || v.Name != "Alice Liddell" || v.PrivateToken == "" {
		t.Fatalf("first external login: %d %+v", code, v)
	}
	if len(v.Identities) != 1 || v.Identities[0].Provider != "ldapmain" || v.Identities[0].ExternUID != "uid=alice,ou=people,dc=example,dc=com" {
		t.Fatalf("identities %+v", v.Identities)
	}
	// The directory's data wins on the next login; the account is the same.
	dir.set("alice", "dir-password", "uid=alice,ou=people,dc=example,dc=com", "alice.liddell@example.com", "Alice L.")
	code, v2 := sessionLogin(t, s, "alice", "dir-password")
	if code != http.StatusCreated || v2.ID != v.ID || v2.Email != "alice.liddell@example.com" || v2.Name != "Alice L." {
		t.Fatalf("second login: %d %+v", code, v2)
	}
	if code, _ := sessionLogin(t, s, "alice", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong directory password: %d", code)
	}
	// The local password check never matches an account without one.
	if code, _ := sessionLogin(t, s, "alice", ""); code != http.StatusUnauthorized {
		t.Fatalf("empty password: %d", code)
	}
	// The same account signs in over basic auth (git clients).
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v4/user", nil)
	req.SetBasicAuth("alice", "dir-password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("basic auth with the directory password: %d", resp.StatusCode)
	}
}

func TestExternalLoginNeverTakesOverALocalAccount(t *testing.T) {
	t.Parallel()
	s, dir, _ := startWithDirectory(t)
	local := s.CreateUser(t, "carol")
	// Same username, different e-mail: a new account with a free username.
	dir.set("carol", "dir-pw", "uid=carol,ou=people,dc=example,dc=com", "carol.dir@example.com", "Carol D")
	code, v := sessionLogin(t, s, "carol", "dir-pw")
	if code != http.StatusCreated || v.ID == local.ID || v.Username != "carol1" {
		t.Fatalf("clashing username: %d %+v (local id %d)", code, v, local.ID)
	}
	// The local carol still signs in with her own password.
	if code, v := sessionLogin(t, s, "carol", local.Password); code != http.StatusCreated || v.ID != local.ID {
		t.Fatalf("local login after the clash: %d %+v", code, v)
	}
	// A directory entry carrying someone else's e-mail is refused outright.
	dir.set("mallory", "dir-pw", "uid=mallory,ou=people,dc=example,dc=com", local.Email, "Mallory")
	if code, _ := sessionLogin(t, s, "mallory", "dir-pw"); code != http.StatusUnauthorized {
		t.Fatalf("directory user with a local user's e-mail: %d", code)
	}
}

func TestProviderDownNeverStopsLocalLogins(t *testing.T) {
	t.Parallel()
	s, dir, _ := startWithDirectory(t)
	dir.set("dave", "dir-pw", "uid=dave,ou=people,dc=example,dc=com", "dave@example.com", "Dave")
	local := s.CreateUser(t, "erin")
	dir.setDown(true)
	if code, _ := sessionLogin(t, s, "erin", local.Password); code != http.StatusCreated {
		t.Fatalf("local login with the provider down: %d", code)
	}
	// The directory might know dave: try again later, not "wrong password".
	if code, _ := sessionLogin(t, s, "dave", "dir-pw"); code != http.StatusServiceUnavailable {
		t.Fatalf("directory login with the provider down: %d", code)
	}
	dir.setDown(false)
	if code, _ := sessionLogin(t, s, "dave", "dir-pw"); code != http.StatusCreated {
		t.Fatalf("directory login once the provider is back: %d", code)
	}
}

func TestDirectorySyncBlocksUsersWhoLeft(t *testing.T) {
	t.Parallel()
	s, dir, syncer := startWithDirectory(t)
	ctx := context.Background()
	dir.set("frank", "dir-pw", "uid=frank,ou=people,dc=example,dc=com", "frank@example.com", "Frank")
	code, v := sessionLogin(t, s, "frank", "dir-pw")
	if code != http.StatusCreated {
		t.Fatalf("login: %d", code)
	}
	id := strconv.FormatInt(v.ID, 10)

	// Nothing changes while frank is in the directory.
	if b, u, err := syncer.SyncDirectory(ctx); err != nil || b != 0 || u != 0 {
		t.Fatalf("sync with frank present: %d %d %v", b, u, err)
	}
	// A sync that cannot reach the directory blocks nobody.
	dir.setDown(true)
	if b, _, err := syncer.SyncDirectory(ctx); err != nil || b != 0 {
		t.Fatalf("sync with the directory down: %d %v", b, err)
	}
	dir.setDown(false)

	dir.remove("frank")
	if b, _, err := syncer.SyncDirectory(ctx); err != nil || b != 1 {
		t.Fatalf("sync after frank left: blocked %d, %v", b, err)
	}
	var got map[string]any
	s.JSON(t, http.MethodGet, "/api/v4/users/"+id, nil, &got, "PRIVATE-TOKEN", s.RootToken)
	if got["state"] != "blocked" {
		t.Fatalf("state after sync: %v", got["state"])
	}
	if resp, body := s.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "PRIVATE-TOKEN", v.PrivateToken); resp.StatusCode != 401 {
		t.Fatalf("token of an LDAP-blocked user: %d %s", resp.StatusCode, body)
	}
	// The spec's 403 rules for directory-blocked users.
	for path, want := range map[string]string{
		"/block":   `{"message":"403 Forbidden - LDAP blocked users cannot be modified by the API"}`,
		"/unblock": `{"message":"403 Forbidden - LDAP blocked users cannot be unblocked by the API"}`,
	} {
		resp, body := s.JSON(t, http.MethodPost, "/api/v4/users/"+id+path, nil, nil, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != 403 || strings.TrimSpace(string(body)) != want {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, body)
		}
	}

	// Back in the directory: the next sync restores the account.
	dir.set("frank", "dir-pw", "uid=frank,ou=people,dc=example,dc=com", "frank@example.com", "Frank")
	if _, u, err := syncer.SyncDirectory(ctx); err != nil || u != 1 {
		t.Fatalf("sync after frank returned: unblocked %d, %v", u, err)
	}
	// The private token was revoked with the block (issue 35); a login
	// gives a new one.
	if resp, _ := s.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "PRIVATE-TOKEN", v.PrivateToken); resp.StatusCode != 401 {
		t.Fatalf("private token after block and unblock by sync: %d", resp.StatusCode)
	}
	code, again := sessionLogin(t, s, "frank", "dir-pw")
	if code != http.StatusCreated || again.PrivateToken == v.PrivateToken {
		t.Fatalf("login after unblock by sync: %d", code)
	}
	if resp, _ := s.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "PRIVATE-TOKEN", again.PrivateToken); resp.StatusCode != 200 {
		t.Fatalf("new private token after unblock by sync: %d", resp.StatusCode)
	}
	// An administrator's block is not undone by the directory.
	if err := s.Client.Users.BlockUser(v.ID); err != nil {
		t.Fatal(err)
	}
	if _, u, _ := syncer.SyncDirectory(ctx); u != 0 {
		t.Fatal("sync unblocked an admin-blocked user")
	}
	if code, _ := sessionLogin(t, s, "frank", "dir-pw"); code != http.StatusUnauthorized {
		t.Fatalf("admin-blocked directory user logged in: %d", code)
	}
}
