package fennectest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Browser is a plain HTTP client that keeps cookies and does not follow
// redirects, for black-box tests of the web pages: each Browser is one
// visitor.
type Browser struct {
	*http.Client
	s *Server
}

// Page is a page as a Browser got it: the response (body read and closed)
// and its body, decompressed.
type Page struct {
	*http.Response
	Body string
}

// csrfField finds a form's CSRF token in a page.
var csrfField = regexp.MustCompile(`name="authenticity_token" value="([0-9a-f]+)"`)

// CSRF is the first form's CSRF token on the page ("" when none).
func (p Page) CSRF() string {
	if m := csrfField.FindStringSubmatch(p.Body); m != nil {
		return m[1]
	}
	return ""
}

// NewBrowser is an anonymous visitor.
func (s *Server) NewBrowser(t testing.TB) *Browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{s: s, Client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// SignedIn is a visitor signed in through the sign-in form (the OAuth
// module's pages must be loaded).
func (s *Server) SignedIn(t testing.TB, login, password string) *Browser {
	t.Helper()
	b := s.NewBrowser(t)
	token := b.Get(t, "/users/sign_in").CSRF()
	p := b.Post(t, "/users/sign_in", url.Values{"login": {login}, "password": {password}, "authenticity_token": {token}})
	if p.StatusCode != http.StatusSeeOther {
		t.Fatalf("fennectest: sign in %s through the form: %d\n%.500s", login, p.StatusCode, p.Body)
	}
	return b
}

// Get fetches path (under the server's URL) with the browser's cookies.
func (b *Browser) Get(t testing.TB, path string, headers ...string) Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.do(t, req)
}

// Post submits a form to path.
func (b *Browser) Post(t testing.TB, path string, form url.Values) Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.s.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(t, req)
}

func (b *Browser) do(t testing.TB, req *http.Request) Page {
	t.Helper()
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return Page{Response: resp, Body: string(raw)}
}

// Want checks the page's status and that its body holds each fragment,
// reporting the status or each fragment missing with the start of the
// page (what names the page in the messages).
func (p Page) Want(t testing.TB, what string, status int, fragments ...string) {
	t.Helper()
	if p.StatusCode != status {
		t.Errorf("%s: status %d, want %d\n%.3000s", what, p.StatusCode, status, p.Body)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(p.Body, f) {
			t.Errorf("%s lacks %q:\n%.8000s", what, f, p.Body)
		}
	}
}

// WantNot checks that the page's body holds none of the fragments.
func (p Page) WantNot(t testing.TB, what string, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if strings.Contains(p.Body, f) {
			t.Errorf("%s shows %q", what, f)
		}
	}
}

// WantRedirect checks a redirect's status and Location.
func (p Page) WantRedirect(t testing.TB, what string, status int, location string) {
	t.Helper()
	if p.StatusCode != status || p.Header.Get("Location") != location {
		t.Errorf("%s: %d to %q, want %d to %q", what, p.StatusCode, p.Header.Get("Location"), status, location)
	}
}
