package projects_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSecretsSealedAtRest: a hook's token and the credentials of an
// import_url are never answered and never written to the store in clear:
// the store file holds neither (nor the key, which lives in
// <data>/secret.key, mode 0600), while the repository module still gets the
// whole import URL from RepositoryState.ImportURL. Before the fix both were
// stored as given.
func TestSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	var state projects.RepositoryState
	var bus *events.Bus
	s := stocktest.Start(t, fennectest.WithExtract(&state, &bus))
	alice := s.CreateUser(t, "alice")
	const hookSecret, importPassword = "hook-secret-5f1c9a", "import-pass-8d2e7b"
	importURL := "http://alice:" + importPassword + "@fennec-import.invalid/team/src.git"

	// import_url: the create answer and later reads never show the password.
	p := grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "Imported", "import_url": importURL})
	p.expect(t, http.StatusCreated, "")
	if bytes.Contains(p.raw, []byte(importPassword)) {
		t.Fatalf("the create answer shows the import password: %s", p.raw)
	}
	id := int64(p.object(t)["id"].(float64))
	path := "/api/v4/projects/" + strconv.FormatInt(id, 10)
	r := grpCall(t, s, alice.Token, http.MethodGet, path, nil)
	r.expect(t, http.StatusOK, "")
	if bytes.Contains(r.raw, []byte(importPassword)) {
		t.Fatalf("the project shows the import password: %s", r.raw)
	}
	if got, err := state.ImportURL(context.Background(), id); err != nil || got != importURL {
		t.Fatalf("RepositoryState.ImportURL = %q, %v; want the URL as given", got, err)
	}

	// A hook's token: never in an answer (add, get, list, edit).
	h := grpCall(t, s, alice.Token, http.MethodPost, path+"/hooks", map[string]any{"url": "https://ci.example.com/hook", "token": hookSecret})
	h.expect(t, http.StatusCreated, "")
	hid := strconv.FormatInt(int64(h.object(t)["id"].(float64)), 10)
	for _, r := range []grpResp{h,
		grpCall(t, s, alice.Token, http.MethodGet, path+"/hooks/"+hid, nil),
		grpCall(t, s, alice.Token, http.MethodGet, path+"/hooks", nil),
		grpCall(t, s, alice.Token, http.MethodPut, path+"/hooks/"+hid, map[string]any{"url": "https://ci.example.com/hook2"}),
	} {
		if r.status/100 != 2 || bytes.Contains(r.raw, []byte(hookSecret)) || bytes.Contains(r.raw, []byte(`"token"`)) {
			t.Fatalf("a hook answer shows the token: %d %s", r.status, r.raw)
		}
	}

	// Everything is delivered and written; the store holds no secret.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	db := s.StoreBytes(t)
	for what, secret := range map[string]string{"the hook token": hookSecret, "the import password": importPassword} {
		if bytes.Contains(db, []byte(secret)) {
			t.Errorf("the store contains %s in clear", what)
		}
	}
	key, err := os.ReadFile(filepath.Join(s.DataDir, sealed.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, bytes.TrimSpace(key)) {
		t.Error("the store contains the key")
	}
	if fi, err := os.Stat(filepath.Join(s.DataDir, sealed.KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret.key: %v %v", fi, err)
	}
}
