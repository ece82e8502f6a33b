package internal

import (
	"embed"
	"net/http"

	"github.com/fennec-forge/fennec/core/web"
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

// render writes a page of the module on the site's layout (and its
// headers: no framing, no caching, no script but the server's own).
func (h *handlers) render(w http.ResponseWriter, r *http.Request, status int, page string, d pageData) {
	h.tmpl.Render(w, r, page, web.Page{Title: d.Title, Status: status, Data: d})
}
