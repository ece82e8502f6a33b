package internal

// The profile area's pages of the OAuth module (issue 30): the
// applications the user authorised (/profile/applications) and their web
// sessions (/profile/active_sessions), through provider.Service as the
// browser's user. The user's own registered applications stay on
// /oauth/applications, linked from the first.

import (
	"embed"
	"errors"
	"net/http"
	"strconv"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

//go:embed profiletemplates/*.html
var profileTemplateFiles embed.FS

type profilePages struct {
	site *web.Site
	svc  provider.Service
	t    *web.Templates
}

func registerProfilePages(site *web.Site, svc provider.Service) {
	pg := &profilePages{site: site, svc: svc, t: site.Templates(profileTemplateFiles, "profiletemplates/*.html")}
	site.AddSection(web.Section{Area: web.AreaProfile, Key: "applications", Label: "Applications", Path: "/profile/applications", Order: 70})
	site.AddSection(web.Section{Area: web.AreaProfile, Key: "sessions", Label: "Active Sessions", Path: "/profile/active_sessions", Order: 80})
	site.Profile("GET /profile/applications", pg.applications)
	site.Profile("GET /profile/applications/{id}/revoke", pg.confirmRevoke)
	site.Profile("POST /profile/applications/{id}/revoke", pg.revoke)
	site.Profile("GET /profile/active_sessions", pg.sessions)
	site.Profile("GET /profile/active_sessions/{id}/revoke", pg.confirmEnd)
	site.Profile("POST /profile/active_sessions/{id}/revoke", pg.end)
	site.Profile("POST /profile/active_sessions/others", pg.endOthers)
}

var profileRefusals = web.Refusals{Page: "oauth profile page", SignIn: []error{auth.ErrUnauthorized},
	Missing: []error{provider.ErrAppNotFound, provider.ErrSessionNotFound}}

var profileNotices = map[string]string{
	"revoked":       "The application's access was revoked.",
	"session_ended": "The session was signed out.",
	"others_ended":  "Every other session was signed out.",
}

func pathID(r *http.Request) (int64, bool) {
	s := r.PathValue("id")
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

type confirmView struct {
	Question, Button, Action, Cancel string
}

func (pg *profilePages) render(w http.ResponseWriter, r *http.Request, name, section, title string, data any) {
	pg.t.Render(w, r, name, web.Page{Title: title, Area: web.AreaProfile, Section: section, Data: data})
}

type applicationsView struct {
	Apps   []provider.AuthorizedApplication
	Notice string
}

func (pg *profilePages) applications(w http.ResponseWriter, r *http.Request) {
	list, err := pg.svc.AuthorizedApplications(r.Context())
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	pg.render(w, r, "applications", "applications", "Applications", applicationsView{Apps: list, Notice: profileNotices[r.URL.Query().Get("notice")]})
}

func (pg *profilePages) confirmRevoke(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	list, err := pg.svc.AuthorizedApplications(r.Context())
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	for _, a := range list {
		if int64(a.ID) == id {
			pg.render(w, r, "confirm", "applications", "Revoke access", confirmView{
				Question: "Revoke the access you gave " + a.Name + "? Its tokens stop working at once.",
				Button:   "Revoke access", Action: pg.site.URL(r.URL.Path), Cancel: pg.site.URL("/profile/applications")})
			return
		}
	}
	pg.site.NotFound(w, r)
}

func (pg *profilePages) revoke(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	if err := pg.svc.RevokeAuthorization(r.Context(), provider.AppID(id)); err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	pg.site.Redirect(w, r, "/profile/applications?notice=revoked")
}

type sessionsView struct {
	Sessions []provider.SessionInfo
	Others   bool
	Notice   string
}

func (pg *profilePages) sessions(w http.ResponseWriter, r *http.Request) {
	list, err := pg.svc.Sessions(r.Context())
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	v := sessionsView{Sessions: list, Notice: profileNotices[r.URL.Query().Get("notice")]}
	for _, s := range list {
		v.Others = v.Others || !s.Current
	}
	pg.render(w, r, "sessions", "sessions", "Active Sessions", v)
}

func (pg *profilePages) confirmEnd(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	list, err := pg.svc.Sessions(r.Context())
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	for _, s := range list {
		if s.ID == id {
			q := "Sign out the session started " + s.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
			if s.IP != "" {
				q += " from " + s.IP
			}
			if s.Current {
				q += "? It is this browser's: you will have to sign in again."
			} else {
				q += "?"
			}
			pg.render(w, r, "confirm", "sessions", "Revoke session", confirmView{Question: q, Button: "Revoke",
				Action: pg.site.URL(r.URL.Path), Cancel: pg.site.URL("/profile/active_sessions")})
			return
		}
	}
	pg.site.NotFound(w, r)
}

func (pg *profilePages) end(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(r)
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	err := pg.svc.EndUserSession(r.Context(), id)
	switch {
	case err == nil && id == auth.FromContext(r.Context()).TokenID && auth.FromContext(r.Context()).Method == auth.MethodSession:
		// This browser's own: it is signed out now.
		pg.site.SetCookie(w, r, auth.SessionCookie, "", -1, http.SameSiteLaxMode)
		pg.site.Redirect(w, r, "/users/sign_in")
	case err == nil:
		pg.site.Redirect(w, r, "/profile/active_sessions?notice=session_ended")
	case errors.Is(err, provider.ErrSessionNotFound):
		pg.site.NotFound(w, r)
	default:
		pg.site.Fail(w, r, err, profileRefusals)
	}
}

func (pg *profilePages) endOthers(w http.ResponseWriter, r *http.Request) {
	if _, err := pg.svc.EndOtherSessions(r.Context()); err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	pg.site.Redirect(w, r, "/profile/active_sessions?notice=others_ended")
}
