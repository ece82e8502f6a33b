package issues_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A search goes through the issues' search index (queries of three bytes
// and more, with few enough candidates) or walks the project's issues:
// either way it is the list without the search filtered by title or
// description in any case, in the same order, with the same count, for
// callers who see confidential issues and callers who do not, and it
// follows edits and deletions. Another project's issues with the same
// words are candidates the list must leave out.
func TestSearchEqualsFilteredList(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "searched", "public")
	other := stocktest.NewProject(t, alice.Client, "other", "public")
	texts := [][2]string{
		{"Crash on start", "the server CRASHES"},
		{"Überlänge im Titel", "ÜBER alles"},
		{"slow search", ""},
		{"crash again", "see #1"},
		{"Secret crash", "confidential one"},
		{"closed crash", "done"},
		{"日本語のタイトル", "本文"},
	}
	for n, tx := range texts {
		newIssue(t, alice.Client, p.ID, tx[0], func(o *gitlab.CreateIssueOptions) {
			o.Description = gitlab.Ptr(tx[1])
			o.Confidential = gitlab.Ptr(n == 4)
		})
		newIssue(t, alice.Client, other.ID, tx[0]+" elsewhere")
		fennectest.NextMillisecond()
	}
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 6, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	list := func(token, query string) []map[string]any {
		t.Helper()
		return s.Call(t, token, http.MethodGet, projectPath(p.ID, "/issues"+query), nil).Expect(t, 200, "").List(t)
	}
	iids := func(l []map[string]any) []int64 {
		out := []int64{}
		for _, i := range l {
			n, _ := i["iid"].(json.Number).Int64()
			out = append(out, n)
		}
		return out
	}
	check := func(t *testing.T) {
		t.Helper()
		for who, token := range map[string]string{"anonymous": "", "bob": bob.Token, "alice": alice.Token} {
			for _, filter := range []string{"", "&state=opened", "&state=closed", "&sort=asc", "&order_by=updated_at"} {
				base := list(token, "?per_page=100"+filter)
				for _, query := range []string{"crash", "CRASH", "über", "ÜBERL", "ash", "語のタ", "cr", "see #", "elsewhere", "nothing", " crash ", "renamed"} {
					want := []map[string]any{}
					for _, i := range base {
						desc, _ := i["description"].(string) // null when empty
						if store.ContainsFold(i["title"].(string), strings.TrimSpace(query)) || store.ContainsFold(desc, strings.TrimSpace(query)) {
							want = append(want, i)
						}
					}
					r := s.Call(t, token, http.MethodGet, projectPath(p.ID, "/issues?per_page=100&search="+q(query)+filter), nil).Expect(t, 200, "")
					if got := r.IIDs(t); !slices.Equal(got, iids(want)) {
						t.Fatalf("%s search=%q%s: %v, want %v", who, query, filter, got, iids(want))
					}
					fennectest.CheckPages(t, who+" "+query, r.Header, len(want), 1, 100, 1, "", "")
				}
			}
		}
	}
	check(t)
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 3, &gitlab.UpdateIssueOptions{Title: gitlab.Ptr("slow, renamed")}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Client.Issues.DeleteIssue(p.ID, 4); err != nil {
		t.Fatal(err)
	}
	check(t)
	r := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues?search=crash&per_page=2&page=2"), nil).Expect(t, 200, "")
	if got := r.IIDs(t); !slices.Equal(got, []int64{1}) {
		t.Fatalf("page 2: %v", got)
	}
	fennectest.CheckPages(t, "page 2", r.Header, 3, 2, 2, 2, "", "1")
}
