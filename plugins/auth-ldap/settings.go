package main

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// settingsSchema is the JSON schema Describe announces.
const settingsSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "auth-ldap settings",
  "type": "object",
  "additionalProperties": false,
  "required": ["url", "base"],
  "properties": {
    "url": {"type": "string", "pattern": "^ldaps?://", "description": "ldap://host:389 or ldaps://host:636"},
    "bind_dn": {"type": "string", "description": "service account DN; empty for an anonymous search"},
    "bind_password": {"type": "string", "description": "password of bind_dn"},
    "base": {"type": "string", "description": "DN under which users are searched"},
    "user_filter": {"type": "string", "default": "(uid=%s)", "description": "LDAP filter; every %s becomes the escaped login"},
    "attributes": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "username": {"type": "string", "default": "uid"},
        "email": {"type": "string", "default": "mail"},
        "name": {"type": "string", "default": "cn"},
        "groups": {"type": "string", "default": "", "description": "multi-valued attribute listing the user's groups (memberOf); empty: none"}
      }
    },
    "start_tls": {"type": "boolean", "default": false},
    "ca_cert": {"type": "string", "description": "PEM CA certificates to trust instead of the system roots"},
    "timeout": {"type": "string", "default": "10s", "description": "Go duration bounding each connection and operation"}
  }
}`

// settings is the decoded, validated configuration.
type settings struct {
	URL          string     `json:"url"`
	BindDN       string     `json:"bind_dn"`
	BindPassword string     `json:"bind_password"`
	Base         string     `json:"base"`
	UserFilter   string     `json:"user_filter"`
	Attributes   attributes `json:"attributes"`
	StartTLS     bool       `json:"start_tls"`
	CACert       string     `json:"ca_cert"`
	Timeout      duration   `json:"timeout"`

	baseDN *ldap.DN
	roots  *x509.CertPool
	host   string
}

type attributes struct {
	Username string `json:"username"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Groups   string `json:"groups"`
}

// duration reads "10s" (a Go duration) or a number of seconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout: %w", err)
		}
		*d = duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return errors.New(`timeout: want a duration such as "10s" or a number of seconds`)
	}
	*d = duration(secs * float64(time.Second))
	return nil
}

// parseSettings decodes and checks raw; unknown keys are refused so that a
// typo does not silently fall back to a default.
func parseSettings(raw []byte) (*settings, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("settings must be a JSON object")
	}
	s := &settings{}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if dec.More() {
		return nil, errors.New("settings: trailing data after the JSON object")
	}
	if s.UserFilter == "" {
		s.UserFilter = "(uid=%s)"
	}
	if s.Attributes.Username == "" {
		s.Attributes.Username = "uid"
	}
	if s.Attributes.Email == "" {
		s.Attributes.Email = "mail"
	}
	if s.Attributes.Name == "" {
		s.Attributes.Name = "cn"
	}
	if s.Timeout == 0 {
		s.Timeout = duration(10 * time.Second)
	}
	if s.Timeout < 0 || time.Duration(s.Timeout) > 5*time.Minute {
		return nil, errors.New("settings: timeout must be between 0 and 5m")
	}

	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return nil, fmt.Errorf("settings: url %q must be ldap://host[:port] or ldaps://host[:port]", s.URL)
	}
	if s.StartTLS && u.Scheme == "ldaps" {
		return nil, errors.New("settings: start_tls is for ldap:// URLs; ldaps:// is TLS already")
	}
	s.host = u.Hostname()
	if s.Base == "" {
		return nil, errors.New("settings: base is required")
	}
	if s.baseDN, err = ldap.ParseDN(s.Base); err != nil {
		return nil, fmt.Errorf("settings: base %q: %w", s.Base, err)
	}
	if s.BindDN != "" && s.BindPassword == "" {
		// An empty password would be an unauthenticated bind that "succeeds".
		return nil, errors.New("settings: bind_password is required with bind_dn")
	}
	if !strings.Contains(s.UserFilter, "%s") {
		return nil, fmt.Errorf("settings: user_filter %q must contain %%s where the login goes", s.UserFilter)
	}
	for _, f := range []string{s.userFilter("x"), s.presenceFilter(), s.searchFilter("x")} {
		if _, err := ldap.CompileFilter(f); err != nil {
			return nil, fmt.Errorf("settings: user_filter %q: %w", s.UserFilter, err)
		}
	}
	if s.CACert != "" {
		s.roots = x509.NewCertPool()
		if !s.roots.AppendCertsFromPEM([]byte(s.CACert)) {
			return nil, errors.New("settings: ca_cert holds no PEM certificate")
		}
	}
	return s, nil
}

// userFilter finds the entry of a login; the login is escaped here and
// nowhere else.
func (s *settings) userFilter(login string) string {
	return strings.ReplaceAll(s.UserFilter, "%s", ldap.EscapeFilter(login))
}

// presenceFilter matches any user entry (the login becomes a wildcard).
func (s *settings) presenceFilter() string {
	return strings.ReplaceAll(s.UserFilter, "%s", "*")
}

// searchFilter matches user entries whose username contains query.
func (s *settings) searchFilter(query string) string {
	sub := "*"
	if query != "" {
		sub = "*" + ldap.EscapeFilter(query) + "*"
	}
	return "(&" + s.presenceFilter() + "(" + s.Attributes.Username + "=" + sub + "))"
}

func (s *settings) attributeList() []string {
	attrs := []string{s.Attributes.Username, s.Attributes.Email, s.Attributes.Name}
	if s.Attributes.Groups != "" {
		attrs = append(attrs, s.Attributes.Groups)
	}
	return attrs
}
