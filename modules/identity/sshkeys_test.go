package identity_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestKeyByFingerprint: GET /keys?fingerprint= (administrators), by the
// SHA256 and the legacy MD5 fingerprint, and SSHKeys.SSHKeyOwner, which
// the SSH server asks on every connection.
func TestKeyByFingerprint(t *testing.T) {
	t.Parallel()
	var keys identity.SSHKeys
	s := stocktest.Start(t, fennectest.WithExtract(&keys))
	alice := s.CreateUser(t, "alice")
	line := ed25519Key(t)
	r := call(t, s, alice.Token, http.MethodPost, "/api/v4/user/keys", map[string]string{"title": "laptop", "key": line + " alice@laptop"})
	r.expectStatus(t, http.StatusCreated)
	id := num(r.object(t)["id"])
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range []string{ssh.FingerprintSHA256(pub), ssh.FingerprintLegacyMD5(pub), "MD5:" + ssh.FingerprintLegacyMD5(pub)} {
		r := call(t, s, s.RootToken, http.MethodGet, "/api/v4/keys?fingerprint="+url.QueryEscape(fp), nil)
		r.expectStatus(t, http.StatusOK)
		m := r.object(t)
		user, _ := m["user"].(map[string]any)
		if num(m["id"]) != id || m["key"] != line+" alice@laptop" || user == nil || user["username"] != "alice" {
			t.Errorf("GET /keys?fingerprint=%s: %v", fp, m)
		}
	}
	call(t, s, s.RootToken, http.MethodGet, "/api/v4/keys?fingerprint="+url.QueryEscape("SHA256:nosuchkey"), nil).expectStatus(t, http.StatusNotFound)
	call(t, s, s.RootToken, http.MethodGet, "/api/v4/keys?fingerprint=aa:bb", nil).expectStatus(t, http.StatusNotFound)
	call(t, s, alice.Token, http.MethodGet, "/api/v4/keys?fingerprint="+url.QueryEscape(ssh.FingerprintSHA256(pub)), nil).expectStatus(t, http.StatusForbidden)

	ctx := context.Background()
	owner, err := keys.SSHKeyOwner(ctx, pub.Marshal())
	if err != nil || owner.KeyID != id || owner.User.Username != "alice" || owner.User.Blocked {
		t.Fatalf("SSHKeyOwner: %+v %v", owner, err)
	}
	if err := s.Client.Users.BlockUser(alice.ID); err != nil {
		t.Fatal(err)
	}
	if owner, err := keys.SSHKeyOwner(ctx, pub.Marshal()); err != nil || !owner.User.Blocked {
		t.Fatalf("SSHKeyOwner of a blocked user: %+v %v", owner, err)
	}
	if _, err := s.Client.Users.DeleteSSHKeyForUser(alice.ID, id); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.SSHKeyOwner(ctx, pub.Marshal()); !errors.Is(err, identity.ErrKeyNotFound) {
		t.Fatalf("SSHKeyOwner of a deleted key: %v", err)
	}
	if _, err := keys.SSHKeyOwner(ctx, []byte("garbage")); !errors.Is(err, identity.ErrKeyNotFound) {
		t.Fatalf("SSHKeyOwner of garbage: %v", err)
	}
}
