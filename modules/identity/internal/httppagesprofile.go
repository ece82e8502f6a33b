package internal

// The signed-in user's settings pages (issue 30, "User settings"): the
// profile, secondary e-mail addresses, the password, SSH keys and
// personal access tokens, each a section of the profile area. Every page
// reads and changes through the Service as the browser's user, so what
// it may do is what the API lets the user do for themself.

import (
	"embed"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

//go:embed templates/profile/*.html
var profileTemplateFiles embed.FS

// profileListLimit bounds the rows a settings list shows: far more keys,
// addresses or tokens than anyone keeps.
const profileListLimit = 500

type profilePages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewProfilePages registers the profile area's pages of the identity
// module and the header's link to them.
func NewProfilePages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "identity-profile", Register: func(site *web.Site) {
		pg := &profilePages{site: site, s: s, t: site.Templates(profileTemplateFiles, "templates/profile/*.html")}
		site.AddMenu(web.MenuItem{Label: "Settings", Path: "/profile", Order: 95, SignedIn: true})
		for _, sec := range []web.Section{
			{Key: "profile", Label: "Profile", Path: "/profile", Order: 10},
			{Key: "emails", Label: "Emails", Path: "/profile/emails", Order: 20},
			{Key: "password", Label: "Password", Path: "/profile/password/edit", Order: 30},
			{Key: "keys", Label: "SSH Keys", Path: "/profile/keys", Order: 40},
			{Key: "tokens", Label: "Access Tokens", Path: "/profile/personal_access_tokens", Order: 50},
		} {
			sec.Area = web.AreaProfile
			site.AddSection(sec)
		}
		site.Profile("GET /profile", pg.profile)
		site.Profile("POST /profile", pg.saveProfile)
		site.Profile("GET /profile/emails", pg.emails)
		site.Profile("POST /profile/emails", pg.addEmail)
		site.Profile("GET /profile/emails/{id}/delete", pg.confirmEmail)
		site.Profile("POST /profile/emails/{id}/delete", pg.removeEmail)
		site.Profile("GET /profile/password/edit", pg.password)
		site.Profile("POST /profile/password", pg.changePassword)
		site.Profile("GET /profile/keys", pg.keys)
		site.Profile("POST /profile/keys", pg.addKey)
		site.Profile("GET /profile/keys/{id}", pg.key)
		site.Profile("GET /profile/keys/{id}/delete", pg.confirmKey)
		site.Profile("POST /profile/keys/{id}/delete", pg.removeKey)
		site.Profile("GET /profile/personal_access_tokens", pg.tokens)
		site.Profile("POST /profile/personal_access_tokens", pg.createToken)
		site.Profile("GET /profile/personal_access_tokens/{id}/revoke", pg.confirmRevoke)
		site.Profile("POST /profile/personal_access_tokens/{id}/revoke", pg.revokeToken)
	}}
}

// profileRefusals sort the Service's refusals for web.Fail.
var profileRefusals = web.Refusals{Page: "profile page", SignIn: []error{auth.ErrUnauthorized},
	Missing: []error{user.ErrUserNotFound, user.ErrKeyNotFound, user.ErrEmailNotFound, user.ErrTokenNotFound}}

// fail answers a failed call: a refusal of the caller is the 403 page,
// the rest as web.Fail sorts them.
func (pg *profilePages) fail(w http.ResponseWriter, r *http.Request, err error) {
	var forbidden *auth.ForbiddenError
	if errors.As(err, &forbidden) {
		pg.site.Error(w, r, http.StatusForbidden)
		return
	}
	pg.site.Fail(w, r, err, profileRefusals)
}

// problemOf is the text a form shows for a refusal it can explain (an
// InvalidError, a throttle), "" for the others, which are pages of their
// own.
func problemOf(err error) (string, int) {
	var invalid user.InvalidError
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &invalid):
		fields := make([]string, 0, len(invalid))
		for f := range invalid {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		var parts []string
		for _, f := range fields {
			parts = append(parts, fieldLabel(f)+" "+strings.Join(invalid[f], ", "))
		}
		return strings.Join(parts, "; ") + ".", http.StatusUnprocessableEntity
	case errors.Is(err, user.ErrNoScopes):
		return "Select at least one scope.", http.StatusUnprocessableEntity
	case errors.Is(err, user.ErrInvalidScope):
		return "One of the scopes is not offered.", http.StatusUnprocessableEntity
	case errors.As(err, &throttled):
		return "Too many wrong passwords. Try again in " + throttled.RetryAfterSeconds() + " seconds.", http.StatusTooManyRequests
	}
	return "", 0
}

// fieldLabel names a field of an InvalidError in the form's words.
func fieldLabel(f string) string {
	switch f {
	case "current_password":
		return "Current password"
	case "website_url":
		return "Website"
	case "key":
		return "Key"
	}
	return strings.ToUpper(f[:1]) + strings.ReplaceAll(f[1:], "_", " ")
}

// profileNotices are the confirmations a page shows after a form (?notice=): the
// page shows only these texts, never the parameter.
var profileNotices = map[string]string{
	"profile":       "Profile was successfully updated.",
	"email_added":   "The e-mail address was added.",
	"email_removed": "The e-mail address was removed.",
	"password":      "Password was successfully updated.",
	"key_removed":   "The SSH key was removed.",
	"token_revoked": "The personal access token was revoked.",
}

func noticeOf(r *http.Request) string { return profileNotices[r.URL.Query().Get("notice")] }

// parseID reads a positive id of the path, as the API prints it.
func parseID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

func (pg *profilePages) me(r *http.Request) int64 { return auth.FromContext(r.Context()).UserID() }

func (pg *profilePages) render(w http.ResponseWriter, r *http.Request, name, section, title string, status int, data any) {
	pg.t.Render(w, r, name, web.Page{Title: title, Area: web.AreaProfile, Section: section, Status: status, Data: data})
}

// The profile.

type profileData struct {
	Account user.Account
	// Form is what the form shows: the account's, or what was posted.
	Form            map[string]string
	Notice, Problem string
}

// profileFields are the profile form's fields, in the API's names.
var profileFields = []string{"name", "skype", "linkedin", "twitter", "website_url", "location", "organization", "bio"}

func (pg *profilePages) profile(w http.ResponseWriter, r *http.Request) {
	a, err := pg.s.CurrentAccount(r.Context())
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	form := map[string]string{"name": a.Name, "skype": a.Skype, "linkedin": a.Linkedin, "twitter": a.Twitter,
		"website_url": a.WebsiteURL, "organization": a.Organization, "bio": deref(a.Bio), "location": deref(a.Location)}
	pg.render(w, r, "profile", "profile", "Profile", 0, profileData{Account: a, Form: form, Notice: noticeOf(r)})
}

func (pg *profilePages) saveProfile(w http.ResponseWriter, r *http.Request) {
	form := map[string]string{}
	for _, f := range profileFields {
		form[f] = r.PostFormValue(f)
	}
	ptr := func(f string) *string { v := form[f]; return &v }
	in := user.ProfileFields{Name: ptr("name"), Skype: ptr("skype"), Linkedin: ptr("linkedin"), Twitter: ptr("twitter"),
		WebsiteURL: ptr("website_url"), Organization: ptr("organization"), Bio: ptr("bio"), Location: ptr("location")}
	_, err := pg.s.UpdateProfile(r.Context(), in)
	if err == nil {
		pg.site.Redirect(w, r, "/profile?notice=profile")
		return
	}
	problem, status := problemOf(err)
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	a, aerr := pg.s.CurrentAccount(r.Context())
	if aerr != nil {
		pg.fail(w, r, aerr)
		return
	}
	pg.render(w, r, "profile", "profile", "Profile", status, profileData{Account: a, Form: form, Problem: "The profile was not saved: " + problem})
}

// E-mail addresses.

type emailsData struct {
	Primary         string
	Emails          []user.Email
	Address         string
	Notice, Problem string
}

type confirmData struct {
	Question, Button, Action, Cancel string
}

func (pg *profilePages) emails(w http.ResponseWriter, r *http.Request) {
	pg.renderEmails(w, r, 0, emailsData{Notice: noticeOf(r)})
}

func (pg *profilePages) renderEmails(w http.ResponseWriter, r *http.Request, status int, d emailsData) {
	a, err := pg.s.CurrentAccount(r.Context())
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	list, _, err := pg.s.SecondaryEmails(r.Context(), a.ID, 0, profileListLimit)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.Primary, d.Emails = a.Email, list
	pg.render(w, r, "emails", "emails", "Emails", status, d)
}

func (pg *profilePages) addEmail(w http.ResponseWriter, r *http.Request) {
	address := r.PostFormValue("email")
	_, err := pg.s.AddEmail(r.Context(), pg.me(r), address)
	if err == nil {
		pg.site.Redirect(w, r, "/profile/emails?notice=email_added")
		return
	}
	problem, status := problemOf(err)
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	pg.renderEmails(w, r, status, emailsData{Address: address, Problem: "The address was not added: " + problem})
}

func (pg *profilePages) confirmEmail(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	e, err := pg.s.SecondaryEmail(r.Context(), pg.me(r), id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.render(w, r, "confirm", "emails", "Remove e-mail address", 0, confirmData{
		Question: "Remove the address " + e.Email + "? Commits and notifications will no longer be matched to you by it.",
		Button:   "Remove address", Action: pg.site.URL(r.URL.Path), Cancel: pg.site.URL("/profile/emails")})
}

func (pg *profilePages) removeEmail(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	if _, err := pg.s.DeleteEmail(r.Context(), pg.me(r), id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/profile/emails?notice=email_removed")
}

// The password.

type passwordData struct {
	MinLength       int
	Notice, Problem string
}

func (pg *profilePages) password(w http.ResponseWriter, r *http.Request) {
	pg.render(w, r, "password", "password", "Password", 0, passwordData{MinLength: MinPasswordLength, Notice: noticeOf(r)})
}

func (pg *profilePages) changePassword(w http.ResponseWriter, r *http.Request) {
	current, next := r.PostFormValue("current_password"), r.PostFormValue("password")
	var err error
	if next != r.PostFormValue("password_confirmation") {
		err = ValidationError{"password_confirmation": {"doesn't match Password"}}
	} else {
		err = pg.s.ChangePassword(auth.WithClientAddr(r.Context(), r.RemoteAddr), current, next)
	}
	if err == nil {
		pg.site.Redirect(w, r, "/profile/password/edit?notice=password")
		return
	}
	problem, status := problemOf(err)
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	var throttled *auth.ThrottledError
	if errors.As(err, &throttled) {
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
	}
	pg.render(w, r, "password", "password", "Password", status, passwordData{MinLength: MinPasswordLength,
		Problem: "The password was not changed: " + problem})
}

// SSH keys.

// profileKey is a key as the pages show it, with both fingerprints (GitLab
// 9.x showed the MD5 one; OpenSSH now prints the SHA256 one).
type profileKey struct {
	user.Key
	// Line is the authorized_keys line (the embedded Key's own Key field,
	// which templates cannot name past the embedded struct's).
	Line string
	MD5  string
}

func profileKeyOf(k user.Key) profileKey {
	v := profileKey{Key: k, Line: k.Key}
	if pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.Key)); err == nil {
		v.MD5 = ssh.FingerprintLegacyMD5(pub)
	}
	return v
}

type keysData struct {
	Keys            []profileKey
	Title, Key      string
	Notice, Problem string
}

func (pg *profilePages) keys(w http.ResponseWriter, r *http.Request) {
	pg.renderKeys(w, r, 0, keysData{Notice: noticeOf(r)})
}

func (pg *profilePages) renderKeys(w http.ResponseWriter, r *http.Request, status int, d keysData) {
	list, _, err := pg.s.Keys(r.Context(), pg.me(r), 0, profileListLimit)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	for _, k := range list {
		d.Keys = append(d.Keys, profileKeyOf(k))
	}
	pg.render(w, r, "keys", "keys", "SSH Keys", status, d)
}

func (pg *profilePages) addKey(w http.ResponseWriter, r *http.Request) {
	title, key := r.PostFormValue("title"), r.PostFormValue("key")
	if strings.TrimSpace(title) == "" {
		// As GitLab's page: the key's comment is the title left blank.
		if f := strings.Fields(key); len(f) > 2 {
			title = strings.Join(f[2:], " ")
		}
	}
	k, err := pg.s.AddKey(r.Context(), pg.me(r), title, key)
	if err == nil {
		pg.site.Redirect(w, r, "/profile/keys/"+strconv.FormatInt(k.ID, 10)+"?notice=key_added")
		return
	}
	problem, status := problemOf(err)
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	pg.renderKeys(w, r, status, keysData{Title: r.PostFormValue("title"), Key: key, Problem: "The key was not added: " + problem})
}

type keyData struct {
	Key   profileKey
	Added bool
}

func (pg *profilePages) key(w http.ResponseWriter, r *http.Request) {
	k, ok := pg.ownKey(w, r)
	if !ok {
		return
	}
	pg.render(w, r, "key", "keys", "SSH Key "+k.Title, 0, keyData{Key: profileKeyOf(k), Added: r.URL.Query().Get("notice") == "key_added"})
}

func (pg *profilePages) ownKey(w http.ResponseWriter, r *http.Request) (user.Key, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return user.Key{}, false
	}
	k, err := pg.s.Key(r.Context(), pg.me(r), id)
	if err != nil {
		pg.fail(w, r, err)
		return user.Key{}, false
	}
	return k, true
}

func (pg *profilePages) confirmKey(w http.ResponseWriter, r *http.Request) {
	k, ok := pg.ownKey(w, r)
	if !ok {
		return
	}
	pg.render(w, r, "confirm", "keys", "Remove SSH key", 0, confirmData{
		Question: "Remove the SSH key " + k.Title + " (" + k.Fingerprint + ")? Git over SSH will no longer accept it.",
		Button:   "Remove key", Action: pg.site.URL(r.URL.Path), Cancel: pg.site.URL("/profile/keys")})
}

func (pg *profilePages) removeKey(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	if _, err := pg.s.DeleteKey(r.Context(), pg.me(r), id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/profile/keys?notice=key_removed")
}

// Personal access tokens.

type scopeChoice struct {
	Name, Help string
	Checked    bool
}

// scopeHelp says what each scope lets a token do.
var scopeHelp = map[string]string{
	auth.ScopeAPI:      "Full access to the API as you, your projects and groups included.",
	auth.ScopeReadUser: "Read your profile and other users' (GET /user, /users); nothing else.",
	auth.ScopeSudo:     "Act as another user through the API (administrators only).",
}

type tokensData struct {
	Active   []user.Token
	Inactive []user.Token
	// Created is the token just made, with its secret: shown on the
	// answer to the form only, never again.
	Created         *user.Token
	Name, ExpiresAt string
	Scopes          []scopeChoice
	Today           string
	Notice, Problem string
}

func (pg *profilePages) tokens(w http.ResponseWriter, r *http.Request) {
	pg.renderTokens(w, r, 0, tokensData{Notice: noticeOf(r)}, nil)
}

func (pg *profilePages) renderTokens(w http.ResponseWriter, r *http.Request, status int, d tokensData, checked []string) {
	list, _, err := pg.s.Tokens(r.Context(), pg.me(r), user.PersonalToken, user.AllTokens, 0, profileListLimit)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	// Newest first, as GitLab lists them.
	slices.Reverse(list)
	for _, t := range list {
		if t.Active {
			d.Active = append(d.Active, t)
		} else {
			d.Inactive = append(d.Inactive, t)
		}
	}
	admin := auth.FromContext(r.Context()).IsAdmin()
	for _, sc := range user.TokenScopes() {
		if sc == auth.ScopeSudo && !admin {
			continue
		}
		d.Scopes = append(d.Scopes, scopeChoice{Name: sc, Help: scopeHelp[sc], Checked: slices.Contains(checked, sc)})
	}
	d.Today = time.Now().UTC().Format(time.DateOnly)
	if d.Created != nil {
		// The secret must not stay in any cache, nor be sent elsewhere.
		w.Header().Set("Cache-Control", "no-store")
	}
	pg.render(w, r, "tokens", "tokens", "Personal Access Tokens", status, d)
}

func (pg *profilePages) createToken(w http.ResponseWriter, r *http.Request) {
	name, expires := r.PostFormValue("name"), strings.TrimSpace(r.PostFormValue("expires_at"))
	scopes := r.PostForm["scopes"]
	in := user.NewToken{Name: name, Scopes: scopes}
	var err error
	if expires != "" {
		day, perr := time.Parse(time.DateOnly, expires)
		switch {
		case perr != nil:
			err = ValidationError{"expires_at": {"is not a date (YYYY-MM-DD)"}}
		case !day.After(time.Now().UTC()):
			err = ValidationError{"expires_at": {"must be in the future"}}
		default:
			in.ExpiresAt = &day
		}
	}
	var t user.Token
	if err == nil {
		t, err = pg.s.CreatePersonalToken(r.Context(), in)
	}
	if err == nil {
		// The answer to the form shows the secret, once: it is in no URL
		// and only its hash is stored, so reloading the list never shows
		// it again.
		pg.renderTokens(w, r, http.StatusOK, tokensData{Created: &t}, nil)
		return
	}
	problem, status := problemOf(err)
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	pg.renderTokens(w, r, status, tokensData{Name: name, ExpiresAt: expires, Problem: "The token was not created: " + problem}, scopes)
}

func (pg *profilePages) confirmRevoke(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	t, err := pg.s.Token(r.Context(), pg.me(r), user.PersonalToken, id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.render(w, r, "confirm", "tokens", "Revoke token", 0, confirmData{
		Question: "Revoke the personal access token " + t.Name + "? Anything using it will stop working at once.",
		Button:   "Revoke", Action: pg.site.URL(r.URL.Path), Cancel: pg.site.URL("/profile/personal_access_tokens")})
}

func (pg *profilePages) revokeToken(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	if err := pg.s.RevokeToken(r.Context(), pg.me(r), user.PersonalToken, id); err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/profile/personal_access_tokens?notice=token_revoked")
}
