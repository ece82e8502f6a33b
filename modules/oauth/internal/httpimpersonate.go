package internal

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/identity"
)

// The admin area's impersonation buttons (impersonation.go): "Impersonate"
// on a user's admin page, and "Stop impersonating" in the banner every
// page shows meanwhile. The site checks the CSRF token of both.

// serveImpersonate is POST /admin/users/{username}/impersonate
// (administrators only, Site.Admin): the browser is now that user.
func (h *handlers) serveImpersonate(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		h.site.RedirectToSignIn(w, r)
		return
	}
	err = h.sessions.StartImpersonation(r.Context(), c.Value, r.PathValue("username"))
	var forbidden *auth.ForbiddenError
	switch {
	case err == nil:
		h.site.Redirect(w, r, "/")
	case errors.As(err, &forbidden) && forbidden.Reason != "":
		h.site.ErrorMessage(w, r, http.StatusForbidden, "Not allowed", forbidden.Reason)
	default:
		h.site.Fail(w, r, err, web.Refusals{Missing: []error{identity.ErrUserNotFound},
			SignIn: []error{auth.ErrUnauthorized}, Page: "impersonate"})
	}
}

// serveStopImpersonating is POST /admin/impersonation/stop: the browser
// is its administrator again, back on the page of the user it was.
func (h *handlers) serveStopImpersonating(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil || web.Impersonating(r.Context()) == nil {
		h.site.Missing(w, r)
		return
	}
	target, err := h.sessions.StopImpersonation(r.Context(), c.Value)
	if err != nil {
		h.site.Fail(w, r, err, web.Refusals{Missing: []error{ErrNotImpersonating}, Page: "stop impersonating"})
		return
	}
	if target.Username == "" {
		h.site.Redirect(w, r, "/admin/users")
		return
	}
	h.site.Redirect(w, r, "/admin/users/"+url.PathEscape(target.Username))
}
