package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/sdk/authprovider"
)

func TestSettingsDefaults(t *testing.T) {
	s, err := parseSettings([]byte(`{"url":"ldap://dir.example.com","base":"dc=example,dc=com"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.UserFilter != "(uid=%s)" || s.Attributes != (attributes{Username: "uid", Email: "mail", Name: "cn"}) ||
		time.Duration(s.Timeout) != 10*time.Second || s.StartTLS {
		t.Fatalf("defaults: %+v", s)
	}
	if got := s.userFilter("a*)(uid=*\x00"); got != `(uid=a\2a\29\28uid=\2a\00)` {
		t.Fatalf("the login is not escaped: %s", got)
	}
	if got := s.searchFilter("x*"); got != `(&(uid=*)(uid=*x\2a*))` {
		t.Fatalf("search filter: %s", got)
	}
	if got := s.searchFilter(""); got != `(&(uid=*)(uid=*))` {
		t.Fatalf("empty search: %s", got)
	}
	for raw, want := range map[string]time.Duration{`"1m"`: time.Minute, `2.5`: 2500 * time.Millisecond} {
		s, err := parseSettings([]byte(`{"url":"ldaps://d","base":"dc=x","timeout":` + raw + `}`))
		if err != nil || time.Duration(s.Timeout) != want {
			t.Errorf("timeout %s: %v, %v", raw, s, err)
		}
	}
}

func TestSettingsRefused(t *testing.T) {
	base := `"url":"ldap://d","base":"dc=example,dc=com"`
	for _, c := range []struct{ raw, want string }{
		{`{`, "settings"},
		{`[]`, "JSON object"},
		{`null`, "JSON object"},
		{`{` + base + `}{}`, "trailing"},
		{`{"base":"dc=x"}`, "url"},
		{`{"url":"http://d","base":"dc=x"}`, "url"},
		{`{"url":"ldap://d"}`, "base is required"},
		{`{"url":"ldap://d","base":"not a dn"}`, "base"},
		{`{` + base + `,"bind_dn":"cn=svc"}`, "bind_password is required"},
		{`{` + base + `,"user_filter":"(uid=alice)"}`, "%s"},
		{`{` + base + `,"user_filter":"(uid=%s"}`, "user_filter"},
		{`{` + base + `,"timeout":"soon"}`, "timeout"},
		{`{` + base + `,"timeout":"-1s"}`, "timeout"},
		{`{` + base + `,"bind_pasword":"typo"}`, "unknown field"},
		{`{` + base + `,"attributes":{"mail":"x"}}`, "unknown field"},
		{`{"url":"ldaps://d","base":"dc=x","start_tls":true}`, "start_tls"},
		{`{` + base + `,"ca_cert":"not pem"}`, "ca_cert"},
	} {
		_, err := parseSettings([]byte(c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %q", c.raw, err, c.want)
		}
	}
}

// Refused settings are ErrInvalidSettings and keep the previous ones.
func TestConfigureKeepsPreviousSettings(t *testing.T) {
	d := newDirectory(nil)
	good := `{"url":"ldap://127.0.0.1:1","base":"dc=example,dc=com"}`
	if err := d.Configure(context.Background(), []byte(good)); err != nil {
		t.Fatal(err)
	}
	if err := d.Configure(context.Background(), []byte(`{"url":"x"}`)); !errors.Is(err, authprovider.ErrInvalidSettings) {
		t.Fatalf("bad settings: %v", err)
	}
	if s, _ := d.settings(); s.URL != "ldap://127.0.0.1:1" {
		t.Fatalf("previous settings lost: %+v", s)
	}
}

// What cannot be a login never reaches the network: the directory here is
// a closed port, so any network call would be a failure, not a rejection.
func TestImplausibleLoginsAreRefusedLocally(t *testing.T) {
	d := newDirectory(nil)
	if err := d.Configure(context.Background(), []byte(`{"url":"ldap://127.0.0.1:1","base":"dc=example,dc=com"}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ login, password string }{
		{"alice", ""}, {"", "x"}, {"ali\nce", "x"}, {"\x00", "x"}, {"\xff", "x"}, {strings.Repeat("a", maxLogin+1), "x"},
	} {
		if _, err := d.Authenticate(context.Background(), c.login, c.password); !errors.Is(err, authprovider.ErrInvalidCredentials) {
			t.Errorf("Authenticate(%.20q, %q): %v", c.login, c.password, err)
		}
	}
}

func TestDescribeSchemaIsJSON(t *testing.T) {
	d, err := newDirectory(nil).Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(d.SettingsSchema), &schema); err != nil {
		t.Fatal(err)
	}
	// Every settings field is in the schema.
	for _, key := range []string{"url", "bind_dn", "bind_password", "base", "user_filter", "attributes", "start_tls", "ca_cert", "timeout"} {
		if _, ok := schema.Properties[key]; !ok {
			t.Errorf("schema lacks %q", key)
		}
	}
}
