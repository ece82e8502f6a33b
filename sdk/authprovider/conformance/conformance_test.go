package conformance_test

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/authprovider"
	"github.com/fennec-forge/fennec/sdk/authprovider/conformance"
)

// directory is the smallest honest provider: users in a map. It exists to
// prove the suite passes an implementation that keeps the contract.
type directory struct {
	mu     sync.RWMutex
	domain string
	users  map[string]string // login -> password
	broken string            // a deliberate bug, for TestSuiteCatchesBrokenProviders
}

type settings struct {
	Domain string `json:"domain"`
}

func (d *directory) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{
		Name: "memory", Version: "1.0.0", APIVersions: []string{authprovider.APIVersion},
		Features:       []string{authprovider.FeatureSearchUsers, authprovider.FeatureSyncUsers},
		SettingsSchema: `{"type":"object","properties":{"domain":{"type":"string"}},"required":["domain"]}`,
	}, nil
}

func (d *directory) Configure(_ context.Context, raw []byte) error {
	var s settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if s.Domain == "" {
		return fmt.Errorf("domain is required")
	}
	d.mu.Lock()
	d.domain = s.Domain
	d.mu.Unlock()
	return nil
}

func (d *directory) identity(login string) authprovider.Identity {
	return authprovider.Identity{
		ExternalID: "user:" + login, Username: login,
		Email: login + "@" + d.domain, Name: strings.ToUpper(login[:1]) + login[1:],
	}
}

func (d *directory) Authenticate(_ context.Context, login, password string) (authprovider.Identity, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.broken == "empty-password" && password == "" {
		if _, ok := d.users[login]; ok {
			return d.identity(login), nil // an anonymous bind "succeeds"
		}
	}
	if login == "" || password == "" {
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	if d.broken == "wildcard" {
		for l := range d.users {
			if ok, _ := path.Match(login, l); ok {
				login = l
			}
		}
	}
	want, ok := d.users[login]
	if !ok {
		if d.broken == "unknown-fails" {
			return authprovider.Identity{}, fmt.Errorf("directory: no such entry")
		}
		return authprovider.Identity{}, authprovider.ErrUnknownUser
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(password)) != 1 {
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	return d.identity(login), nil
}

func (d *directory) SearchUsers(_ context.Context, query string, limit int) ([]authprovider.Identity, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := []authprovider.Identity{}
	for login := range d.users {
		if strings.Contains(login, query) && (limit <= 0 || len(out) < limit) {
			out = append(out, d.identity(login))
		}
	}
	return out, nil
}

func (d *directory) SyncUsers(_ context.Context, ids []string) ([]authprovider.Identity, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := []authprovider.Identity{}
	if d.broken == "sync-all" {
		for login := range d.users {
			out = append(out, d.identity(login))
		}
		return out, nil
	}
	for _, id := range ids {
		login, ok := strings.CutPrefix(id, "user:")
		if _, known := d.users[login]; ok && known {
			out = append(out, d.identity(login))
		}
	}
	return out, nil
}

func newDirectory() *directory {
	return &directory{users: map[string]string{"alice": "alice-secret", "bob": "bob-secret"}}
}

var fixtures = conformance.Fixtures{
	Settings: []byte(`{"domain":"example.com"}`),
	User: conformance.User{Login: "alice", Password: "alice-secret", Identity: authprovider.Identity{
		ExternalID: "user:alice", Username: "alice", Email: "alice@example.com", Name: "Alice"}},
	Second: conformance.User{Login: "bob", Password: "bob-secret", Identity: authprovider.Identity{
		ExternalID: "user:bob", Username: "bob", Email: "bob@example.com", Name: "Bob"}},
	WrongPassword:  "not-the-password",
	UnknownLogin:   "mallory",
	GoneExternalID: "user:carol",
}

func TestInProcess(t *testing.T) {
	conformance.Run(t, func(*testing.T) authprovider.Provider { return newDirectory() }, fixtures)
}

// The same provider through the gRPC server and the host-side Client: the
// wire mapping must keep every outcome.
func TestOverGRPC(t *testing.T) {
	conn, _ := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		authprovider.Register(s, newDirectory(), nil)
	})
	client := authprovider.NewClient(conn)
	conformance.Run(t, func(*testing.T) authprovider.Provider { return client }, fixtures)
}

// TestSuiteCatchesBrokenProviders proves the suite can fail: each deliberate
// bug, run in a child test process, must fail the subtest that guards it.
func TestSuiteCatchesBrokenProviders(t *testing.T) {
	if os.Getenv("CONFORMANCE_BROKEN") != "" {
		t.Skip("inside the child process")
	}
	for bug, subtest := range map[string]string{
		"empty-password": "EmptyCredentials",
		"wildcard":       "HostileLogins",
		"unknown-fails":  "UnknownLogin",
		"sync-all":       "SyncUsers",
	} {
		t.Run(bug, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenChild$", "-test.v")
			cmd.Env = append(os.Environ(), "CONFORMANCE_BROKEN="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a provider with bug %q:\n%s", bug, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenChild/"+subtest) {
				t.Errorf("bug %q did not fail %s:\n%s", bug, subtest, out)
			}
		})
	}
}

func TestBrokenChild(t *testing.T) {
	bug := os.Getenv("CONFORMANCE_BROKEN")
	if bug == "" {
		t.Skip("run by TestSuiteCatchesBrokenProviders")
	}
	conformance.Run(t, func(*testing.T) authprovider.Provider {
		d := newDirectory()
		d.broken = bug
		return d
	}, fixtures)
}
