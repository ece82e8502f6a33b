package web

import (
	"net/http"
	"net/url"

	"github.com/fennec-forge/fennec/core/auth"
)

// errorTexts are the error pages' titles and messages by status.
var errorTexts = map[int][2]string{
	http.StatusBadRequest:            {"Invalid request", "The request could not be understood."},
	http.StatusForbidden:             {"Access denied", "You are not allowed to do this."},
	http.StatusNotFound:              {"Page not found", "The page could not be found, or you are not allowed to see it. Check the address, or sign in with an account that may see it."},
	http.StatusMethodNotAllowed:      {"Not allowed", "This page does not accept this kind of request."},
	http.StatusRequestEntityTooLarge: {"Too large", "The form is larger than the server accepts."},
	http.StatusInternalServerError:   {"Something went wrong", "The server could not show this page. Try again later; if it keeps happening, tell an administrator."},
	http.StatusServiceUnavailable:    {"Try again shortly", "The server is busy or restarting a part. Try again in a moment."},
}

type errorData struct{ Message string }

// Error writes the error page of status (404, 403, 500...) with its
// standard title and message.
func (s *Site) Error(w http.ResponseWriter, r *http.Request, status int) {
	t, ok := errorTexts[status]
	if !ok {
		t = [2]string{http.StatusText(status), ""}
	}
	s.ErrorMessage(w, r, status, t[0], t[1])
}

// ErrorMessage writes an error page with its own title and message (plain
// text, escaped).
func (s *Site) ErrorMessage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	s.core.Render(w, r, "error", Page{Title: title, Status: status, Data: errorData{Message: message}})
}

// NotFound writes the 404 page.
func (s *Site) NotFound(w http.ResponseWriter, r *http.Request) {
	s.Error(w, r, http.StatusNotFound)
}

// Missing answers a page whose subject the visitor may not see, or that
// does not exist (the two are never told apart): an anonymous visitor is
// sent to sign in and brought back, as GitLab does; anyone else gets the
// 404 page.
func (s *Site) Missing(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		s.RedirectToSignIn(w, r)
		return
	}
	s.NotFound(w, r)
}

// RedirectToSignIn sends the browser to the sign-in page, which brings it
// back to this page afterwards.
func (s *Site) RedirectToSignIn(w http.ResponseWriter, r *http.Request) {
	prefix := s.Prefix()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, prefix+"/users/sign_in?return_to="+url.QueryEscape(prefix+r.URL.RequestURI()), http.StatusFound)
}

// Redirect sends the browser to path under the site's root (escaped,
// starting with "/"), with 303 after a form and 302 otherwise.
func (s *Site) Redirect(w http.ResponseWriter, r *http.Request, path string) {
	status := http.StatusFound
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusSeeOther
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.Prefix()+path, status)
}
