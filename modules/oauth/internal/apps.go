package internal

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
)

// Limits on an application's fields.
const (
	maxAppName      = 255
	maxRedirectURIs = 10
	maxRedirectURI  = 2000
)

// NewRoutes registers the applications API and mounts the OAuth endpoints
// and the sign-in pages, which live outside /api/v4.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "oauth", Register: s.register}
}

func (s *Service) register(a *api.API) {
	s.external = a.ExternalURL
	a.MapError(ErrAppNotFound, func(error) *api.Error { return api.NotFound("Application") })

	api.Register(a, api.Op{ID: "create-application", Method: http.MethodPost, Path: "/applications", Tags: []string{"applications"},
		Summary: "Register an OAuth application; the answer shows its secret, this once", Access: api.AdminOnly}, s.createApp)
	api.Register(a, api.Op{ID: "list-applications", Method: http.MethodGet, Path: "/applications", Tags: []string{"applications"},
		Summary: "The registered OAuth applications (without secrets)", Access: api.AdminOnly}, s.listApps)
	api.Register(a, api.Op{ID: "delete-application", Method: http.MethodDelete, Path: "/applications/{id}", Tags: []string{"applications"},
		Summary: "Delete an OAuth application; its tokens stop working", Access: api.AdminOnly}, s.deleteApp)

	a.Mount("oauth-token", "POST /oauth/token", http.HandlerFunc(s.serveToken))
	a.Mount("oauth-token-info", "GET /oauth/token/info", http.HandlerFunc(s.serveTokenInfo))
	a.Mount("oauth-revoke", "POST /oauth/revoke", http.HandlerFunc(s.serveRevoke))
	a.Mount("oauth-authorize", "GET /oauth/authorize", http.HandlerFunc(s.serveAuthorize))
	a.Mount("oauth-authorize-decision", "POST /oauth/authorize", http.HandlerFunc(s.serveDecision))
	a.Mount("sign-in-page", "GET /users/sign_in", http.HandlerFunc(s.serveSignInPage))
	a.Mount("sign-in", "POST /users/sign_in", http.HandlerFunc(s.serveSignIn))
	a.Mount("sign-out", "POST /users/sign_out", http.HandlerFunc(s.serveSignOut))
	a.Mount("password-forgot-page", "GET /users/password/new", http.HandlerFunc(s.serveForgotPage))
	a.Mount("password-reset-page", "GET /users/password/edit", http.HandlerFunc(s.serveResetPage))
	a.Mount("password-reset", "POST /users/password", http.HandlerFunc(s.serveReset))
	a.Mount("password-reset-put", "PUT /users/password", http.HandlerFunc(s.serveReset))
	a.Mount("own-applications", "GET /oauth/applications", http.HandlerFunc(s.serveOwnApps))
	a.Mount("own-application-create", "POST /oauth/applications", http.HandlerFunc(s.serveCreateOwnApp))
	a.Mount("own-application-delete", "POST /oauth/applications/{id}/delete", http.HandlerFunc(s.serveDeleteOwnApp))
}

// ApplicationView is an application as the API shows it (GitLab 10.5+'s
// shape); Secret only in the answer to its creation.
type ApplicationView struct {
	ID              uint64 `json:"id"`
	ApplicationID   string `json:"application_id"`
	ApplicationName string `json:"application_name"`
	Secret          string `json:"secret,omitempty"`
	CallbackURL     string `json:"callback_url"`
	Confidential    bool   `json:"confidential"`
}

func appView(a *Application) ApplicationView {
	return ApplicationView{ID: a.ID, ApplicationID: a.UID, ApplicationName: a.Name,
		CallbackURL: strings.Join(a.RedirectURIs, "\n"), Confidential: a.Confidential}
}

type createAppInput struct {
	Body struct {
		Name         string `json:"name" required:"true" doc:"The application's name"`
		RedirectURI  string `json:"redirect_uri" required:"true" doc:"Callback URIs, one per line"`
		Scopes       string `json:"scopes" required:"true" doc:"Scopes, separated by spaces: api, read_user, openid"`
		Confidential *bool  `json:"confidential,omitempty" doc:"Whether the client keeps its secret (a server); default true"`
	}
}

type appOutput struct{ Body ApplicationView }

type appsOutput struct{ Body []ApplicationView }

type appPath struct {
	ID uint64 `path:"id" doc:"Application id"`
}

// NewApplication is what an application is made from.
type NewApplication struct {
	Name, RedirectURI, Scopes string
	Confidential              bool
	OwnerID                   uint64
}

// validate checks an application's fields and returns its redirect URIs
// and scopes, or the fields' errors.
func (n NewApplication) validate() ([]string, []string, error) {
	fields := map[string][]string{}
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
		return nil, nil, api.FieldErrors(fields)
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

// CreateApplication registers a client and returns it with its secret.
func (s *Service) CreateApplication(ctx context.Context, n NewApplication) (ApplicationView, error) {
	uris, scopes, err := n.validate()
	if err != nil {
		return ApplicationView{}, err
	}
	uid, secret := newSecret(), newSecret()
	app := &Application{UID: uid, SecretHash: hashSecret(secret), Name: strings.TrimSpace(n.Name),
		RedirectURIs: uris, Scopes: scopes, Confidential: n.Confidential, OwnerID: n.OwnerID, CreatedAt: s.now()}
	if err := s.db.Update(ctx, func(tx *store.Tx) error {
		app.ID = 0
		return apps.Insert(tx, app)
	}); err != nil {
		return ApplicationView{}, err
	}
	v := appView(app)
	v.Secret = secret
	return v, nil
}

func (s *Service) createApp(ctx context.Context, in *createAppInput) (*appOutput, error) {
	confidential := in.Body.Confidential == nil || *in.Body.Confidential
	v, err := s.CreateApplication(ctx, NewApplication{Name: in.Body.Name, RedirectURI: in.Body.RedirectURI,
		Scopes: in.Body.Scopes, Confidential: confidential})
	if err != nil {
		return nil, err
	}
	return &appOutput{Body: v}, nil
}

func (s *Service) listApps(ctx context.Context, _ *struct{}) (*appsOutput, error) {
	out := []ApplicationView{}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		return apps.Scan(tx, false, 0, func(a *Application) (bool, error) {
			out = append(out, appView(a))
			return true, nil
		})
	})
	return &appsOutput{Body: out}, err
}

func (s *Service) deleteApp(ctx context.Context, in *appPath) (*struct{}, error) {
	err := s.updateTokens(ctx, func(tx *store.Tx) error {
		if !apps.Exists(tx, in.ID) {
			return ErrAppNotFound
		}
		return removeApp(tx, in.ID)
	})
	return nil, err
}
