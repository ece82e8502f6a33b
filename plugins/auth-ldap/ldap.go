package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-ldap/ldap/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// maxLogin bounds a login before it reaches the directory: no real account
// name is longer, and a megabyte filter is a cheap way to load a server.
const maxLogin = 512

// directory is the LDAP auth provider. Each call uses a fresh connection:
// the bind as the user changes a connection's identity, and a sign-in is
// rare enough that a pool would buy little and cost correctness.
type directory struct {
	log hclog.Logger

	mu  sync.RWMutex
	cfg *settings // nil until Configure
}

func newDirectory(log hclog.Logger) *directory {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &directory{log: log}
}

func (d *directory) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{
		Name:           "auth-ldap",
		Version:        version,
		APIVersions:    []string{authprovider.APIVersion},
		Features:       []string{authprovider.FeatureSearchUsers, authprovider.FeatureSyncUsers},
		SettingsSchema: settingsSchema,
	}, nil
}

// Configure replaces the settings only when the new ones are valid. It does
// not contact the server: a directory that is down at start-up is a failure
// of each call (the host tries the next provider), not a configuration error.
func (d *directory) Configure(_ context.Context, raw []byte) error {
	s, err := parseSettings(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", authprovider.ErrInvalidSettings, err)
	}
	d.mu.Lock()
	d.cfg = s
	d.mu.Unlock()
	d.log.Debug("configured", "url", s.URL, "base", s.Base, "user_filter", s.UserFilter, "bind_dn", s.BindDN, "start_tls", s.StartTLS)
	return nil
}

func (d *directory) settings() (*settings, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.cfg == nil {
		return nil, errors.New("auth-ldap: not configured")
	}
	return d.cfg, nil
}

// plausibleLogin refuses, before any network call, what cannot be an account
// name: empty, too long, not UTF-8, or holding control characters.
func plausibleLogin(login string) bool {
	if login == "" || len(login) > maxLogin || !utf8.ValidString(login) {
		return false
	}
	return strings.IndexFunc(login, unicode.IsControl) < 0
}

func (d *directory) Authenticate(ctx context.Context, login, password string) (authprovider.Identity, error) {
	// Never let an empty password reach a bind: LDAP treats it as an
	// unauthenticated bind, which succeeds.
	if password == "" || !plausibleLogin(login) {
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	s, err := d.settings()
	if err != nil {
		return authprovider.Identity{}, err
	}
	conn, done, err := d.connect(ctx, s)
	if err != nil {
		return authprovider.Identity{}, err
	}
	defer done()

	res, err := conn.Search(d.request(s, s.Base, ldap.ScopeWholeSubtree, s.userFilter(login), 2))
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) || (err == nil && len(res.Entries) > 1):
		d.log.Warn("login matches more than one entry; refusing it", "login", login, "user_filter", s.UserFilter)
		return authprovider.Identity{}, fmt.Errorf("%w: login is ambiguous in the directory", authprovider.ErrInvalidCredentials)
	case err != nil:
		return authprovider.Identity{}, d.failure(ctx, "search for the user", err)
	case len(res.Entries) == 0:
		return authprovider.Identity{}, authprovider.ErrUnknownUser
	}
	entry := res.Entries[0]

	err = conn.Bind(entry.DN, password)
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials):
		if disabled(err) {
			return authprovider.Identity{}, authprovider.ErrDisabled
		}
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	case ldap.IsErrorWithCode(err, ldap.LDAPResultUnwillingToPerform) && disabled(err):
		return authprovider.Identity{}, authprovider.ErrDisabled
	case err != nil:
		return authprovider.Identity{}, d.failure(ctx, "bind as the user", err)
	}
	return s.identity(entry)
}

// disabled recognises Active Directory's sub-codes for a disabled (533),
// locked (775) or expired (701, 532) account in a bind error.
func disabled(err error) bool {
	msg := err.Error()
	for _, code := range []string{"data 533", "data 775", "data 701", "data 532"} {
		if strings.Contains(msg, code) {
			return true
		}
	}
	return false
}

// SearchUsers finds users whose username contains query (escaped), at most
// limit (default 20, at most 1000).
func (d *directory) SearchUsers(ctx context.Context, query string, limit int) ([]authprovider.Identity, error) {
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 1000)
	if len(query) > maxLogin || !utf8.ValidString(query) {
		return []authprovider.Identity{}, nil
	}
	s, err := d.settings()
	if err != nil {
		return nil, err
	}
	conn, done, err := d.connect(ctx, s)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := conn.Search(d.request(s, s.Base, ldap.ScopeWholeSubtree, s.searchFilter(query), limit))
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, d.failure(ctx, "search users", err)
	}
	out := []authprovider.Identity{}
	for _, e := range res.Entries {
		if id, err := s.identity(e); err == nil && len(out) < limit {
			out = append(out, id)
		}
	}
	return out, nil
}

// SyncUsers looks each DN up with a base-scope search (an id that is not a
// DN under base, or names no user entry, is absent); a directory failure
// fails the whole call so that the host blocks no one on a bad day.
func (d *directory) SyncUsers(ctx context.Context, dns []string) ([]authprovider.Identity, error) {
	present := []authprovider.Identity{}
	if len(dns) == 0 {
		return present, nil
	}
	s, err := d.settings()
	if err != nil {
		return nil, err
	}
	conn, done, err := d.connect(ctx, s)
	if err != nil {
		return nil, err
	}
	defer done()
	seen := map[string]bool{}
	for _, dn := range dns {
		if !s.underBase(dn) || seen[dn] {
			continue
		}
		seen[dn] = true
		res, err := conn.Search(d.request(s, dn, ldap.ScopeBaseObject, s.presenceFilter(), 1))
		if ldap.IsErrorAnyOf(err, ldap.LDAPResultNoSuchObject, ldap.LDAPResultInvalidDNSyntax) {
			continue
		}
		if err != nil {
			return nil, d.failure(ctx, "look up "+dn, err)
		}
		for _, e := range res.Entries {
			if id, err := s.identity(e); err == nil {
				// The host matches by the id it asked with, whatever case
				// or spacing the directory writes the DN in.
				id.ExternalID = dn
				present = append(present, id)
			}
		}
	}
	return present, nil
}

// underBase: dn parses and lies under (or is) the search base.
func (s *settings) underBase(dn string) bool {
	if dn == "" || !utf8.ValidString(dn) || strings.IndexFunc(dn, unicode.IsControl) >= 0 {
		return false
	}
	parsed, err := ldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 {
		return false
	}
	return s.baseDN.AncestorOfFold(parsed)
}

func (d *directory) request(s *settings, base string, scope int, filter string, size int) *ldap.SearchRequest {
	return ldap.NewSearchRequest(base, scope, ldap.NeverDerefAliases, size,
		int(time.Duration(s.Timeout)/time.Second), false, filter, s.attributeList(), nil)
}

func (s *settings) identity(e *ldap.Entry) (authprovider.Identity, error) {
	id := authprovider.Identity{
		ExternalID: e.DN,
		Username:   e.GetAttributeValue(s.Attributes.Username),
		Email:      e.GetAttributeValue(s.Attributes.Email),
		Name:       e.GetAttributeValue(s.Attributes.Name),
	}
	if s.Attributes.Groups != "" {
		id.Groups = e.GetAttributeValues(s.Attributes.Groups)
	}
	if id.Username == "" {
		return id, fmt.Errorf("auth-ldap: entry %s has no %s attribute", e.DN, s.Attributes.Username)
	}
	return id, nil
}

// connect dials (honouring ctx and the timeout), upgrades with StartTLS when
// asked, and binds as the service account. done closes the connection.
func (d *directory) connect(ctx context.Context, s *settings) (*ldap.Conn, func(), error) {
	timeout := time.Duration(s.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	u := strings.TrimPrefix(strings.TrimPrefix(s.URL, "ldaps://"), "ldap://")
	host := strings.SplitN(u, "/", 2)[0]
	ldaps := strings.HasPrefix(s.URL, "ldaps://")
	if _, _, err := net.SplitHostPort(host); err != nil {
		if ldaps {
			host = net.JoinHostPort(host, ldap.DefaultLdapsPort)
		} else {
			host = net.JoinHostPort(host, ldap.DefaultLdapPort)
		}
	}
	tlsConfig := &tls.Config{ServerName: s.host, RootCAs: s.roots, MinVersion: tls.VersionTLS12}

	var raw net.Conn
	var err error
	dialer := &net.Dialer{Timeout: timeout}
	if ldaps {
		raw, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", host)
	} else {
		raw, err = dialer.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		cancel()
		return nil, nil, d.failure(ctx, "connect to "+host, err)
	}
	conn := ldap.NewConn(raw, ldaps)
	conn.Start()
	conn.SetTimeout(timeout)
	// Closing the connection is how a cancelled call stops waiting.
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	done := func() {
		stop()
		cancel()
		_ = conn.Close()
	}
	if s.StartTLS {
		if err := conn.StartTLS(tlsConfig); err != nil {
			done()
			return nil, nil, d.failure(ctx, "StartTLS", err)
		}
	}
	if s.BindDN != "" {
		if err := conn.Bind(s.BindDN, s.BindPassword); err != nil {
			done()
			if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
				d.log.Error("the service account was refused; check bind_dn and bind_password", "bind_dn", s.BindDN)
			}
			return nil, nil, d.failure(ctx, "bind as the service account", err)
		}
	}
	return conn, done, nil
}

// failure is a directory error: not a rejection, so the host tries the next
// provider. It never contains a password.
func (d *directory) failure(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("auth-ldap: %s: %w", what, ctx.Err())
	}
	d.log.Warn("directory failure", "op", what, "error", err.Error())
	return fmt.Errorf("auth-ldap: %s: %w", what, err)
}

// Interface guards.
var (
	_ authprovider.Provider     = (*directory)(nil)
	_ authprovider.UserSearcher = (*directory)(nil)
	_ authprovider.UserSyncer   = (*directory)(nil)
)
