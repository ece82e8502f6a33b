package fennectest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// CheckPages asserts GitLab's pagination headers on a list answer: every
// X-* header present with the given value (next and prev may be empty, but
// must be there), and a Link with first and last always, next and prev when
// they exist. what names the request in failure messages. It reports every
// mismatch, then stops the test.
func CheckPages(t testing.TB, what string, h http.Header, total, totalPages, perPage, page int, next, prev string) {
	t.Helper()
	want := map[string]string{
		"X-Total": strconv.Itoa(total), "X-Total-Pages": strconv.Itoa(totalPages),
		"X-Per-Page": strconv.Itoa(perPage), "X-Page": strconv.Itoa(page),
		"X-Next-Page": next, "X-Prev-Page": prev,
	}
	failed := false
	for name, v := range want {
		if _, ok := h[http.CanonicalHeaderKey(name)]; !ok {
			t.Errorf("%s: header %s missing", what, name)
			failed = true
			continue
		}
		if got := h.Get(name); got != v {
			t.Errorf("%s: header %s = %q, want %q", what, name, got, v)
			failed = true
		}
	}
	link := h.Get("Link")
	for rel, present := range map[string]bool{"first": true, "last": true, "next": next != "", "prev": prev != ""} {
		if strings.Contains(link, `rel="`+rel+`"`) != present {
			t.Errorf("%s: Link %q: rel=%q present should be %v", what, link, rel, present)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}
