package internal

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The applications of provider.Service: administrators' (the API) and
// users' own (their applications page). The adapters are http.go and
// httpownapps.go.

// Limits on an application's fields.
const (
	maxAppName      = 255
	maxRedirectURIs = 10
	maxRedirectURI  = 2000
)

// requireAdmin lets administrators (and the server itself) through.
func requireAdmin(ctx context.Context) error {
	p := auth.FromContext(ctx)
	switch {
	case p.IsAnonymous():
		return auth.ErrUnauthorized
	case !p.IsAdmin():
		return auth.Forbidden("")
	}
	return nil
}

// signedIn is the caller, who must be signed in.
func signedIn(ctx context.Context) (*auth.Principal, error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return nil, auth.ErrUnauthorized
	}
	return p, nil
}

// appOf is the contract's record of a (without its secret).
func appOf(a *Application) provider.Application {
	return provider.Application{ID: a.ID, ClientID: a.UID, Name: a.Name,
		RedirectURIs: append([]string{}, a.RedirectURIs...), Scopes: append([]string{}, a.Scopes...),
		Confidential: a.Confidential, OwnerID: a.OwnerID, CreatedAt: a.CreatedAt}
}

// validateApp checks an application's fields and returns its redirect URIs
// and scopes, or the fields' errors.
func validateApp(n provider.NewApplication) ([]string, []string, error) {
	fields := provider.InvalidError{}
	name := strings.TrimSpace(n.Name)
	switch {
	case name == "":
		fields["name"] = append(fields["name"], "can't be blank")
	case !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxAppName:
		fields["name"] = append(fields["name"], "is too long (maximum is 255 characters)")
	}
	uris := strings.FieldsFunc(n.RedirectURI, func(r rune) bool { return r == '\n' || r == '\r' || r == ' ' || r == '\t' })
	switch {
	case len(uris) == 0:
		fields["redirect_uri"] = append(fields["redirect_uri"], "can't be blank")
	case len(uris) > maxRedirectURIs:
		fields["redirect_uri"] = append(fields["redirect_uri"], "has too many URIs (maximum is 10)")
	default:
		for _, u := range uris {
			if msg := redirectURIProblem(u); msg != "" {
				fields["redirect_uri"] = append(fields["redirect_uri"], msg)
				break
			}
		}
	}
	scopes, ok := parseScopes(n.Scopes)
	if !ok || len(scopes) == 0 {
		fields["scopes"] = append(fields["scopes"], "doesn't match configured on the server.")
	}
	if len(fields) > 0 {
		return nil, nil, fields
	}
	return uris, scopes, nil
}

// redirectURIProblem says what is wrong with a callback URI, "" if
// nothing: it must be absolute, without a fragment (RFC 6749 3.1.2), and
// http(s) or a private-use scheme of a native app (reverse domain name,
// RFC 8252 7.1) — never javascript:, data: and the like, which would run in
// the server's page.
func redirectURIProblem(raw string) string {
	if len(raw) > maxRedirectURI || !utf8.ValidString(raw) {
		return "is too long (maximum is 2000 characters)"
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return "must be an absolute URI."
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "cannot contain a fragment."
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "http" || scheme == "https":
		if u.Host == "" || u.User != nil {
			return "must be an absolute URI."
		}
	case strings.Contains(scheme, "."):
	default:
		return "must use https, http or a private-use (reverse domain) scheme."
	}
	return ""
}

// CreateApplication implements provider.Service.
func (s *Service) CreateApplication(ctx context.Context, in provider.NewApplication) (provider.Application, error) {
	if err := requireAdmin(ctx); err != nil {
		return provider.Application{}, err
	}
	return s.createApp(ctx, in, 0)
}

// CreateOwnApplication implements provider.Service.
func (s *Service) CreateOwnApplication(ctx context.Context, in provider.NewApplication) (provider.Application, error) {
	p, err := signedIn(ctx)
	if err != nil {
		return provider.Application{}, err
	}
	return s.createApp(ctx, in, p.UserID())
}

// createApp registers a client and returns it with its secret.
func (s *Service) createApp(ctx context.Context, n provider.NewApplication, ownerID int64) (provider.Application, error) {
	uris, scopes, err := validateApp(n)
	if err != nil {
		return provider.Application{}, err
	}
	uid, secret := newSecret(), newSecret()
	app := &Application{UID: uid, SecretHash: hashSecret(secret), Name: strings.TrimSpace(n.Name),
		RedirectURIs: uris, Scopes: scopes, Confidential: n.Confidential, OwnerID: ownerID, CreatedAt: s.now()}
	if err := s.db.Update(ctx, func(tx *store.Tx) error {
		app.ID = 0
		return apps.Insert(tx, app)
	}); err != nil {
		return provider.Application{}, err
	}
	out := appOf(app)
	out.Secret = secret
	return out, nil
}

// Applications implements provider.Service.
func (s *Service) Applications(ctx context.Context) ([]provider.Application, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	out := []provider.Application{}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		return apps.Scan(tx, false, 0, func(a *Application) (bool, error) {
			out = append(out, appOf(a))
			return true, nil
		})
	})
	return out, err
}

// OwnApplications implements provider.Service.
func (s *Service) OwnApplications(ctx context.Context) ([]provider.Application, error) {
	p, err := signedIn(ctx)
	if err != nil {
		return nil, err
	}
	var out []provider.Application
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := apps.IDsBy(tx, "owner", store.IDString(p.UserID()))
		if err != nil {
			return err
		}
		for _, id := range ids {
			a, err := apps.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, appOf(a))
		}
		return nil
	})
	return out, err
}

// DeleteApplication implements provider.Service.
func (s *Service) DeleteApplication(ctx context.Context, id provider.AppID) error {
	if err := requireAdmin(ctx); err != nil {
		return err
	}
	return s.updateTokens(ctx, func(tx *store.Tx) error {
		if !apps.Exists(tx, id) {
			return ErrAppNotFound
		}
		return removeApp(tx, id)
	})
}

// DeleteOwnApplication implements provider.Service.
func (s *Service) DeleteOwnApplication(ctx context.Context, id provider.AppID) error {
	p, err := signedIn(ctx)
	if err != nil {
		return err
	}
	return s.updateTokens(ctx, func(tx *store.Tx) error {
		a, err := apps.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && a.OwnerID != p.UserID()) {
			return ErrAppNotFound // another user's is not found either
		}
		if err != nil {
			return err
		}
		return removeApp(tx, id)
	})
}
