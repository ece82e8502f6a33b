// Package conformance is the test suite every auth provider must pass, in
// process or behind a plugin host:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(t *testing.T) authprovider.Provider { return newDirectory() }, conformance.Fixtures{...})
//	}
//
// It checks the contract of package authprovider: Describe and Configure,
// valid and invalid logins, that an empty password is never an anonymous
// success, that hostile logins (filter metacharacters, NUL bytes, 10 KB
// strings, look-alike unicode) are refused without matching anyone else or
// crashing, concurrent calls, and the optional SearchUsers and SyncUsers when
// announced. It imports only sdk/ and the standard library.
package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// User is a user of the directory under test.
type User struct {
	Login, Password string
	// Identity is what Login authenticates as. ExternalID, Username, Email
	// and Name must match exactly; Groups is compared only when not nil.
	Identity authprovider.Identity
}

// Fixtures describe the directory the provider under test talks to.
type Fixtures struct {
	// Settings is the JSON object Configure is given.
	Settings []byte
	// User and Second are two different users that can sign in.
	User, Second User
	// WrongPassword is not User's password.
	WrongPassword string
	// UnknownLogin names no one.
	UnknownLogin string
	// UnknownIsInvalidCredentials: the provider cannot tell an unknown login
	// from a wrong password and answers ErrInvalidCredentials for both (the
	// contract allows it; ErrUnknownUser is preferred).
	UnknownIsInvalidCredentials bool
	// GoneExternalID, optional, is an external id of a user who is no longer
	// in the directory (SyncUsers must leave it out).
	GoneExternalID string
	// CallTimeout bounds every call; default 10 s.
	CallTimeout time.Duration
}

// Run runs the suite as subtests of t. newProvider is called once per
// subtest; it may return a fresh provider or the same one (a host-side
// plugin client): Run configures it with f.Settings before use.
func Run(t *testing.T, newProvider func(t *testing.T) authprovider.Provider, f Fixtures) {
	t.Helper()
	if f.CallTimeout <= 0 {
		f.CallTimeout = 10 * time.Second
	}
	s := &suite{f: f, newProvider: newProvider}
	t.Run("Describe", s.describe)
	t.Run("Configure", s.configure)
	t.Run("ValidLogin", s.validLogin)
	t.Run("WrongPassword", s.wrongPassword)
	t.Run("UnknownLogin", s.unknownLogin)
	t.Run("EmptyCredentials", s.emptyCredentials)
	t.Run("HostileLogins", s.hostileLogins)
	t.Run("HostilePasswords", s.hostilePasswords)
	t.Run("Concurrent", s.concurrent)
	t.Run("SearchUsers", s.searchUsers)
	t.Run("SyncUsers", s.syncUsers)
}

type suite struct {
	f           Fixtures
	newProvider func(t *testing.T) authprovider.Provider
}

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.f.CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// provider returns a configured provider.
func (s *suite) provider(t *testing.T) authprovider.Provider {
	t.Helper()
	p := s.newProvider(t)
	if err := p.Configure(s.ctx(t), s.f.Settings); err != nil {
		t.Fatalf("Configure(fixture settings): %v", err)
	}
	return p
}

func (s *suite) describe(t *testing.T) {
	p := s.provider(t)
	d, err := p.Describe(s.ctx(t))
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if d.Name == "" || d.Version == "" {
		t.Errorf("Describe: name %q and version %q must not be empty", d.Name, d.Version)
	}
	if !d.Speaks(authprovider.APIVersion) {
		t.Errorf("Describe: APIVersions %q do not contain %q", d.APIVersions, authprovider.APIVersion)
	}
	if d.SettingsSchema != "" {
		var schema map[string]any
		if err := json.Unmarshal([]byte(d.SettingsSchema), &schema); err != nil {
			t.Errorf("Describe: SettingsSchema is not a JSON object: %v", err)
		}
	}
}

func (s *suite) configure(t *testing.T) {
	p := s.provider(t)
	for _, bad := range []string{`{"`, `{`, `not json`, `[]`, `"a string"`} {
		if err := p.Configure(s.ctx(t), []byte(bad)); err == nil {
			t.Errorf("Configure(%q) accepted settings that are not a JSON object", bad)
		}
	}
	// A refused Configure leaves the previous settings in force.
	s.wantIdentity(t, p, s.f.User)
	if err := p.Configure(s.ctx(t), s.f.Settings); err != nil {
		t.Fatalf("Configure(fixture settings) again: %v", err)
	}
	s.wantIdentity(t, p, s.f.User)
}

func (s *suite) wantIdentity(t *testing.T, p authprovider.Provider, u User) {
	t.Helper()
	got, err := p.Authenticate(s.ctx(t), u.Login, u.Password)
	if err != nil {
		t.Errorf("Authenticate(%q, right password): %v", u.Login, err)
		return
	}
	checkIdentity(t, "Authenticate("+u.Login+")", got, u.Identity)
}

func checkIdentity(t *testing.T, what string, got, want authprovider.Identity) {
	t.Helper()
	if got.ExternalID != want.ExternalID || got.Username != want.Username || got.Email != want.Email || got.Name != want.Name {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
	if want.Groups != nil && strings.Join(got.Groups, "\n") != strings.Join(want.Groups, "\n") {
		t.Errorf("%s groups = %q, want %q", what, got.Groups, want.Groups)
	}
}

func (s *suite) validLogin(t *testing.T) {
	p := s.provider(t)
	s.wantIdentity(t, p, s.f.User)
	s.wantIdentity(t, p, s.f.Second)
	if s.f.User.Identity.ExternalID == s.f.Second.Identity.ExternalID {
		t.Errorf("fixtures: User and Second must be different users")
	}
}

// wantRejected asserts err is a rejection: one of the sentinels in allowed.
func wantRejected(t *testing.T, what string, id authprovider.Identity, err error, allowed ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s succeeded as %+v; want a rejection", what, id)
		return
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return
		}
	}
	t.Errorf("%s = %v; want errors.Is one of %v (a rejection, not a failure)", what, err, allowed)
}

func (s *suite) wrongPassword(t *testing.T) {
	p := s.provider(t)
	id, err := p.Authenticate(s.ctx(t), s.f.User.Login, s.f.WrongPassword)
	wantRejected(t, "Authenticate(user, wrong password)", id, err, authprovider.ErrInvalidCredentials)
	if s.f.Second.Password != s.f.User.Password {
		id, err := p.Authenticate(s.ctx(t), s.f.User.Login, s.f.Second.Password)
		wantRejected(t, "Authenticate(user, second user's password)", id, err, authprovider.ErrInvalidCredentials)
	}
}

func (s *suite) unknownLogin(t *testing.T) {
	p := s.provider(t)
	want := authprovider.ErrUnknownUser
	if s.f.UnknownIsInvalidCredentials {
		want = authprovider.ErrInvalidCredentials
	}
	id, err := p.Authenticate(s.ctx(t), s.f.UnknownLogin, s.f.User.Password)
	wantRejected(t, "Authenticate(unknown login)", id, err, want)
}

func (s *suite) emptyCredentials(t *testing.T) {
	p := s.provider(t)
	cases := []struct{ name, login, password string }{
		{"empty password", s.f.User.Login, ""},
		{"empty login", "", s.f.User.Password},
		{"both empty", "", ""},
		{"unknown login, empty password", s.f.UnknownLogin, ""},
	}
	for _, c := range cases {
		id, err := p.Authenticate(s.ctx(t), c.login, c.password)
		// An empty password must never be an (anonymous) success.
		wantRejected(t, "Authenticate("+c.name+")", id, err, authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser)
	}
}

// hostile are logins that must name no one: filter and DN metacharacters,
// wildcards that would match the real user if not escaped, NUL bytes,
// oversized strings and unicode.
func hostile(login string) map[string]string {
	first, last := login[:1], login[len(login)-1:]
	return map[string]string{
		"star":              "*",
		"prefix wildcard":   first + "*",
		"suffix wildcard":   "*" + login[1:],
		"inner wildcard":    first + "*" + last,
		"filter injection":  login + ")(uid=*",
		"admin injection":   "admin)(uid=*",
		"or injection":      "*)(|(uid=*",
		"closing paren":     login + ")",
		"backslash":         login + "\\",
		"escaped star":      "\\2a",
		"dn injection":      login + ",dc=example,dc=com",
		"nul":               "\x00",
		"nul suffix":        login + "\x00",
		"nul prefix":        "\x00" + login,
		"10 KB":             strings.Repeat("a", 10<<10),
		"10 KB after login": login + strings.Repeat("a", 10<<10),
		"unicode":           "ålïcé-名前-🦊",
		"invalid utf-8":     "\xff\xfe" + login,
	}
}

// lookalikes are spellings a directory may fold onto the user (LDAP matching
// ignores case and surrounding or mapped white space): they may sign in as
// the user themself, never as anyone else.
func lookalikes(login string) map[string]string {
	return map[string]string{
		"upper case":        strings.ToUpper(login),
		"surrounding space": " " + login + " ",
		"newline":           login + "\n",
		"zero width space":  login + "\u200b",
		"cyrillic":          strings.NewReplacer("a", "\u0430", "e", "\u0435", "o", "\u043e", "c", "\u0441").Replace(login),
	}
}

func (s *suite) hostileLogins(t *testing.T) {
	p := s.provider(t)
	for name, login := range hostile(s.f.User.Login) {
		for _, pw := range []string{s.f.User.Password, s.f.Second.Password} {
			id, err := p.Authenticate(s.ctx(t), login, pw)
			wantRejected(t, "Authenticate(hostile login: "+name+")", id, err, authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser)
		}
	}
	for name, login := range lookalikes(s.f.User.Login) {
		id, err := p.Authenticate(s.ctx(t), login, s.f.User.Password)
		if err == nil {
			checkIdentity(t, "Authenticate(look-alike login: "+name+")", id, s.f.User.Identity)
		} else {
			wantRejected(t, "Authenticate(look-alike login: "+name+")", id, err, authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser)
		}
		id, err = p.Authenticate(s.ctx(t), login, s.f.Second.Password)
		wantRejected(t, "Authenticate(look-alike login: "+name+", second user's password)", id, err, authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser)
	}
	// Still answering, and still right.
	s.wantIdentity(t, p, s.f.User)
}

func (s *suite) hostilePasswords(t *testing.T) {
	p := s.provider(t)
	pw := s.f.User.Password
	for name, bad := range map[string]string{
		"star":         "*",
		"nul":          "\x00",
		"nul suffix":   pw + "\x00",
		"space suffix": pw + " ",
		"prefix":       pw[:len(pw)-1],
		"upper case":   strings.ToUpper(pw),
		"10 KB":        strings.Repeat("p", 10<<10),
		"invalid utf8": "\xff" + pw,
	} {
		if bad == pw {
			continue
		}
		id, err := p.Authenticate(s.ctx(t), s.f.User.Login, bad)
		wantRejected(t, "Authenticate(user, hostile password: "+name+")", id, err, authprovider.ErrInvalidCredentials)
	}
	s.wantIdentity(t, p, s.f.User)
}

func (s *suite) concurrent(t *testing.T) {
	p := s.provider(t)
	var wg sync.WaitGroup
	for i := range 20 {
		u := s.f.User
		if i%2 == 1 {
			u = s.f.Second
		}
		wg.Go(func() {
			got, err := p.Authenticate(s.ctx(t), u.Login, u.Password)
			if err != nil {
				t.Errorf("concurrent Authenticate(%q) #%d: %v", u.Login, i, err)
				return
			}
			if got.ExternalID != u.Identity.ExternalID {
				t.Errorf("concurrent Authenticate(%q) #%d returned %q", u.Login, i, got.ExternalID)
			}
		})
	}
	wg.Wait()
}

func (s *suite) features(t *testing.T, p authprovider.Provider) authprovider.Description {
	t.Helper()
	d, err := p.Describe(s.ctx(t))
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	return d
}

func (s *suite) searchUsers(t *testing.T) {
	p := s.provider(t)
	if !s.features(t, p).Has(authprovider.FeatureSearchUsers) {
		t.Skip("provider does not announce " + authprovider.FeatureSearchUsers)
	}
	us, ok := p.(authprovider.UserSearcher)
	if !ok {
		t.Fatalf("provider announces %s but does not implement UserSearcher", authprovider.FeatureSearchUsers)
	}
	q := s.f.User.Identity.Username
	found, err := us.SearchUsers(s.ctx(t), q, 10)
	if err != nil {
		t.Fatalf("SearchUsers(%q): %v", q, err)
	}
	var hit bool
	for _, id := range found {
		if id.ExternalID == s.f.User.Identity.ExternalID {
			hit = true
			checkIdentity(t, "SearchUsers("+q+")", id, s.f.User.Identity)
		}
	}
	if !hit {
		t.Errorf("SearchUsers(%q) = %+v; want it to contain %s", q, found, s.f.User.Identity.ExternalID)
	}
	if part := q[1:]; len(part) > 0 {
		found, err := us.SearchUsers(s.ctx(t), part, 10)
		if err != nil {
			t.Fatalf("SearchUsers(%q): %v", part, err)
		}
		if !containsID(found, s.f.User.Identity.ExternalID) {
			t.Errorf("SearchUsers(%q) (a substring) = %+v; want it to contain %s", part, found, s.f.User.Identity.ExternalID)
		}
	}
	if found, err := us.SearchUsers(s.ctx(t), q, 1); err != nil || len(found) > 1 {
		t.Errorf("SearchUsers(%q, limit 1) = %d results, %v", q, len(found), err)
	}
	// Every result contains the query: metacharacters are literal.
	for _, hq := range []string{"*", "*)(uid=*", ")(|(uid=*", "\x00", "\\", q + "*", "\xff"} {
		found, err := us.SearchUsers(s.ctx(t), hq, 10)
		if err != nil {
			t.Errorf("SearchUsers(%q): %v", hq, err)
			continue
		}
		for _, id := range found {
			if !strings.Contains(strings.ToLower(id.Username), strings.ToLower(hq)) {
				t.Errorf("SearchUsers(%q) returned %q, whose username does not contain the query", hq, id.Username)
			}
		}
	}
}

func containsID(ids []authprovider.Identity, externalID string) bool {
	for _, id := range ids {
		if id.ExternalID == externalID {
			return true
		}
	}
	return false
}

func (s *suite) syncUsers(t *testing.T) {
	p := s.provider(t)
	if !s.features(t, p).Has(authprovider.FeatureSyncUsers) {
		t.Skip("provider does not announce " + authprovider.FeatureSyncUsers)
	}
	us, ok := p.(authprovider.UserSyncer)
	if !ok {
		t.Fatalf("provider announces %s but does not implement UserSyncer", authprovider.FeatureSyncUsers)
	}
	ids := []string{s.f.User.Identity.ExternalID, s.f.Second.Identity.ExternalID, "", "*", "not an id", "\x00", "\xff"}
	if s.f.GoneExternalID != "" {
		ids = append(ids, s.f.GoneExternalID)
	}
	present, err := us.SyncUsers(s.ctx(t), ids)
	if err != nil {
		t.Fatalf("SyncUsers: %v", err)
	}
	if len(present) != 2 {
		t.Errorf("SyncUsers(%q) = %+v; want exactly the two fixture users", ids, present)
	}
	for _, id := range present {
		switch id.ExternalID {
		case s.f.User.Identity.ExternalID:
			checkIdentity(t, "SyncUsers: user", id, s.f.User.Identity)
		case s.f.Second.Identity.ExternalID:
			checkIdentity(t, "SyncUsers: second", id, s.f.Second.Identity)
		default:
			t.Errorf("SyncUsers returned %q, which was not present or not asked for", id.ExternalID)
		}
	}
	if present, err := us.SyncUsers(s.ctx(t), nil); err != nil || len(present) != 0 {
		t.Errorf("SyncUsers(nil) = %+v, %v; want nothing", present, err)
	}
	if s.f.GoneExternalID != "" {
		present, err := us.SyncUsers(s.ctx(t), []string{s.f.GoneExternalID})
		if err != nil || len(present) != 0 {
			t.Errorf("SyncUsers(gone id) = %+v, %v; want nothing", present, err)
		}
	}
}
