package snippets_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Every refused create or update answers GitLab's 400 shape, naming the
// parameter or field, and stores nothing.
func TestProjectSnippetBadInput(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tools", "private")
	base := "/projects/" + store.IDString(p.ID) + "/snippets"
	kept := e.createSnippet(t, alice.Token, p.ID, "Kept", "private")
	one := base + "/" + store.IDString(num(kept["id"]))

	with := func(field string, value any) map[string]any {
		b := snippetBody("Title", "public")
		b[field] = value
		return b
	}
	const mib = 1 << 20
	long := strings.Repeat("x", mib)
	tooLong := func(n int) string { return strings.Repeat("é", n) }
	blankTitle := `{"message":{"title":["can't be blank"]}}`
	blankName := `{"message":{"file_name":["can't be blank"]}}`
	badName := `{"message":{"file_name":["must be a file name: no '/' or '\\', not '.' or '..', no control characters, no leading or trailing spaces"]}}`
	cases := []struct {
		what string
		body any
		want string
	}{
		// The schema names what it requires in its own (alphabetical)
		// order; code, which may come as content, is named after them.
		{"nothing", map[string]any{}, `{"error":"file_name is missing, title is missing, visibility is missing, code is missing"}`},
		{"no visibility", map[string]any{"title": "t", "file_name": "f", "code": "c"}, `{"error":"visibility is missing"}`},
		{"no code", map[string]any{"title": "t", "file_name": "f", "visibility": "public"}, `{"error":"code is missing"}`},
		{"null title", with("title", nil), `{"error":"title is missing"}`},
		{"null visibility", with("visibility", nil), `{"error":"visibility is missing"}`},
		{"unknown visibility", with("visibility", "secret"), `{"error":"visibility does not have a valid value"}`},
		{"empty title", with("title", ""), blankTitle},
		{"blank title", with("title", " \t\u00a0 "), blankTitle},
		{"256-character title", with("title", tooLong(256)), `{"message":{"title":["is too long (maximum is 255 characters)"]}}`},
		{"1 MiB title", with("title", long), `{"message":{"title":["is too long (maximum is 255 characters)"]}}`},
		{"invalid UTF-8 title", "title=a%FFb&file_name=f&code=c&visibility=public", `{"message":{"title":["is not valid UTF-8"]}}`},
		{"NUL in title", with("title", "a\x00b"), `{"message":{"title":["must not contain control characters"]}}`},
		{"newline in title", with("title", "a\nb"), `{"message":{"title":["must not contain control characters"]}}`},
		{"bidi override in title", with("title", "abc\u202etxt.exe"), `{"message":{"title":["must not contain control characters"]}}`},
		{"empty file name", with("file_name", ""), blankName},
		{"blank file name", with("file_name", "   "), blankName},
		{"path", with("file_name", "dir/file.rb"), badName},
		{"climbing path", with("file_name", "../../etc/passwd"), badName},
		{"absolute path", with("file_name", "/etc/passwd"), badName},
		{"backslash path", with("file_name", `..\..\boot.ini`), badName},
		{"dot dot", with("file_name", ".."), badName},
		{"dot", with("file_name", "."), badName},
		{"NUL in file name", with("file_name", "a.rb\x00.txt"), badName},
		{"newline in file name", with("file_name", "a\r\nX-Evil: 1"), badName},
		{"leading space", with("file_name", " a.rb"), badName},
		{"bidi override in file name", with("file_name", "gnp.\u202eexe"), badName},
		{"256-character file name", with("file_name", tooLong(256)), `{"message":{"file_name":["is too long (maximum is 255 characters)"]}}`},
		{"1 MiB file name", with("file_name", long), `{"message":{"file_name":["is too long (maximum is 255 characters)"]}}`},
		{"invalid UTF-8 file name", "title=t&file_name=a%FF.rb&code=c&visibility=public", `{"message":{"file_name":["is not valid UTF-8"]}}`},
		{"empty code", with("code", ""), `{"message":{"content":["can't be blank"]}}`},
		{"blank code", with("code", " \n\t\n"), `{"message":{"content":["can't be blank"]}}`},
		{"code over 1 MiB", with("code", long+"y"), `{"message":{"content":["is too long (1048577 bytes; the maximum is 1048576 bytes)"]}}`},
		{"invalid UTF-8 code", "title=t&file_name=f&code=a%FFb&visibility=public", `{"message":{"content":["must be valid UTF-8 text without NUL bytes"]}}`},
		{"NUL in code", with("code", "a\x00b"), `{"message":{"content":["must be valid UTF-8 text without NUL bytes"]}}`},
		{"description over 1 MiB", with("description", long+"y"), `{"message":{"description":["is too long (1048577 bytes; the maximum is 1048576 bytes)"]}}`},
		{"everything wrong at once", map[string]any{"title": "", "file_name": "../x", "code": "", "visibility": "public"},
			`{"message":{"title":["can't be blank"],"file_name":["must be a file name: no '/' or '\\', not '.' or '..', no control characters, no leading or trailing spaces"],"content":["can't be blank"]}}`},
	}
	for _, c := range cases {
		e.call(t, alice.Token, http.MethodPost, base, c.body).want(t, 400, c.want)
		// Updates of the same field refuse it the same way (the missing
		// parameter cases aside).
		if strings.HasPrefix(c.want, `{"message"`) {
			b := c.body
			if m, ok := b.(map[string]any); ok {
				delete(m, "visibility")
				b = m
			}
			e.call(t, alice.Token, http.MethodPut, one, b).want(t, 400, c.want)
		}
	}
	e.call(t, alice.Token, http.MethodPut, one, map[string]any{}).
		want(t, 400, `{"error":"title, file_name, code, visibility are missing, at least one parameter must be provided"}`)
	e.call(t, alice.Token, http.MethodPut, one, map[string]any{"visibility": "everyone"}).want(t, 400, `{"error":"visibility does not have a valid value"}`)

	// Nothing was stored or changed.
	list := e.call(t, alice.Token, http.MethodGet, base, nil).status(t, 200)
	wantIDs(t, "list", list.arr(t), num(kept["id"]))
	list.pages(t, 1, 1, 20, 1, "", "")
	if got := e.call(t, alice.Token, http.MethodGet, one, nil).status(t, 200).obj(t); got["title"] != "Kept" || got["file_name"] != "hello.rb" ||
		got["updated_at"] != kept["updated_at"] || got["visibility"] != "private" {
		t.Fatalf("the snippet changed: %v", got)
	}
	if raw := e.call(t, alice.Token, http.MethodGet, one+"/raw", nil).Body; raw != "puts 'hello'" {
		t.Fatalf("the content changed: %q", raw)
	}

	// The limits themselves are allowed.
	ok := with("code", long)
	ok["title"], ok["file_name"] = tooLong(255), tooLong(252)+".rb"
	made := e.call(t, alice.Token, http.MethodPost, base, ok).status(t, 201).obj(t)
	if raw := e.call(t, alice.Token, http.MethodGet, base+"/"+store.IDString(num(made["id"]))+"/raw", nil); len(raw.Body) != mib {
		t.Fatalf("raw of a 1 MiB snippet: %d bytes", len(raw.Body))
	}

	// Unknown and malformed snippet ids.
	for _, id := range []string{"0", "-1", "999999", "9223372036854775807"} {
		e.call(t, alice.Token, http.MethodGet, base+"/"+id, nil).want(t, 404, notFoundSnippet)
		e.call(t, alice.Token, http.MethodGet, base+"/"+id+"/raw", nil).want(t, 404, notFoundSnippet)
	}
	e.call(t, alice.Token, http.MethodGet, base+"/abc", nil).want(t, 400, `{"error":"snippet_id is invalid"}`)
}

// File names that are allowed but not plain ASCII reach Content-Disposition
// quoted and encoded, never raw.
func TestRawContentDisposition(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tools", "public")
	base := "/projects/" + store.IDString(p.ID) + "/snippets"
	for _, c := range []struct{ name, want string }{
		{"hello.rb", `inline; filename="hello.rb"`},
		{".gitlab-ci.yml", `inline; filename=".gitlab-ci.yml"`},
		{"a;b=c.txt", `inline; filename="a;b=c.txt"`},
		{`say "hi".txt`, `inline; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`},
		{"héllo wörld.txt", `inline; filename="h__llo w__rld.txt"; filename*=UTF-8''h%C3%A9llo%20w%C3%B6rld.txt`},
		{"日本.md", `inline; filename="______.md"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.md`},
	} {
		b := snippetBody("t", "public")
		b["file_name"] = c.name
		made := e.call(t, alice.Token, http.MethodPost, base, b).status(t, 201).obj(t)
		if made["file_name"] != c.name {
			t.Fatalf("%q stored as %v", c.name, made["file_name"])
		}
		r := e.call(t, "", http.MethodGet, base+"/"+store.IDString(num(made["id"]))+"/raw", nil).status(t, 200)
		if got := r.Header.Get("Content-Disposition"); got != c.want {
			t.Errorf("%q: Content-Disposition %q, want %q", c.name, got, c.want)
		}
	}
}
