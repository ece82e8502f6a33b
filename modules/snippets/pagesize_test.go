package snippets_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSnippetPagesTakeTheAPIsLargestContent: a snippet of nearly 1 MiB
// of text outside ASCII (which a browser sends as three bytes a byte) is
// saved from the form as the API saves it; one byte over the service's
// bound is refused with its message and the input kept; a form beyond
// the page's bound is the 413 page. Nothing else is made.
func TestSnippetPagesTakeTheAPIsLargestContent(t *testing.T) {
	t.Parallel()
	s := start(t)
	p := stocktest.NewProject(t, s.Client, "big", "private")
	d := s.SignedIn(t, "root", s.RootPassword)
	token := d.Get(t, "/root/big/-/snippets/new").CSRF()
	post := func(content string) *http.Response {
		return d.Post(t, "/root/big/-/snippets", url.Values{"authenticity_token": {token}, "title": {"Big"},
			"file_name": {"big.txt"}, "content": {content}, "visibility": {"private"}}).Response
	}
	// "é" is two bytes of UTF-8, six once encoded.
	full := strings.Repeat("é", (1<<20)/2)
	if r := post(full); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("1 MiB of content: %d", r.StatusCode)
	}
	over := d.Post(t, "/root/big/-/snippets", url.Values{"authenticity_token": {token}, "title": {"Over"},
		"file_name": {"big.txt"}, "content": {full + "x"}, "visibility": {"private"}})
	wantPage(t, "one byte over", over, 422, `The snippet was not saved: content is too long`)
	if r := post(strings.Repeat("é", 2<<20)); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a form over the bound: %d", r.StatusCode)
	}
	got, _, err := s.Client.ProjectSnippets.ListSnippets(p.ID, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("snippets: %v, %d", err, len(got))
	}
	raw, _, err := s.Client.ProjectSnippets.SnippetContent(p.ID, got[0].ID)
	if err != nil || string(raw) != full {
		t.Fatalf("content: %v, %d bytes", err, len(raw))
	}
}
