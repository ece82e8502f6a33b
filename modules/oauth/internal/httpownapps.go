package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// A user's own applications (GitLab's /profile/applications): listed,
// registered and deleted on one page, by the signed-in user only.

// ownAppView is an application as its owner's page shows it.
type ownAppView struct {
	ID           int64
	Name         string
	ClientID     string
	RedirectURIs []string
	Scopes       string
	Confidential bool
}

// signedIn returns the browser's session (as the context of the service's
// calls) and CSRF token, or shows the sign-in page (coming back to
// returnTo) and returns false.
func (h *handlers) signedIn(w http.ResponseWriter, r *http.Request, returnTo string) (context.Context, *auth.User, string, bool) {
	sess, secret, ok := h.browserSession(r)
	if !ok {
		h.renderSignIn(w, r, http.StatusUnauthorized, h.site.Prefix()+returnTo, "Sign in to manage your applications.")
		return nil, nil, "", false
	}
	return auth.WithPrincipal(r.Context(), sessionPrincipal(sess)), sess.User, web.SessionCSRF(secret), true
}

func (h *handlers) renderOwnApps(ctx context.Context, w http.ResponseWriter, r *http.Request, status int, u *auth.User, csrf string, d pageData) {
	apps, err := h.svc.OwnApplications(ctx)
	if err != nil {
		h.log.Error("could not list applications", zap.Error(err))
		h.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not list your applications."})
		return
	}
	var list []ownAppView
	for _, a := range apps {
		list = append(list, ownAppView{ID: int64(a.ID), Name: a.Name, ClientID: a.ClientID, RedirectURIs: a.RedirectURIs,
			Scopes: strings.Join(a.Scopes, " "), Confidential: a.Confidential})
	}
	d.Title, d.User, d.CSRF, d.Apps = "Your applications", u.Username, csrf, list
	h.render(w, r, status, "applications", d)
}

// serveOwnApps is GET /oauth/applications.
func (h *handlers) serveOwnApps(w http.ResponseWriter, r *http.Request) {
	ctx, u, csrf, ok := h.signedIn(w, r, "/oauth/applications")
	if !ok {
		return
	}
	h.renderOwnApps(ctx, w, r, http.StatusOK, u, csrf, pageData{})
}

// serveCreateOwnApp registers an application for the signed-in user and
// shows its secret, once.
func (h *handlers) serveCreateOwnApp(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	ctx, u, csrf, ok := h.signedIn(w, r, "/oauth/applications")
	if !ok {
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), csrf) {
		h.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
		return
	}
	for k, vs := range form {
		if len(vs) > 1 && k != "scopes" {
			h.renderOwnApps(ctx, w, r, http.StatusBadRequest, u, csrf, pageData{Error: "The field " + k + " is repeated."})
			return
		}
	}
	app, err := h.svc.CreateOwnApplication(ctx, provider.NewApplication{Name: form.Get("name"), RedirectURI: form.Get("redirect_uri"),
		Scopes: strings.Join(form["scopes"], " "), Confidential: form.Get("confidential") == "1"})
	var fields provider.InvalidError
	switch {
	case errors.As(err, &fields):
		var msgs []string
		for _, k := range []string{"name", "redirect_uri", "scopes"} {
			for _, m := range fields[k] {
				msgs = append(msgs, fieldLabel[k]+" "+m)
			}
		}
		h.renderOwnApps(ctx, w, r, http.StatusBadRequest, u, csrf, pageData{Error: strings.Join(msgs, " ")})
		return
	case err != nil:
		h.log.Error("could not register an application", zap.Error(err))
		h.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not register the application."})
		return
	}
	h.renderOwnApps(ctx, w, r, http.StatusCreated, u, csrf, pageData{Created: &createdApp{Name: app.Name, ClientID: app.ClientID, Secret: app.Secret}})
}

var fieldLabel = map[string]string{"name": "Name", "redirect_uri": "Redirect URI", "scopes": "Scopes"}

// serveDeleteOwnApp deletes one of the signed-in user's applications; its
// tokens stop working.
func (h *handlers) serveDeleteOwnApp(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	ctx, _, csrf, ok := h.signedIn(w, r, "/oauth/applications")
	if !ok {
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), csrf) {
		h.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
		return
	}
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 63)
	if err == nil {
		err = h.svc.DeleteOwnApplication(ctx, provider.AppID(id))
	}
	switch {
	case err == nil:
		h.site.Redirect(w, r, "/oauth/applications")
	case errors.Is(err, provider.ErrAppNotFound), errors.Is(err, strconv.ErrSyntax), errors.Is(err, strconv.ErrRange):
		h.render(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Message: "You have no such application."})
	default:
		h.log.Error("could not delete an application", zap.Error(err))
		h.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not delete the application."})
	}
}
