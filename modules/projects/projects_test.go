package projects_test

// Black-box tests of project CRUD and GET /projects, through raw HTTP and
// client-go against the stock application. Helpers here carry a "crud"
// prefix so that other test files of this package can have their own.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// crudResp is a raw answer.
type crudResp struct {
	Status int
	Body   string
	Header http.Header
	what   string
}

// crudCall sends a raw request. token may be empty (anonymous); body is nil,
// a string (sent form-encoded) or a value sent as JSON.
func crudCall(t *testing.T, s *fennectest.Server, token, method, path string, body any) crudResp {
	t.Helper()
	var r io.Reader
	var hdr []string
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
		hdr = append(hdr, "Content-Type", "application/x-www-form-urlencoded")
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
		hdr = append(hdr, "Content-Type", "application/json")
	}
	resp, raw := s.JSON(t, method, path, r, nil, hdr...)
	return crudResp{Status: resp.StatusCode, Body: strings.TrimSuffix(string(raw), "\n"), Header: resp.Header, what: method + " " + path}
}

// want checks the exact status and JSON body (an empty want: empty body).
func (r crudResp) want(t *testing.T, status int, body string) {
	t.Helper()
	same := r.Body == body
	if body != "" {
		var g, w any
		if err := json.Unmarshal([]byte(body), &w); err != nil {
			t.Fatalf("bad expectation %q", body)
		}
		same = json.Unmarshal([]byte(r.Body), &g) == nil && reflect.DeepEqual(g, w)
	}
	if r.Status != status || !same {
		t.Fatalf("%s: got %d %s\nwant %d %s", r.what, r.Status, r.Body, status, body)
	}
}

func (r crudResp) status(t *testing.T, status int) crudResp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: got %d %s, want %d", r.what, r.Status, r.Body, status)
	}
	return r
}

func (r crudResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Body), &m); err != nil {
		t.Fatalf("%s: %q is not an object: %v", r.what, r.Body, err)
	}
	return m
}

func (r crudResp) arr(t *testing.T) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil || a == nil {
		t.Fatalf("%s: %q is not an array of objects: %v", r.what, r.Body, err)
	}
	return a
}

// pages checks every pagination header.
func (r crudResp) pages(t *testing.T, total, totalPages, perPage, page int, next, prev string) {
	t.Helper()
	fennectest.CheckPages(t, r.what, r.Header, total, totalPages, perPage, page, next, prev)
}

func crudNum(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func crudItoa(v int64) string { return strconv.FormatInt(v, 10) }

// crudNames lists the "name" of each project, in order.
func crudNames(list []map[string]any) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, p["name"].(string))
	}
	return out
}

func crudWantNames(t *testing.T, what string, list []map[string]any, want ...string) {
	t.Helper()
	if got := crudNames(list); !slices.Equal(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// crudCreate creates a project as token with the JSON fields given.
func crudCreate(t *testing.T, s *fennectest.Server, token string, fields map[string]any) map[string]any {
	t.Helper()
	return crudCall(t, s, token, http.MethodPost, "/api/v4/projects", fields).status(t, http.StatusCreated).obj(t)
}

// crudMember adds a member through the members API, or skips the test when
// that API is not there yet.
func crudMember(t *testing.T, s *fennectest.Server, token string, project, user int64, level int) {
	t.Helper()
	r := crudCall(t, s, token, http.MethodPost, "/api/v4/projects/"+crudItoa(project)+"/members",
		map[string]any{"user_id": user, "access_level": level})
	if r.Status == http.StatusNotFound && r.Body == `{"error":"404 Not Found"}` {
		t.Skip("needs members API")
	}
	r.status(t, http.StatusCreated)
}

// crudProbe skips the test when a route is not there yet (the catch-all
// answers unknown routes with {"error":"404 Not Found"}).
func crudProbe(t *testing.T, r crudResp, feature string) crudResp {
	t.Helper()
	if r.Status == http.StatusNotFound && r.Body == `{"error":"404 Not Found"}` {
		t.Skip("needs " + feature)
	}
	return r
}

const (
	crudNotFound  = `{"message":"404 Project Not Found"}`
	crudForbidden = `{"message":"403 Forbidden"}`
	crudTaken     = `{"message":{"path":["has already been taken"]}}`
	crudPathRule  = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.', '.git' or '.atom'"
	crudNameRule  = "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'."
	crudTooLong   = "is too long (maximum is 255 characters)"
)

// crudFeatures are the boolean switches of create and edit, with their
// defaults.
var crudFeatures = map[string]bool{
	"issues_enabled": true, "merge_requests_enabled": true, "jobs_enabled": true, "wiki_enabled": true,
	"snippets_enabled": true, "container_registry_enabled": true, "shared_runners_enabled": true,
	"public_jobs": true, "lfs_enabled": true, "request_access_enabled": false,
	"only_allow_merge_if_pipeline_succeeds": false, "only_allow_merge_if_all_discussions_are_resolved": false,
}

// crudProjectKeys are the Project fields of the spec that every full view
// carries (owner: personal projects; runners_token: administrators of the
// project only).
var crudProjectKeys = []string{"id", "description", "default_branch", "visibility", "ssh_url_to_repo", "http_url_to_repo",
	"web_url", "tag_list", "owner", "name", "name_with_namespace", "path", "path_with_namespace", "issues_enabled",
	"merge_requests_enabled", "jobs_enabled", "wiki_enabled", "snippets_enabled", "container_registry_enabled",
	"open_issues_count", "created_at", "last_activity_at", "creator_id", "namespace", "permissions", "archived",
	"avatar_url", "shared_runners_enabled", "forks_count", "star_count", "public_jobs", "shared_with_groups",
	"only_allow_merge_if_pipeline_succeeds", "only_allow_merge_if_all_discussions_are_resolved", "request_access_enabled"}

var crudTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestProjectCreateNameAndPathRules(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	long := strings.Repeat("a", 256)
	cases := []struct {
		what     string
		body     map[string]any
		status   int
		want     string // exact body for errors
		name     string // for 201: the name and path stored
		path     string
		pathLike *regexp.Regexp // for 201 when the exact path is not the point
	}{
		{what: "path from name", body: map[string]any{"name": "My Cool Project"}, status: 201, name: "My Cool Project", path: "my-cool-project"},
		{what: "name from path", body: map[string]any{"path": "just-a-path"}, status: 201, name: "just-a-path", path: "just-a-path"},
		{what: "both kept as given", body: map[string]any{"name": "Both", "path": "Other_Path.x"}, status: 201, name: "Both", path: "Other_Path.x"},
		{what: "punctuation runs become one dash", body: map[string]any{"name": "Tabs + Spaces -- ok"}, status: 201, name: "Tabs + Spaces -- ok", path: "tabs-spaces-ok"},
		{what: "surrounding spaces are trimmed", body: map[string]any{"name": "  Spaced   Out  "}, status: 201, name: "Spaced   Out", path: "spaced-out"},
		{what: "unicode name", body: map[string]any{"name": "Ünïcödé Prøject"}, status: 201, name: "Ünïcödé Prøject", pathLike: regexp.MustCompile(`^[a-z0-9_.][a-z0-9_.-]*$`)},
		{what: "emoji first", body: map[string]any{"name": "🦊 Fennec"}, status: 201, name: "🦊 Fennec", path: "fennec"},
		{what: "255 characters", body: map[string]any{"name": strings.Repeat("n", 255)}, status: 201, name: strings.Repeat("n", 255), path: strings.Repeat("n", 255)},
		{what: "255 runes of unicode", body: map[string]any{"name": strings.Repeat("é", 255), "path": "uni255"}, status: 201, name: strings.Repeat("é", 255), path: "uni255"},

		{what: "neither", body: map[string]any{}, status: 400, want: `{"error":"name, path are missing, at least one parameter must be provided"}`},
		{what: "both empty", body: map[string]any{"name": "", "path": ""}, status: 400, want: `{"error":"name, path are missing, at least one parameter must be provided"}`},
		{what: "blank name", body: map[string]any{"name": "   "}, status: 400, want: `{"error":"name, path are missing, at least one parameter must be provided"}`},
		{what: "space in path", body: map[string]any{"path": "has space"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: "leading dash in path", body: map[string]any{"name": "lead", "path": "-lead"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: "leading dash in name", body: map[string]any{"name": "-lead"}, status: 400, want: `{"message":{"name":["` + crudNameRule + `"]}}`},
		{what: ".git suffix", body: map[string]any{"path": "repo.git"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: ".git suffix from the name", body: map[string]any{"name": "Repo.git"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: ".atom suffix", body: map[string]any{"name": "x", "path": "feed.atom"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: "trailing dot", body: map[string]any{"name": "x", "path": "trail."}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: "reserved tree", body: map[string]any{"path": "tree"}, status: 400, want: `{"message":{"path":["tree is a reserved name"]}}`},
		{what: "reserved BLOB, any case", body: map[string]any{"name": "x", "path": "BLOB"}, status: 400, want: `{"message":{"path":["BLOB is a reserved name"]}}`},
		{what: "reserved raw from the name", body: map[string]any{"name": "Raw"}, status: 400, want: `{"message":{"path":["raw is a reserved name"]}}`},
		{what: "reserved -", body: map[string]any{"name": "dash", "path": "-"}, status: 400, want: `{"message":{"path":["` + crudPathRule + `"]}}`},
		{what: "256-character name", body: map[string]any{"name": long, "path": "short"}, status: 400, want: `{"message":{"name":["` + crudTooLong + `"]}}`},
		{what: "256-rune name", body: map[string]any{"name": strings.Repeat("é", 256), "path": "short"}, status: 400, want: `{"message":{"name":["` + crudTooLong + `"]}}`},
		{what: "256-character path", body: map[string]any{"name": "x", "path": long}, status: 400, want: `{"message":{"path":["` + crudTooLong + `"]}}`},
		{what: "256-character name and no path", body: map[string]any{"name": long}, status: 400, want: `{"message":{"name":["` + crudTooLong + `"],"path":["` + crudTooLong + `"]}}`},
		{what: "a name with no latin letter gives no path", body: map[string]any{"name": "日本語"}, status: 400, want: `{"message":{"path":["can't be blank"]}}`},
		{what: "visibility outside the three", body: map[string]any{"name": "v", "visibility": "secret"}, status: 400, want: `{"error":"visibility does not have a valid value"}`},
		{what: "unknown namespace", body: map[string]any{"name": "ns", "namespace_id": 999999}, status: 404, want: `{"message":"404 Namespace Not Found"}`},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			r := crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", c.body)
			if c.status != http.StatusCreated {
				r.want(t, c.status, c.want)
				return
			}
			p := r.status(t, http.StatusCreated).obj(t)
			if p["name"] != c.name {
				t.Fatalf("name %q, want %q", p["name"], c.name)
			}
			path, _ := p["path"].(string)
			if (c.pathLike == nil && path != c.path) || (c.pathLike != nil && !c.pathLike.MatchString(path)) {
				t.Fatalf("path %q, want %q %v", path, c.path, c.pathLike)
			}
			got := crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+url.PathEscape("alice/"+path), nil).status(t, 200).obj(t)
			if got["id"] != p["id"] || got["name"] != c.name {
				t.Fatalf("read back by path: %v", got)
			}
		})
	}
	t.Run("form-encoded", func(t *testing.T) {
		r := crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", "name=Form+Project&issues_enabled=false&visibility=internal&lfs_enabled=0")
		p := r.status(t, http.StatusCreated).obj(t)
		if p["path"] != "form-project" || p["issues_enabled"] != false || p["lfs_enabled"] != false || p["visibility"] != "internal" {
			t.Fatalf("%v", p)
		}
	})
	t.Run("anonymous callers may not create", func(t *testing.T) {
		crudCall(t, s, "", http.MethodPost, "/api/v4/projects", map[string]any{"name": "anon"}).want(t, 401, `{"message":"401 Unauthorized"}`)
	})
}

func TestProjectDuplicates(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	crudCreate(t, s, alice.Token, map[string]any{"name": "dup"})
	post := func(token string, body map[string]any) crudResp {
		return crudCall(t, s, token, http.MethodPost, "/api/v4/projects", body)
	}
	t.Run("same path", func(t *testing.T) {
		post(alice.Token, map[string]any{"name": "another name", "path": "dup"}).want(t, 400, crudTaken)
	})
	t.Run("same path, other case", func(t *testing.T) {
		post(alice.Token, map[string]any{"name": "third name", "path": "DUP"}).want(t, 400, crudTaken)
	})
	t.Run("same name", func(t *testing.T) {
		post(alice.Token, map[string]any{"name": "dup", "path": "dup-2"}).want(t, 400, `{"message":{"name":["has already been taken"]}}`)
	})
	t.Run("same name and path", func(t *testing.T) {
		m := post(alice.Token, map[string]any{"name": "dup"}).status(t, 400).obj(t)["message"].(map[string]any)
		if fmt.Sprint(m["path"]) != "[has already been taken]" {
			t.Fatalf("%v", m)
		}
	})
	t.Run("another namespace may use it", func(t *testing.T) {
		post(bob.Token, map[string]any{"name": "dup"}).status(t, http.StatusCreated)
	})
	t.Run("client-go sees the 400", func(t *testing.T) {
		_, resp, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Path: gitlab.Ptr("dup")})
		if err == nil || resp.StatusCode != 400 || !strings.Contains(err.Error(), "has already been taken") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("concurrent creates of one path: exactly one wins", func(t *testing.T) {
		const n = 16
		var wg sync.WaitGroup
		statuses := make([]crudResp, n)
		for i := range n {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"path": "race", "name": "race " + strconv.Itoa(i)})
			}(i)
		}
		wg.Wait()
		won := 0
		for _, r := range statuses {
			switch r.Status {
			case http.StatusCreated:
				won++
			case http.StatusBadRequest:
				r.want(t, 400, crudTaken)
			default:
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		}
		if won != 1 {
			t.Fatalf("%d creates of one path succeeded", won)
		}
		list := crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects?owned=true&search=race", nil).arr(t)
		if len(list) != 1 {
			t.Fatalf("%d projects with the path", len(list))
		}
	})
}

func TestProjectFieldsAndDefaults(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	t.Run("defaults and shape", func(t *testing.T) {
		p := crudCreate(t, s, alice.Token, map[string]any{"name": "Plain"})
		for _, k := range crudProjectKeys {
			if _, ok := p[k]; !ok {
				t.Fatalf("no %q in %v", k, p)
			}
		}
		for k, def := range crudFeatures {
			if p[k] != def {
				t.Fatalf("%s = %v, want default %v", k, p[k], def)
			}
		}
		web := s.URL + "/alice/plain"
		host, _ := url.Parse(s.URL)
		checks := map[string]any{
			"description": nil, "default_branch": "master", "visibility": "private", "archived": false, "avatar_url": nil,
			"web_url": web, "http_url_to_repo": web + ".git", "ssh_url_to_repo": "git@" + host.Hostname() + ":alice/plain.git",
			"name_with_namespace": "User alice / Plain", "path_with_namespace": "alice/plain", "forks_count": 0.0, "star_count": 0.0,
			"open_issues_count": 0.0, "creator_id": float64(alice.ID),
		}
		for k, v := range checks {
			if p[k] != v {
				t.Fatalf("%s = %#v, want %#v", k, p[k], v)
			}
		}
		if fmt.Sprint(p["tag_list"]) != "[]" || fmt.Sprint(p["shared_with_groups"]) != "[]" {
			t.Fatalf("lists %v %v", p["tag_list"], p["shared_with_groups"])
		}
		ns := p["namespace"].(map[string]any)
		if ns["name"] != "User alice" || ns["path"] != "alice" || ns["kind"] != "user" || ns["full_path"] != "alice" || crudNum(ns["id"]) == 0 {
			t.Fatalf("namespace %v", ns)
		}
		owner := p["owner"].(map[string]any)
		if crudNum(owner["id"]) != alice.ID || owner["name"] != "User alice" || !crudTimestamp.MatchString(owner["created_at"].(string)) {
			t.Fatalf("owner %v", owner)
		}
		for _, k := range []string{"created_at", "last_activity_at"} {
			if !crudTimestamp.MatchString(p[k].(string)) {
				t.Fatalf("%s %v", k, p[k])
			}
		}
		if tok, _ := p["runners_token"].(string); tok == "" {
			t.Fatalf("the owner does not see runners_token")
		}
	})
	t.Run("every boolean is stored and returned, both ways", func(t *testing.T) {
		body := map[string]any{"name": "Flipped", "description": "d", "tag_list": []string{"x", "y"}}
		for k, def := range crudFeatures {
			body[k] = !def
		}
		p := crudCreate(t, s, alice.Token, body)
		id := crudItoa(crudNum(p["id"]))
		check := func(what string, p map[string]any, flipped bool) {
			t.Helper()
			for k, def := range crudFeatures {
				if p[k] != (def != flipped) {
					t.Fatalf("%s: %s = %v, want %v", what, k, p[k], def != flipped)
				}
			}
		}
		check("create response", p, true)
		check("read back", crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+id, nil).obj(t), true)
		if p["description"] != "d" || fmt.Sprint(p["tag_list"]) != "[x y]" {
			t.Fatalf("%v %v", p["description"], p["tag_list"])
		}
		edit := map[string]any{"name": "Flipped"}
		for k, def := range crudFeatures {
			edit[k] = def
		}
		check("edit response", crudCall(t, s, alice.Token, http.MethodPut, "/api/v4/projects/"+id, edit).status(t, 200).obj(t), false)
		check("read back after edit", crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+id, nil).obj(t), false)
		// Form values are strings: "true"/"false" become booleans.
		form := url.Values{"name": {"Flipped"}}
		for k, def := range crudFeatures {
			form.Set(k, strconv.FormatBool(!def))
		}
		check("form edit", crudCall(t, s, alice.Token, http.MethodPut, "/api/v4/projects/"+id, form.Encode()).status(t, 200).obj(t), true)
	})
	t.Run("visibility", func(t *testing.T) {
		for _, v := range []string{"private", "internal", "public"} {
			p := crudCreate(t, s, alice.Token, map[string]any{"name": "vis " + v, "visibility": v})
			if p["visibility"] != v {
				t.Fatalf("%v", p["visibility"])
			}
		}
	})
	t.Run("client-go", func(t *testing.T) {
		p, resp, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{
			Name: gitlab.Ptr("Go Client"), Description: gitlab.Ptr("made by client-go"), Visibility: gitlab.Ptr(gitlab.PublicVisibility),
			JobsEnabled: gitlab.Ptr(false), LFSEnabled: gitlab.Ptr(false), RequestAccessEnabled: gitlab.Ptr(true),
			OnlyAllowMergeIfPipelineSucceeds: gitlab.Ptr(true),
		})
		if err != nil || resp.StatusCode != 201 {
			t.Fatal(err)
		}
		if p.Path != "go-client" || p.Description != "made by client-go" || p.Visibility != gitlab.PublicVisibility || p.LFSEnabled ||
			!p.RequestAccessEnabled || !p.OnlyAllowMergeIfPipelineSucceeds || p.Namespace == nil || p.Namespace.FullPath != "alice" ||
			p.Owner == nil || p.Owner.ID != alice.ID || p.CreatedAt == nil || p.RunnersToken == "" {
			t.Fatalf("%+v", p)
		}
		got, _, err := s.Client.Projects.GetProject("alice/go-client", nil)
		if err != nil || got.ID != p.ID || got.PathWithNamespace != "alice/go-client" {
			t.Fatalf("%v %+v", err, got)
		}
	})
}

func TestProjectNamespacesAndLimits(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	first := crudCreate(t, s, alice.Token, map[string]any{"name": "first"})
	aliceNS := crudNum(first["namespace"].(map[string]any)["id"])
	bobNS := crudNum(crudCreate(t, s, bob.Token, map[string]any{"name": "bobs"})["namespace"].(map[string]any)["id"])

	t.Run("own namespace_id", func(t *testing.T) {
		p := crudCreate(t, s, alice.Token, map[string]any{"name": "explicit", "namespace_id": aliceNS})
		if p["path_with_namespace"] != "alice/explicit" {
			t.Fatalf("%v", p["path_with_namespace"])
		}
	})
	t.Run("another user's namespace is not found", func(t *testing.T) {
		crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "intrude", "namespace_id": bobNS}).
			want(t, 404, `{"message":"404 Namespace Not Found"}`)
	})
	t.Run("administrators may use any namespace", func(t *testing.T) {
		p := crudCreate(t, s, s.RootToken, map[string]any{"name": "placed", "namespace_id": bobNS})
		if p["path_with_namespace"] != "bob/placed" {
			t.Fatalf("%v", p["path_with_namespace"])
		}
	})
	t.Run("projects_limit", func(t *testing.T) {
		crudCall(t, s, s.RootToken, http.MethodPut, "/api/v4/users/"+crudItoa(carol.ID), map[string]any{"projects_limit": 1}).status(t, 200)
		crudCreate(t, s, carol.Token, map[string]any{"name": "only one"})
		r := crudCall(t, s, carol.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "one too many"})
		r.want(t, 400, `{"message":{"limit_reached":["Personal project creation is not allowed. Your project limit is 1 projects"]}}`)
		crudCall(t, s, s.RootToken, http.MethodPut, "/api/v4/users/"+crudItoa(carol.ID), map[string]any{"projects_limit": 0}).status(t, 200)
		crudCall(t, s, carol.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "none allowed"}).status(t, 400)
		crudCall(t, s, s.RootToken, http.MethodPut, "/api/v4/users/"+crudItoa(carol.ID), map[string]any{"projects_limit": 2}).status(t, 200)
		crudCreate(t, s, carol.Token, map[string]any{"name": "room again"})
	})
}

func TestProjectCreateForUser(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	t.Run("client-go", func(t *testing.T) {
		p, resp, err := s.Client.Projects.CreateProjectForUser(alice.ID, &gitlab.CreateProjectForUserOptions{Name: gitlab.Ptr("For Alice")})
		if err != nil || resp.StatusCode != 201 {
			t.Fatal(err)
		}
		if p.PathWithNamespace != "alice/for-alice" || p.DefaultBranch != "master" || p.Owner == nil || p.Owner.ID != alice.ID {
			t.Fatalf("%+v", p)
		}
		if mine, _, err := alice.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Owned: gitlab.Ptr(true)}); err != nil || len(mine) != 1 || mine[0].ID != p.ID {
			t.Fatalf("alice's owned projects: %v %v", err, mine)
		}
	})
	t.Run("default_branch and other fields", func(t *testing.T) {
		r := crudCall(t, s, s.RootToken, http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID),
			map[string]any{"name": "Branchy", "default_branch": "develop", "visibility": "internal", "wiki_enabled": false})
		p := r.status(t, 201).obj(t)
		if p["default_branch"] != "develop" || p["visibility"] != "internal" || p["wiki_enabled"] != false || p["path"] != "branchy" {
			t.Fatalf("%v", p)
		}
	})
	t.Run("creator is the user it is made for", func(t *testing.T) {
		p := crudCall(t, s, s.RootToken, http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID), map[string]any{"name": "Whose"}).status(t, 201).obj(t)
		// GitLab creates the project as the target user.
		if crudNum(p["creator_id"]) != alice.ID {
			t.Fatalf("POST /projects/user/%d as root: creator_id %v, want %d", alice.ID, p["creator_id"], alice.ID)
		}
	})
	t.Run("name is required", func(t *testing.T) {
		crudCall(t, s, s.RootToken, http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID), map[string]any{"path": "only-path"}).
			want(t, 400, `{"error":"name is missing"}`)
		crudCall(t, s, s.RootToken, http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID), map[string]any{"name": nil, "path": "null-name"}).
			want(t, 400, `{"error":"name is missing"}`)
	})
	t.Run("administrators only", func(t *testing.T) {
		crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID), map[string]any{"name": "self"}).want(t, 403, crudForbidden)
		crudCall(t, s, "", http.MethodPost, "/api/v4/projects/user/"+crudItoa(alice.ID), map[string]any{"name": "anon"}).want(t, 401, `{"message":"401 Unauthorized"}`)
		if _, resp, err := alice.Client.Projects.CreateProjectForUser(alice.ID, &gitlab.CreateProjectForUserOptions{Name: gitlab.Ptr("x")}); err == nil || resp.StatusCode != 403 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		crudCall(t, s, s.RootToken, http.MethodPost, "/api/v4/projects/user/987654", map[string]any{"name": "ghost"}).want(t, 404, `{"message":"404 User Not Found"}`)
	})
}

func TestProjectReadVisibility(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	ext := s.CreateUser(t, "ext", fennectest.External())
	ids := map[string]string{}
	for _, v := range []string{"private", "internal", "public"} {
		ids[v] = crudItoa(crudNum(crudCreate(t, s, alice.Token, map[string]any{"name": v + " one", "visibility": v})["id"]))
	}
	callers := map[string]string{"anonymous": "", "bob": bob.Token, "external": ext.Token, "alice": alice.Token, "admin": s.RootToken}
	sees := map[string][]string{
		"private":  {"alice", "admin"},
		"internal": {"alice", "admin", "bob"},
		"public":   {"alice", "admin", "bob", "external", "anonymous"},
	}
	for vis, id := range ids {
		for who, token := range callers {
			t.Run(vis+" as "+who, func(t *testing.T) {
				for _, ref := range []string{id, url.PathEscape("alice/" + vis + "-one"), url.PathEscape("ALICE/" + strings.ToUpper(vis) + "-ONE")} {
					r := crudCall(t, s, token, http.MethodGet, "/api/v4/projects/"+ref, nil)
					if slices.Contains(sees[vis], who) {
						if p := r.status(t, 200).obj(t); crudItoa(crudNum(p["id"])) != id {
							t.Fatalf("%v", p)
						}
					} else {
						r.want(t, 404, crudNotFound)
					}
				}
			})
		}
	}
	t.Run("unknown ids and paths", func(t *testing.T) {
		for _, ref := range []string{"999999", "0", "-1", url.PathEscape("alice/nope"), url.PathEscape("nobody/private-one"), "alice", url.PathEscape("alice/")} {
			crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+ref, nil).want(t, 404, crudNotFound)
		}
	})
	t.Run("writes on an invisible project are 404 too, never 403", func(t *testing.T) {
		crudCall(t, s, bob.Token, http.MethodPut, "/api/v4/projects/"+ids["private"], map[string]any{"name": "mine now"}).want(t, 404, crudNotFound)
		crudCall(t, s, bob.Token, http.MethodDelete, "/api/v4/projects/"+ids["private"], nil).want(t, 404, crudNotFound)
		crudCall(t, s, ext.Token, http.MethodPut, "/api/v4/projects/"+ids["internal"], map[string]any{"name": "mine now"}).want(t, 404, crudNotFound)
	})
	t.Run("runners_token only for the project's administrators", func(t *testing.T) {
		for who, token := range callers {
			r := crudCall(t, s, token, http.MethodGet, "/api/v4/projects/"+ids["public"], nil).obj(t)
			_, has := r["runners_token"]
			if has != (who == "alice" || who == "admin") {
				t.Fatalf("%s: runners_token shown %v", who, has)
			}
		}
		for _, p := range crudCall(t, s, bob.Token, http.MethodGet, "/api/v4/projects", nil).arr(t) {
			if _, has := p["runners_token"]; has {
				t.Fatalf("bob's list shows runners_token of %v", p["path_with_namespace"])
			}
		}
		for _, p := range crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects?owned=true", nil).arr(t) {
			if tok, _ := p["runners_token"].(string); tok == "" {
				t.Fatalf("the owner's list lacks runners_token of %v", p["path_with_namespace"])
			}
		}
	})
}

func TestProjectEditAndDelete(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	dev := s.CreateUser(t, "dev")
	master := s.CreateUser(t, "master")
	p := crudCreate(t, s, alice.Token, map[string]any{"name": "Editable", "visibility": "public"})
	id := crudItoa(crudNum(p["id"]))
	put := func(token string, body any) crudResp {
		return crudCall(t, s, token, http.MethodPut, "/api/v4/projects/"+id, body)
	}

	t.Run("any one attribute is enough", func(t *testing.T) {
		// python-gitlab sends only what changed; name was required before.
		if got := put(alice.Token, map[string]any{"description": "no name"}).status(t, 200).obj(t); got["description"] != "no name" || got["name"] != "Editable" {
			t.Fatalf("PUT description only: %v", got)
		}
		if got := put(alice.Token, "description=form+no+name").status(t, 200).obj(t); got["description"] != "form no name" || got["name"] != "Editable" {
			t.Fatalf("PUT description only (form): %v", got)
		}
		const none = `{"error":"name, path, default_branch, description, visibility, import_url, tag_list, issues_enabled, ` +
			`merge_requests_enabled, jobs_enabled, wiki_enabled, snippets_enabled, container_registry_enabled, shared_runners_enabled, ` +
			`public_jobs, only_allow_merge_if_pipeline_succeeds, only_allow_merge_if_all_discussions_are_resolved, lfs_enabled, ` +
			`request_access_enabled are missing, at least one parameter must be provided"}`
		put(alice.Token, map[string]any{}).want(t, 400, none)
		put(alice.Token, map[string]any{"unknown": 1}).want(t, 400, none)
	})
	t.Run("invalid values", func(t *testing.T) {
		put(alice.Token, map[string]any{"name": "Editable", "visibility": "everyone"}).want(t, 400, `{"error":"visibility does not have a valid value"}`)
		put(alice.Token, map[string]any{"name": "-bad"}).want(t, 400, `{"message":{"name":["`+crudNameRule+`"]}}`)
		put(alice.Token, map[string]any{"name": "Editable", "path": "tree"}).want(t, 400, `{"message":{"path":["tree is a reserved name"]}}`)
		crudCreate(t, s, alice.Token, map[string]any{"name": "Other", "path": "taken"})
		put(alice.Token, map[string]any{"name": "Editable", "path": "taken"}).want(t, 400, crudTaken)
	})
	t.Run("the owner edits everything", func(t *testing.T) {
		got, _, err := alice.Client.Projects.EditProject(crudNum(p["id"]), &gitlab.EditProjectOptions{
			Name: gitlab.Ptr("Renamed"), Path: gitlab.Ptr("renamed"), Description: gitlab.Ptr("new words"),
			DefaultBranch: gitlab.Ptr("main"), Visibility: gitlab.Ptr(gitlab.InternalVisibility),
		})
		if err != nil {
			t.Fatal(err)
		}
		// The repository has no branch main (nor any), so default_branch
		// is left as it was, as GitLab 9.x does (the stock bundle's
		// repository module checks it); the rest of the edit is made.
		if got.Name != "Renamed" || got.Path != "renamed" || got.Description != "new words" || got.DefaultBranch != "master" ||
			got.Visibility != gitlab.InternalVisibility || got.PathWithNamespace != "alice/renamed" {
			t.Fatalf("%+v", got)
		}
		crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+url.PathEscape("alice/editable"), nil).want(t, 404, crudNotFound)
		again := crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+url.PathEscape("alice/renamed"), nil).obj(t)
		if again["description"] != "new words" || again["visibility"] != "internal" {
			t.Fatalf("%v", again)
		}
		put(alice.Token, map[string]any{"name": "Renamed", "visibility": "public"}).status(t, 200)
	})
	t.Run("a stranger may see but not edit", func(t *testing.T) {
		put(bob.Token, map[string]any{"name": "Bobbed"}).want(t, 403, crudForbidden)
		put("", map[string]any{"name": "Anon"}).want(t, 401, `{"message":"401 Unauthorized"}`)
	})
	t.Run("developers may not edit; masters may, but not the visibility", func(t *testing.T) {
		crudMember(t, s, alice.Token, crudNum(p["id"]), dev.ID, 30)
		crudMember(t, s, alice.Token, crudNum(p["id"]), master.ID, 40)
		put(dev.Token, map[string]any{"name": "Dev Was Here"}).want(t, 403, crudForbidden)
		put(master.Token, map[string]any{"name": "Mastered", "description": "by master"}).status(t, 200)
		put(master.Token, map[string]any{"name": "Mastered", "visibility": "private"}).want(t, 403, crudForbidden)
		put(master.Token, map[string]any{"name": "Mastered", "visibility": "public"}).status(t, 200) // unchanged: allowed
		if v := crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+id, nil).obj(t)["visibility"]; v != "public" {
			t.Fatalf("visibility %v", v)
		}
		put(alice.Token, map[string]any{"name": "Mastered", "visibility": "private"}).status(t, 200)
		put(s.RootToken, map[string]any{"name": "Mastered", "visibility": "public"}).status(t, 200)
		runners := func(token string) bool {
			_, ok := crudCall(t, s, token, http.MethodGet, "/api/v4/projects/"+id, nil).status(t, 200).obj(t)["runners_token"]
			return ok
		}
		if !runners(master.Token) || runners(dev.Token) {
			t.Fatalf("runners_token: master %v, developer %v", runners(master.Token), runners(dev.Token))
		}
		crudCall(t, s, dev.Token, http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 403, crudForbidden)
		crudCall(t, s, master.Token, http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 403, crudForbidden)
	})
	t.Run("delete", func(t *testing.T) {
		crudCall(t, s, bob.Token, http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 403, crudForbidden)
		crudCall(t, s, "", http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 401, `{"message":"401 Unauthorized"}`)
		crudCall(t, s, alice.Token, http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 204, "")
		crudCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+id, nil).want(t, 404, crudNotFound)
		crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects/"+id, nil).want(t, 404, crudNotFound)
		crudCall(t, s, alice.Token, http.MethodDelete, "/api/v4/projects/"+id, nil).want(t, 404, crudNotFound)
		// The path is free again.
		crudCreate(t, s, alice.Token, map[string]any{"name": "Mastered"})
	})
	t.Run("administrators delete anyone's project; client-go", func(t *testing.T) {
		q, _, err := bob.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("bobs")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Client.Projects.DeleteProject(q.ID, nil); err == nil {
			t.Fatal("alice deleted bob's private project")
		}
		resp, err := s.Client.Projects.DeleteProject(q.ID, nil)
		if err != nil || resp.StatusCode != 204 {
			t.Fatalf("%v", err)
		}
		if _, resp, err := bob.Client.Projects.GetProject(q.ID, nil); err == nil || resp.StatusCode != 404 {
			t.Fatalf("%v", err)
		}
	})
}

func TestProjectList(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	ext := s.CreateUser(t, "ext", fennectest.External())
	// Created in this order (ids and created_at ascending); names, paths
	// and ids sort three different ways.
	mk := func(token, name, path, vis, desc string) int64 {
		fennectest.NextMillisecond() // distinct timestamps at millisecond precision
		return crudNum(crudCreate(t, s, token, map[string]any{"name": name, "path": path, "visibility": vis, "description": desc})["id"])
	}
	zeta := mk(alice.Token, "Zeta", "aaa-zeta", "public", "the last letter")
	bravo := mk(bob.Token, "bravo", "bravo", "public", "")
	alpha := mk(alice.Token, "alpha", "zz-alpha", "private", "first letter")
	mid := mk(alice.Token, "Mid", "mid", "internal", "")
	bobSecret := mk(bob.Token, "bob-secret", "bob-secret", "private", "")
	rootInternal := mk(s.RootToken, "root-internal", "root-internal", "internal", "")
	extOne := mk(ext.Token, "ext-one", "ext-one", "private", "")
	_ = []int64{zeta, bravo, mid, bobSecret, rootInternal, extOne}
	all := []string{"ext-one", "root-internal", "bob-secret", "Mid", "alpha", "bravo", "Zeta"} // created_at desc
	list := func(token, query string) []map[string]any {
		t.Helper()
		return crudCall(t, s, token, http.MethodGet, "/api/v4/projects"+query, nil).arr(t)
	}
	aliceInBobSecret := false // set once the members API adds her
	only := func(names ...string) []string {
		out := []string{}
		for _, n := range all {
			if slices.Contains(names, n) {
				out = append(out, n)
			}
		}
		return out
	}

	t.Run("who sees what", func(t *testing.T) {
		crudWantNames(t, "anonymous: public only", list("", ""), only("bravo", "Zeta")...)
		crudWantNames(t, "external: public and own", list(ext.Token, ""), only("ext-one", "bravo", "Zeta")...)
		crudWantNames(t, "bob: public, internal, own", list(bob.Token, ""), only("root-internal", "bob-secret", "Mid", "bravo", "Zeta")...)
		crudWantNames(t, "alice", list(alice.Token, ""), only("root-internal", "Mid", "alpha", "bravo", "Zeta")...)
		crudWantNames(t, "admin: all", list(s.RootToken, ""), all...)
	})
	t.Run("visibility", func(t *testing.T) {
		crudWantNames(t, "admin private", list(s.RootToken, "?visibility=private"), only("ext-one", "bob-secret", "alpha")...)
		crudWantNames(t, "bob private", list(bob.Token, "?visibility=private"), "bob-secret")
		crudWantNames(t, "bob internal", list(bob.Token, "?visibility=internal"), "root-internal", "Mid")
		crudWantNames(t, "anonymous internal", list("", "?visibility=internal"))
		crudWantNames(t, "anonymous public", list("", "?visibility=public"), "bravo", "Zeta")
		crudCall(t, s, "", http.MethodGet, "/api/v4/projects?visibility=secret", nil).want(t, 400, `{"error":"visibility does not have a valid value"}`)
	})
	t.Run("order_by and sort", func(t *testing.T) {
		byName := []string{"alpha", "bob-secret", "bravo", "ext-one", "Mid", "root-internal", "Zeta"}
		byPath := []string{"Zeta", "bob-secret", "bravo", "ext-one", "Mid", "root-internal", "alpha"}
		created := slices.Clone(all)
		slices.Reverse(created)
		rev := func(s []string) []string { c := slices.Clone(s); slices.Reverse(c); return c }
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", all},
			{"?sort=asc", created},
			{"?order_by=id", all},
			{"?order_by=id&sort=asc", created},
			{"?order_by=created_at&sort=asc", created},
			{"?order_by=created_at&sort=desc", all},
			{"?order_by=name&sort=asc", byName},
			{"?order_by=name", rev(byName)},
			{"?order_by=path&sort=asc", byPath},
			{"?order_by=path&sort=desc", rev(byPath)},
			{"?order_by=last_activity_at&sort=asc", created},
			{"?order_by=last_activity_at", all},
		} {
			crudWantNames(t, c.query, list(s.RootToken, c.query), c.want...)
		}
		// Editing alpha moves it to the end of updated_at order.
		fennectest.NextMillisecond()
		crudCall(t, s, alice.Token, http.MethodPut, "/api/v4/projects/"+crudItoa(alpha), map[string]any{"name": "alpha", "description": "edited"}).status(t, 200)
		updated := append(slices.DeleteFunc(slices.Clone(created), func(n string) bool { return n == "alpha" }), "alpha")
		crudWantNames(t, "updated_at asc", list(s.RootToken, "?order_by=updated_at&sort=asc"), updated...)
		crudWantNames(t, "updated_at desc", list(s.RootToken, "?order_by=updated_at"), rev(updated)...)
		// last_activity_at values come back in the order asked for.
		acts := list(s.RootToken, "?order_by=last_activity_at&sort=desc")
		if !sort.SliceIsSorted(acts, func(i, j int) bool {
			return acts[i]["last_activity_at"].(string) > acts[j]["last_activity_at"].(string)
		}) {
			t.Fatalf("last_activity_at desc not sorted: %v", acts)
		}
		crudCall(t, s, "", http.MethodGet, "/api/v4/projects?order_by=stars", nil).want(t, 400, `{"error":"order_by does not have a valid value"}`)
		crudCall(t, s, "", http.MethodGet, "/api/v4/projects?sort=up", nil).want(t, 400, `{"error":"sort does not have a valid value"}`)
	})
	t.Run("search", func(t *testing.T) {
		crudWantNames(t, "by name, any case", list(alice.Token, "?search=ALP"), "alpha")
		crudWantNames(t, "by path", list(alice.Token, "?search=aaa-"), "Zeta")
		crudWantNames(t, "by description", list(alice.Token, "?search=LAST+letter"), "Zeta")
		crudWantNames(t, "only what the caller sees", list(bob.Token, "?search=alpha"))
		crudWantNames(t, "search and sort", list(s.RootToken, "?search=b&order_by=name&sort=asc"), "bob-secret", "bravo")
	})
	t.Run("simple", func(t *testing.T) {
		l := list("", "?simple=true")
		crudWantNames(t, "simple", l, "bravo", "Zeta")
		want := []string{"http_url_to_repo", "id", "name", "name_with_namespace", "path", "path_with_namespace", "web_url"}
		for _, p := range l {
			keys := make([]string, 0, len(p))
			for k := range p {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if !slices.Equal(keys, want) {
				t.Fatalf("simple keys %v, want %v", keys, want)
			}
		}
		if l[1]["path_with_namespace"] != "alice/aaa-zeta" || l[1]["web_url"] != s.URL+"/alice/aaa-zeta" ||
			l[1]["http_url_to_repo"] != s.URL+"/alice/aaa-zeta.git" || l[1]["name_with_namespace"] != "User alice / Zeta" {
			t.Fatalf("%v", l[1])
		}
	})
	t.Run("owned and membership", func(t *testing.T) {
		crudWantNames(t, "alice owned", list(alice.Token, "?owned=true"), "Mid", "alpha", "Zeta")
		crudWantNames(t, "alice membership", list(alice.Token, "?membership=true"), "Mid", "alpha", "Zeta")
		crudWantNames(t, "anonymous owned", list("", "?owned=true"))
		crudWantNames(t, "anonymous membership", list("", "?membership=true"))
		crudWantNames(t, "admin owned", list(s.RootToken, "?owned=true"), "root-internal")
		crudWantNames(t, "owned and visibility", list(alice.Token, "?owned=true&visibility=public"), "Zeta")
		crudMember(t, s, bob.Token, bobSecret, alice.ID, 20)
		aliceInBobSecret = true
		crudWantNames(t, "alice membership with bob's project", list(alice.Token, "?membership=true"), "bob-secret", "Mid", "alpha", "Zeta")
		crudWantNames(t, "alice owned still", list(alice.Token, "?owned=true"), "Mid", "alpha", "Zeta")
		crudWantNames(t, "alice now sees bob-secret", list(alice.Token, "?visibility=private"), "bob-secret", "alpha")
	})
	t.Run("starred", func(t *testing.T) {
		r := crudProbe(t, crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects/"+crudItoa(bravo)+"/star", nil), "star API")
		r.status(t, http.StatusCreated)
		crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects/"+crudItoa(zeta)+"/star", nil).status(t, http.StatusCreated)
		crudWantNames(t, "alice starred", list(alice.Token, "?starred=true"), "bravo", "Zeta")
		crudWantNames(t, "bob starred", list(bob.Token, "?starred=true"))
		crudWantNames(t, "anonymous starred", list("", "?starred=true"))
		crudWantNames(t, "starred and owned", list(alice.Token, "?starred=true&owned=true"), "Zeta")
	})
	t.Run("archived", func(t *testing.T) {
		r := crudProbe(t, crudCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects/"+crudItoa(mid)+"/archive", nil), "archive API")
		r.status(t, http.StatusCreated)
		crudWantNames(t, "archived=true", list(alice.Token, "?archived=true"), "Mid")
		visible := []string{"root-internal", "alpha", "bravo", "Zeta"}
		if aliceInBobSecret {
			visible = append(visible, "bob-secret")
		}
		crudWantNames(t, "archived=false", list(alice.Token, "?archived=false"), only(visible...)...)
		crudWantNames(t, "archived left out", list(alice.Token, ""), only(append(visible, "Mid")...)...)
		crudCall(t, s, "", http.MethodGet, "/api/v4/projects?archived=maybe", nil).status(t, 400)
	})
	t.Run("pagination", func(t *testing.T) {
		r := crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?per_page=3&order_by=name&sort=asc", nil)
		r.pages(t, 7, 3, 3, 1, "2", "")
		crudWantNames(t, "page 1", r.arr(t), "alpha", "bob-secret", "bravo")
		if link := r.Header.Get("Link"); !strings.Contains(link, s.URL+"/api/v4/projects?page=2&per_page=3&order_by=name&sort=asc>; rel=\"next\"") {
			t.Fatalf("Link %q", link)
		}
		r = crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?per_page=3&page=3&order_by=name&sort=asc", nil)
		r.pages(t, 7, 3, 3, 3, "", "2")
		crudWantNames(t, "page 3", r.arr(t), "Zeta")
		r = crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?per_page=3&page=4", nil)
		r.want(t, 200, `[]`)
		crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?per_page=1000", nil).pages(t, 7, 1, 100, 1, "", "")
		crudCall(t, s, "", http.MethodGet, "/api/v4/projects", nil).pages(t, 2, 1, 20, 1, "", "")
	})
	t.Run("client-go with every option", func(t *testing.T) {
		opt := &gitlab.ListProjectsOptions{
			ListOptions: gitlab.ListOptions{PerPage: 2, Page: 1},
			Archived:    gitlab.Ptr(false), Visibility: gitlab.Ptr(gitlab.PrivateVisibility),
			OrderBy: gitlab.Ptr("name"), Sort: gitlab.Ptr("asc"), Search: gitlab.Ptr("a"),
			Simple: gitlab.Ptr(true), Owned: gitlab.Ptr(false), Membership: gitlab.Ptr(true), Starred: gitlab.Ptr(false),
		}
		got, resp, err := alice.Client.Projects.ListProjects(opt)
		if err != nil {
			t.Fatal(err)
		}
		// alice's private projects she is a member of, with an "a": alpha
		// (hers) and, when the members API let bob add her, bob-secret.
		names := []string{}
		for _, p := range got {
			names = append(names, p.Name)
		}
		if len(names) == 0 || names[0] != "alpha" || resp.TotalItems != int64(len(names)) {
			t.Fatalf("%v %+v", names, resp)
		}
		pub, resp, err := s.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Visibility: gitlab.Ptr(gitlab.PublicVisibility),
			OrderBy: gitlab.Ptr("id"), Sort: gitlab.Ptr("asc"), ListOptions: gitlab.ListOptions{PerPage: 1}})
		if err != nil || len(pub) != 1 || pub[0].Name != "Zeta" || resp.TotalItems != 2 || resp.NextPage != 2 {
			t.Fatalf("%v %v %+v", err, pub, resp)
		}
		st, _, err := alice.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Starred: gitlab.Ptr(true), Owned: gitlab.Ptr(true)})
		if err != nil || len(st) > 1 {
			t.Fatalf("%v %v", err, st)
		}
	})
	// search goes through the projects' search index (queries of three
	// bytes and more) or scans (shorter ones): either way a search is the
	// same list without it, filtered by name, path or description in any
	// case, in the same order, for every caller and filter.
	t.Run("search equals the list filtered", func(t *testing.T) {
		searchAll := func(t *testing.T) {
			t.Helper()
			callers := map[string]string{"anonymous": "", "ext": ext.Token, "bob": bob.Token, "alice": alice.Token, "admin": s.RootToken}
			for who, token := range callers {
				for _, filter := range []string{"", "&owned=true", "&membership=true", "&visibility=internal", "&order_by=name&sort=asc", "&order_by=path", "&archived=false"} {
					base := list(token, "?per_page=100"+filter)
					for _, q := range []string{"ETT", "zeta", "aaa-", "-", "e-o", "RET", "nal", "b", "xyz", "le", "LETTER", "renamed", "édit"} {
						want := []string{}
						for _, p := range base {
							desc, _ := p["description"].(string)
							if store.ContainsFold(p["name"].(string), q) || store.ContainsFold(p["path"].(string), q) || store.ContainsFold(desc, q) {
								want = append(want, p["name"].(string))
							}
						}
						r := crudCall(t, s, token, http.MethodGet, "/api/v4/projects?per_page=100&search="+url.QueryEscape(q)+filter, nil)
						crudWantNames(t, who+" "+q+filter, r.arr(t), want...)
						r.pages(t, len(want), max(1, (len(want)+99)/100), 100, 1, "", "")
					}
				}
			}
		}
		searchAll(t)
		// A rename, a new description and a deletion move the index.
		crudCall(t, s, bob.Token, http.MethodPut, "/api/v4/projects/"+crudItoa(bravo), map[string]any{"name": "bravo renamed", "description": "Édité"}).status(t, 200)
		crudCall(t, s, s.RootToken, http.MethodDelete, "/api/v4/projects/"+crudItoa(rootInternal), nil).status(t, 204)
		crudWantNames(t, "old name", list(s.RootToken, "?search=bravo+r"), "bravo renamed")
		crudWantNames(t, "new description", list("", "?search=%C3%A9DIT"), "bravo renamed")
		crudWantNames(t, "deleted", list(s.RootToken, "?search=root-int"))
		searchAll(t)
		// Pages of a search: X-Total counts every match.
		r := crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?search=-&per_page=1&page=2&order_by=name&sort=asc", nil)
		crudWantNames(t, "page 2", r.arr(t), "bob-secret")
		r.pages(t, 4, 4, 1, 2, "3", "1")
		r = crudCall(t, s, s.RootToken, http.MethodGet, "/api/v4/projects?search=ZZ-&per_page=1&page=2", nil)
		r.want(t, 200, `[]`)
		r.pages(t, 1, 1, 1, 2, "", "1")
	})
}
