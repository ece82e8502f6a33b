package projects_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// TestNamespaces covers GET /namespaces and /namespaces/:id: the caller's
// own namespace and groups, search, administrators' view, and 404 for what
// the caller may not see.
func TestNamespaces(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	root := s.CreateUser(t, "admin2", fennectest.Admin())
	team := grpNewGroup(t, alice.Client, "team", "private")
	other := grpNewGroup(t, bob.Client, "other", "private")
	pub := grpNewGroup(t, bob.Client, "pubgrp", "public")

	r := grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces", nil)
	r.expect(t, http.StatusOK, "")
	list := r.list(t)
	if len(list) != 2 {
		t.Fatalf("alice's namespaces %s", r.raw)
	}
	// Ordered by id: alice's own namespace was made by this first listing.
	aliceNS, groupNS := list[1], list[0]
	if aliceNS["kind"] != "user" || aliceNS["path"] != "alice" || aliceNS["full_path"] != "alice" || aliceNS["parent_id"] != nil {
		t.Fatalf("user namespace %s", r.raw)
	}
	if got := grpKeys(aliceNS); got != "full_path,id,kind,name,parent_id,path" {
		t.Fatalf("user namespace keys %s", got)
	}
	want := fmt.Sprintf(`{"id":%d,"name":"Group team","path":"team","kind":"group","full_path":"team","parent_id":null}`, team.ID)
	if got := nsJSON(t, groupNS); got != want {
		t.Fatalf("group namespace %s, want %s", got, want)
	}
	if h := r.header.Get("X-Total"); h != "2" {
		t.Fatalf("X-Total %q", h)
	}

	// search matches name or path.
	r = grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces?search=TEA", nil)
	r.expect(t, http.StatusOK, "")
	grpSame(t, "search", grpField(r.list(t), "path"), []string{"team"})

	// An administrator lists every namespace that exists (a user's is made
	// on first use), with group member counts.
	grpCall(t, s, bob.Token, http.MethodGet, "/api/v4/namespaces", nil).expect(t, http.StatusOK, "")
	r = grpCall(t, s, root.Token, http.MethodGet, "/api/v4/namespaces?per_page=100", nil)
	r.expect(t, http.StatusOK, "")
	all := r.list(t)
	paths := grpField(all, "path")
	for _, p := range []string{"alice", "bob", "admin2", "team", "other", "pubgrp"} {
		found := false
		for _, q := range paths {
			found = found || q == p
		}
		if !found {
			t.Fatalf("admin list %v lacks %s", paths, p)
		}
	}
	for _, n := range all {
		if n["path"] == "team" && n["members_count_with_descendants"] != float64(1) {
			t.Fatalf("team %v", n)
		}
		if n["kind"] == "user" && n["members_count_with_descendants"] != nil {
			t.Fatalf("user namespace with count %v", n)
		}
	}

	// GET by id and by path.
	r = grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/namespaces/%d", team.ID), nil)
	r.expect(t, http.StatusOK, want)
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/team", nil).expect(t, http.StatusOK, want)
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/alice", nil).expect(t, http.StatusOK, nsJSON(t, aliceNS))
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/pubgrp", nil).expect(t, http.StatusOK,
		fmt.Sprintf(`{"id":%d,"name":"Group pubgrp","path":"pubgrp","kind":"group","full_path":"pubgrp","parent_id":null}`, pub.ID))
	notFound := `{"message":"404 Namespace Not Found"}`
	grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/namespaces/%d", other.ID), nil).expect(t, http.StatusNotFound, notFound)
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/other", nil).expect(t, http.StatusNotFound, notFound)
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/nosuch", nil).expect(t, http.StatusNotFound, notFound)
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/999999", nil).expect(t, http.StatusNotFound, notFound)
	// Another user's namespace is not alice's to read.
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/bob", nil).expect(t, http.StatusNotFound, notFound)
	r = grpCall(t, s, root.Token, http.MethodGet, "/api/v4/namespaces/team", nil)
	r.expect(t, http.StatusOK, "")
	if m := r.object(t); m["members_count_with_descendants"] != float64(1) {
		t.Fatalf("admin get %s", r.raw)
	}
	grpCall(t, s, "", http.MethodGet, "/api/v4/namespaces", nil).expect(t, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)

	// client-go reads them too.
	nss, _, err := alice.Client.Namespaces.SearchNamespace("team")
	if err != nil || len(nss) != 1 || nss[0].ID != team.ID || nss[0].Kind != "group" {
		t.Fatalf("client-go search %v %+v", err, nss)
	}
}

// nsJSON re-encodes a namespace in the server's field order.
func nsJSON(t *testing.T, m map[string]any) string {
	t.Helper()
	type view struct {
		ID       any `json:"id"`
		Name     any `json:"name"`
		Path     any `json:"path"`
		Kind     any `json:"kind"`
		FullPath any `json:"full_path"`
		ParentID any `json:"parent_id"`
	}
	b, err := json.Marshal(view{m["id"], m["name"], m["path"], m["kind"], m["full_path"], m["parent_id"]})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAdminNamespaceSearchMatchesTheRule checks an administrator's
// GET /namespaces?search= (answered through the groups' trigram index and
// the users' account search) against the rule applied to the whole list:
// a case-folded substring of the namespace's own name or path, by id,
// with X-Total and pages. Users are also matched by e-mail in their
// account search; a query only an address holds finds no namespace.
func TestAdminNamespaceSearchMatchesTheRule(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	rng := rand.New(rand.NewPCG(7, 33))
	syllables := []string{"ka", "ro", "mi", "ne", "tu"}
	word := func() string {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syllables[rng.IntN(len(syllables))])
		}
		return b.String()
	}
	seen := map[string]bool{"root": true}
	unique := func() string {
		for {
			if w := word(); !seen[w] {
				seen[w] = true
				return w
			}
		}
	}
	for i := range 10 {
		u := s.CreateUser(t, unique())
		if i%3 != 0 { // the others never list: they have no namespace row
			grpCall(t, s, u.Token, http.MethodGet, "/api/v4/namespaces", nil).expect(t, http.StatusOK, "")
		}
		if i%2 == 0 {
			grpNewGroup(t, u.Client, unique(), "private")
		}
	}
	r := grpCall(t, s, s.RootToken, http.MethodGet, "/api/v4/namespaces?per_page=100", nil)
	r.expect(t, http.StatusOK, "")
	all := r.list(t)
	if h := r.header.Get("X-Total"); h != strconv.Itoa(len(all)) || len(all) < 10 {
		t.Fatalf("X-Total %q for %d namespaces", h, len(all))
	}
	// The unsearched list pages through the table.
	r = grpCall(t, s, s.RootToken, http.MethodGet, "/api/v4/namespaces?per_page=3&page=2", nil)
	r.expect(t, http.StatusOK, "")
	grpSame(t, "page 2", grpField(r.list(t), "id"), grpField(all[3:6], "id"))
	if h := r.header.Get("X-Total"); h != strconv.Itoa(len(all)) {
		t.Fatalf("page 2: X-Total %q, want %d", h, len(all))
	}

	queries := []string{"example.com", "zzz", "KA", "Group", "ro"}
	for range 25 {
		w := word()
		from := rng.IntN(len(w) - 1)
		queries = append(queries, strings.ToUpper(w[from:from+2+rng.IntN(len(w)-from-1)]))
	}
	for _, q := range queries {
		var want []map[string]any
		for _, n := range all {
			if strings.Contains(strings.ToLower(fmt.Sprint(n["name"])), strings.ToLower(q)) ||
				strings.Contains(strings.ToLower(fmt.Sprint(n["path"])), strings.ToLower(q)) {
				want = append(want, n)
			}
		}
		r := grpCall(t, s, s.RootToken, http.MethodGet, "/api/v4/namespaces?per_page=100&search="+url.QueryEscape(q), nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "search "+q, grpField(r.list(t), "id"), grpField(want, "id"))
		if h := r.header.Get("X-Total"); h != strconv.Itoa(len(want)) {
			t.Fatalf("search %s: X-Total %q, want %d", q, h, len(want))
		}
		if len(want) > 2 {
			r := grpCall(t, s, s.RootToken, http.MethodGet, "/api/v4/namespaces?per_page=2&page=2&search="+url.QueryEscape(q), nil)
			r.expect(t, http.StatusOK, "")
			grpSame(t, "search "+q+" page 2", grpField(r.list(t), "id"), grpField(want[2:min(4, len(want))], "id"))
		}
	}
}
