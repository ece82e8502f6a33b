package internal

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// A user's own applications (GitLab's /profile/applications): listed,
// registered and deleted on one page, by the signed-in user only.

// ownAppView is an application as its owner's page shows it.
type ownAppView struct {
	ID           uint64
	Name         string
	ClientID     string
	RedirectURIs []string
	Scopes       string
	Confidential bool
}

// signedIn returns the browser's user and CSRF token, or shows the sign-in
// page (coming back to returnTo) and returns nil.
func (s *Service) signedIn(w http.ResponseWriter, r *http.Request, returnTo string) (*auth.User, string) {
	_, u, secret := s.browserSession(r)
	if u == nil {
		s.renderSignIn(w, r, http.StatusUnauthorized, returnTo, "Sign in to manage your applications.")
		return nil, ""
	}
	return u, sessionCSRF(secret)
}

func (s *Service) renderOwnApps(w http.ResponseWriter, r *http.Request, status int, u *auth.User, csrf string, d pageData) {
	var list []ownAppView
	err := s.db.View(r.Context(), func(tx *store.Tx) error {
		ids, err := apps.IDsBy(tx, "owner", itoa(uint64(u.ID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			a, err := apps.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, ownAppView{ID: a.ID, Name: a.Name, ClientID: a.UID, RedirectURIs: a.RedirectURIs,
				Scopes: strings.Join(a.Scopes, " "), Confidential: a.Confidential})
		}
		return nil
	})
	if err != nil {
		s.log.Error("could not list applications", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not list your applications."})
		return
	}
	d.Title, d.User, d.CSRF, d.Apps = "Your applications", u.Username, csrf, list
	s.render(w, r, status, "applications", d)
}

// serveOwnApps is GET /oauth/applications.
func (s *Service) serveOwnApps(w http.ResponseWriter, r *http.Request) {
	u, csrf := s.signedIn(w, r, "/oauth/applications")
	if u == nil {
		return
	}
	s.renderOwnApps(w, r, http.StatusOK, u, csrf, pageData{})
}

// serveCreateOwnApp registers an application for the signed-in user and
// shows its secret, once.
func (s *Service) serveCreateOwnApp(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readForm(w, r)
	if !ok {
		return
	}
	u, csrf := s.signedIn(w, r, "/oauth/applications")
	if u == nil {
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), csrf) {
		s.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
		return
	}
	for k, vs := range form {
		if len(vs) > 1 && k != "scopes" {
			s.renderOwnApps(w, r, http.StatusBadRequest, u, csrf, pageData{Error: "The field " + k + " is repeated."})
			return
		}
	}
	v, err := s.CreateApplication(r.Context(), NewApplication{Name: form.Get("name"), RedirectURI: form.Get("redirect_uri"),
		Scopes: strings.Join(form["scopes"], " "), Confidential: form.Get("confidential") == "1", OwnerID: uint64(u.ID)})
	var fields api.FieldErrors
	switch {
	case errors.As(err, &fields):
		var msgs []string
		for _, k := range []string{"name", "redirect_uri", "scopes"} {
			for _, m := range fields[k] {
				msgs = append(msgs, fieldLabel[k]+" "+m)
			}
		}
		s.renderOwnApps(w, r, http.StatusBadRequest, u, csrf, pageData{Error: strings.Join(msgs, " ")})
		return
	case err != nil:
		s.log.Error("could not register an application", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not register the application."})
		return
	}
	s.renderOwnApps(w, r, http.StatusCreated, u, csrf, pageData{Created: &createdApp{Name: v.ApplicationName, ClientID: v.ApplicationID, Secret: v.Secret}})
}

var fieldLabel = map[string]string{"name": "Name", "redirect_uri": "Redirect URI", "scopes": "Scopes"}

// serveDeleteOwnApp deletes one of the signed-in user's applications; its
// tokens stop working.
func (s *Service) serveDeleteOwnApp(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readForm(w, r)
	if !ok {
		return
	}
	u, csrf := s.signedIn(w, r, "/oauth/applications")
	if u == nil {
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), csrf) {
		s.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
		return
	}
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err == nil {
		err = s.updateTokens(r.Context(), func(tx *store.Tx) error {
			a, err := apps.Get(tx, id)
			if errors.Is(err, store.ErrNotFound) || (err == nil && a.OwnerID != uint64(u.ID)) {
				return ErrAppNotFound // another user's is not found either
			}
			if err != nil {
				return err
			}
			return removeApp(tx, id)
		})
	}
	switch {
	case err == nil:
		http.Redirect(w, r, "/oauth/applications", http.StatusSeeOther)
	case errors.Is(err, ErrAppNotFound), errors.Is(err, strconv.ErrSyntax), errors.Is(err, strconv.ErrRange):
		s.render(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Message: "You have no such application."})
	default:
		s.log.Error("could not delete an application", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not delete the application."})
	}
}
