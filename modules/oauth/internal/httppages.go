package internal

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strconv"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pageData is what the templates show.
type pageData struct {
	Title   string
	Message string
	// Notice is good news (the password was changed), Error bad news.
	Notice   string
	Error    string
	User     string
	App      string
	Scopes   []scopeText
	Hidden   []hiddenField
	CSRF     string
	ReturnTo string
	Apps     []ownAppView
	Created  *createdApp
	// ResetToken is the reset link's token, carried by the form; empty
	// when the page shows no form (the token was refused).
	ResetToken  string
	MinPassword int
	// Email is what the "forgot your password" form was sent with, shown
	// again when it is refused.
	Email string
}

// createdApp is a just registered application, with its secret.
type createdApp struct{ Name, ClientID, Secret string }

type hiddenField struct{ Name, Value string }

type scopeText struct{ Name, Text string }

// scopeTexts say what each scope lets an application do, on the consent page.
var scopeTexts = map[string]string{
	"api":       "Full access to the API as you: read and change your projects, issues, merge requests and account.",
	"read_user": "Read your profile (username, name, e-mail) through the API.",
	"openid":    "Confirm who you are (OpenID Connect).",
}

func describeScopes(scopes []string) []scopeText {
	out := make([]scopeText, len(scopes))
	for i, s := range scopes {
		out[i] = scopeText{Name: s, Text: scopeTexts[s]}
	}
	return out
}

// parsePages builds one template set per page, each the layout plus the
// page's content.
func parsePages() map[string]*template.Template {
	pages := map[string]*template.Template{}
	for _, name := range []string{"sign_in", "consent", "error", "signed_in", "applications", "reset_password", "forgot_password"} {
		pages[name] = template.Must(template.ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// render writes a page with headers that keep it out of frames (the
// consent page must not be clickjacked), caches and other sites' scripts.
func (h *handlers) render(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "layout", d); err != nil {
		h.log.Error("page template failed: " + err.Error())
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	// No script at all; inline styles only. form-action is left out on
	// purpose: browsers apply it to the redirect after a form, which goes
	// to the client's own site.
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}
