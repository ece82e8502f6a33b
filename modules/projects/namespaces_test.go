package projects_test

import (
	"encoding/json"
	"fmt"
	"net/http"
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
