package internal

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity"
)

// The password reset page: the link of the mail identity's reset tokens
// are sent in (an account an administrator created with reset_password)
// opens a form that sets the password through identity. Its fields have
// the names of GitLab's form (user[...], _method=put), so a script written
// for GitLab posts the same. The token is in the page's URL and form only:
// the access log leaves query strings out, this code never logs it, and
// the page's Referrer-Policy keeps it from the next site.
const (
	fieldResetToken   = "user[reset_password_token]"
	fieldPassword     = "user[password]"
	fieldConfirmation = "user[password_confirmation]"
	fieldEmail        = "user[email]"
	// maxResetToken: the tokens are 20 characters; a longer value is no
	// token and is not carried into the page.
	maxResetToken = 128
	// maxEmailField: a longer e-mail field is refused and not shown again.
	maxEmailField = 255
)

// Messages of the reset page.
const (
	msgResetTokenInvalid = "Reset password token is invalid"
	msgResetTokenExpired = "Reset password token has expired. Ask for a new link."
)

// serveResetPage is GET /users/password/edit?reset_password_token=: the
// form. The token is checked when the form is sent, not here, so that
// opening the link tells a guesser nothing.
func (h *handlers) serveResetPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("reset_password_token")
	if token == "" || len(token) > maxResetToken {
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", msgResetTokenInvalid)
		return
	}
	h.renderReset(w, r, http.StatusOK, token, "")
}

// renderReset shows the reset page: the form for token (none when token is
// empty) and message as its error.
func (h *handlers) renderReset(w http.ResponseWriter, r *http.Request, status int, token, message string) {
	h.render(w, r, status, "reset_password", pageData{Title: "Change your password", CSRF: h.site.DoubleSubmitToken(w, r),
		ResetToken: token, Error: message, MinPassword: identity.MinPasswordLength})
}

// serveReset is the form's POST (or PUT) /users/password: it sets the
// password and sends the browser to the sign-in page, or shows the form
// again with what is wrong, having changed nothing.
func (h *handlers) serveReset(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	// GitLab's "forgot your password" form posts user[email] to the same
	// path, without _method; its change form says _method=put.
	if r.Method == http.MethodPost && form.Get("_method") == "" && !form.Has(fieldResetToken) && form.Has(fieldEmail) {
		h.serveForgot(w, r, form)
		return
	}
	if m := form.Get("_method"); m != "" && !strings.EqualFold(m, http.MethodPut) {
		h.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Invalid request", Message: "The form can only change a password."})
		return
	}
	token := form.Get(fieldResetToken)
	if token == "" || len(token) > maxResetToken {
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", msgResetTokenInvalid)
		return
	}
	if !h.site.CheckDoubleSubmit(r) {
		// No form with the posted token: another site could post its own
		// account's token and have the victim choose that account's
		// password. The mail's link shows a fresh form.
		h.renderReset(w, r, http.StatusForbidden, "", "The form expired. Open the link from the mail again.")
		return
	}
	password := form.Get(fieldPassword)
	if password != form.Get(fieldConfirmation) {
		h.renderReset(w, r, http.StatusUnprocessableEntity, token, "Password confirmation doesn't match the password.")
		return
	}
	ctx := auth.WithClientAddr(r.Context(), r.RemoteAddr)
	_, err := h.resets.ResetPasswordWithToken(ctx, token, password)
	var throttled *auth.ThrottledError
	var invalid interface{ Fields() map[string][]string }
	switch {
	case err == nil:
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		h.renderReset(w, r, http.StatusTooManyRequests, token, "Too many failed attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
		return
	case errors.Is(err, identity.ErrResetTokenInvalid):
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", msgResetTokenInvalid)
		return
	case errors.Is(err, identity.ErrResetTokenExpired):
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", msgResetTokenExpired)
		return
	case errors.Is(err, identity.ErrResetUserBlocked):
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", "Your account is blocked: its password cannot be set. Ask an administrator.")
		return
	case errors.Is(err, identity.ErrResetDirectoryUser):
		h.renderReset(w, r, http.StatusUnprocessableEntity, "", "Your account signs in through a directory (LDAP): change your password there.")
		return
	case errors.As(err, &invalid) && len(invalid.Fields()["password"]) > 0:
		h.renderReset(w, r, http.StatusUnprocessableEntity, token, "Password "+strings.Join(invalid.Fields()["password"], ", ")+".")
		return
	default:
		h.log.Error("password reset failed", zap.Error(err))
		h.render(w, r, http.StatusInternalServerError, "error", pageData{Title: "Something went wrong", Message: "The server could not change your password. Try again later."})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	h.site.Redirect(w, r, "/users/sign_in?notice=password_changed")
}

// serveForgotPage is GET /users/password/new: the "forgot your password"
// form.
func (h *handlers) serveForgotPage(w http.ResponseWriter, r *http.Request) {
	h.renderForgot(w, r, http.StatusOK, "", "")
}

func (h *handlers) renderForgot(w http.ResponseWriter, r *http.Request, status int, email, message string) {
	h.render(w, r, status, "forgot_password", pageData{Title: "Forgot your password?", CSRF: h.site.DoubleSubmitToken(w, r),
		Email: email, Error: message})
}

// serveForgot is the form's POST /users/password: identity decides whether
// a link is mailed, and the browser goes to the sign-in page with the same
// notice whether or not the address has an account.
func (h *handlers) serveForgot(w http.ResponseWriter, r *http.Request, form url.Values) {
	email := form.Get(fieldEmail)
	if len(email) > maxEmailField {
		email = "" // not shown again
	}
	if !h.site.CheckDoubleSubmit(r) {
		h.renderForgot(w, r, http.StatusForbidden, email, "The form expired. Send it again.")
		return
	}
	ctx := auth.WithClientAddr(r.Context(), r.RemoteAddr)
	err := h.resets.RequestPasswordReset(ctx, form.Get(fieldEmail))
	var throttled *auth.ThrottledError
	var invalid interface{ Fields() map[string][]string }
	switch {
	case err == nil:
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		h.renderForgot(w, r, http.StatusTooManyRequests, email, "Too many requests. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
		return
	case errors.As(err, &invalid) && len(invalid.Fields()["email"]) > 0:
		h.renderForgot(w, r, http.StatusUnprocessableEntity, email, "E-mail "+strings.Join(invalid.Fields()["email"], ", ")+".")
		return
	default:
		h.log.Error("password reset request failed", zap.Error(err))
		h.render(w, r, http.StatusInternalServerError, "error", pageData{Title: "Something went wrong", Message: "The server could not send the link. Try again later."})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	h.site.Redirect(w, r, "/users/sign_in?notice=reset_requested")
}
