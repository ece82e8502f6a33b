package identity_test

import (
	"crypto/dsa"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// DSA keys are old but still parse (GitLab of this API's era accepted them).
func TestDSAKeysAreAccepted(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	var priv dsa.PrivateKey
	if err := dsa.GenerateParameters(&priv.Parameters, rand.Reader, dsa.L1024N160); err != nil {
		t.Fatal(err)
	}
	if err := dsa.GenerateKey(&priv, rand.Reader); err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " old@box"
	var got map[string]any
	resp, body := s.JSON(t, http.MethodPost, "/api/v4/user/keys", jsonBody(t, map[string]string{"title": "dsa", "key": line}), &got,
		"PRIVATE-TOKEN", s.RootToken, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusCreated || got["key"] != line {
		t.Fatalf("DSA key: %d %s", resp.StatusCode, body)
	}
}

// Usernames are ASCII as in GitLab (they end up in URLs and paths); names
// may be any text.
func TestUnicodeUsernamesAreRefused(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	for _, name := range []string{"jürgen", "ñandú", "用户", "a\u200bb", "zoë.git"} {
		body := jsonBody(t, map[string]any{"email": "u@example.com", "username": name, "name": "Ünïcödé Näme", "password": "password-1"})
		resp, raw := s.JSON(t, http.MethodPost, "/api/v4/users", body, nil, "PRIVATE-TOKEN", s.RootToken, "Content-Type", "application/json")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), `"username":["can contain only letters, digits`) {
			t.Errorf("username %q: %d %s", name, resp.StatusCode, raw)
		}
	}
	body := jsonBody(t, map[string]any{"email": "u@example.com", "username": "jurgen", "name": "Jürgen Ünïcödé 用户", "password": "password-1"})
	var got map[string]any
	resp, raw := s.JSON(t, http.MethodPost, "/api/v4/users", body, &got, "PRIVATE-TOKEN", s.RootToken, "Content-Type", "application/json")
	if resp.StatusCode != http.StatusCreated || got["name"] != "Jürgen Ünïcödé 用户" {
		t.Fatalf("unicode name: %d %s", resp.StatusCode, raw)
	}
}
