package identity_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// apiResp is a raw answer: status, body without Huma's trailing newline,
// and headers.
type apiResp struct {
	Status int
	Body   string
	Header http.Header
	req    string
}

// call sends a raw request. token may be empty (anonymous). body is nil, a
// string (sent as application/x-www-form-urlencoded) or any other value
// (sent as JSON). extra are header pairs.
func call(t *testing.T, s *fennectest.Server, token, method, path string, body any, extra ...string) apiResp {
	t.Helper()
	var r io.Reader
	var hdr []string
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
		hdr = append(hdr, "Content-Type", "application/x-www-form-urlencoded")
	default:
		r = jsonBody(t, b)
		hdr = append(hdr, "Content-Type", "application/json")
	}
	hdr = append(hdr, extra...)
	resp, raw := s.JSON(t, method, path, r, nil, hdr...)
	return apiResp{Status: resp.StatusCode, Body: strings.TrimSuffix(string(raw), "\n"), Header: resp.Header, req: method + " " + path}
}

// expect checks the exact status and the exact JSON body (compared as JSON
// values, so object key order does not matter); an empty want means the
// body must be empty.
func (r apiResp) expect(t *testing.T, status int, want string) {
	t.Helper()
	if r.Status != status || !sameJSON(t, r.Body, want) {
		t.Fatalf("%s: got %d %s\nwant %d %s", r.req, r.Status, r.Body, status, want)
	}
}

// expectStatus checks only the status (the body is checked by the caller).
func (r apiResp) expectStatus(t *testing.T, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: got %d %s, want %d", r.req, r.Status, r.Body, status)
	}
}

func (r apiResp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("%s: body %q is not a JSON object: %v", r.req, r.Body, err)
	}
	return m
}

func (r apiResp) array(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil || a == nil {
		t.Fatalf("%s: body %q is not a JSON array of objects: %v", r.req, r.Body, err)
	}
	return a
}

func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	if want == "" {
		return got == ""
	}
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation %q: %v", want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// pageHeaders checks the pagination headers of a list answer.
func (r apiResp) pageHeaders(t *testing.T, total, totalPages, perPage, page int, next, prev string) {
	t.Helper()
	fennectest.CheckPages(t, r.req, r.Header, total, totalPages, perPage, page, next, prev)
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...[]string) []string {
	var out []string
	for _, l := range s {
		out = append(out, l...)
	}
	sort.Strings(out)
	return out
}

// The user views of the spec.
var (
	publicUserKeys   = []string{"id", "username", "name", "state", "avatar_url", "web_url"}
	extendedUserKeys = sorted(publicUserKeys, []string{"created_at", "is_admin", "bio", "location", "skype", "linkedin", "twitter", "website_url", "organization"})
	fullUserKeys     = sorted(extendedUserKeys, []string{"email", "last_sign_in_at", "confirmed_at", "current_sign_in_at", "last_activity_on",
		"color_scheme_id", "projects_limit", "identities", "can_create_group", "can_create_project", "two_factor_enabled", "external"})
)

func wantExactKeys(t *testing.T, what string, m map[string]any, want []string) {
	t.Helper()
	if got := keysOf(m); !slices.Equal(got, sorted(want)) {
		t.Fatalf("%s: keys %v, want exactly %v", what, got, sorted(want))
	}
}

// wantFullView: every key of the full view, no private_token; the only key
// beyond the spec's is Fennec's password_expired.
func wantFullView(t *testing.T, what string, m map[string]any) {
	t.Helper()
	for _, k := range fullUserKeys {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: full view lacks %q: %v", what, k, keysOf(m))
		}
	}
	for k := range m {
		if !slices.Contains(fullUserKeys, k) && k != "password_expired" {
			t.Fatalf("%s: unexpected key %q in the full view", what, k)
		}
	}
}

func usernames(list []map[string]any) []string {
	out := make([]string, 0, len(list))
	for _, u := range list {
		out = append(out, u["username"].(string))
	}
	return out
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// sessionStatus logs in through POST /session and returns the status.
func sessionStatus(t *testing.T, s *fennectest.Server, login, password string) int {
	t.Helper()
	return call(t, s, "", http.MethodPost, "/api/v4/session", map[string]string{"login": login, "password": password}).Status
}

// basicStatus calls GET /user with HTTP basic auth.
func basicStatus(t *testing.T, s *fennectest.Server, user, password string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v4/user", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// meStatus is the status of GET /user with token.
func meStatus(t *testing.T, s *fennectest.Server, token string) int {
	t.Helper()
	return call(t, s, token, http.MethodGet, "/api/v4/user", nil).Status
}

// apiUser creates a user through POST /users as root and returns the body.
func apiUser(t *testing.T, s *fennectest.Server, fields map[string]any) map[string]any {
	t.Helper()
	r := call(t, s, s.RootToken, http.MethodPost, "/api/v4/users", fields)
	r.expectStatus(t, http.StatusCreated)
	return r.object(t)
}

func q(v string) string { return url.QueryEscape(v) }

func utcDay(tm time.Time) string { return tm.UTC().Format("2006-01-02") }

const (
	notFoundUser = `{"message":"404 User Not Found"}`
	forbidden    = `{"message":"403 Forbidden"}`
	unauthorized = `{"message":"401 Unauthorized"}`
	badScope     = `{"message":"403 Forbidden - insufficient scope"}`
)

// SSH keys generated for the test, as authorized_keys lines without a
// comment.

func authorized(t *testing.T, pub any) string {
	t.Helper()
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
}

func ed25519Key(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return authorized(t, pub)
}

func ecdsaKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return authorized(t, &k.PublicKey)
}

func rsaKey(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return authorized(t, &k.PublicKey)
}

func privateKeyPEM(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}
