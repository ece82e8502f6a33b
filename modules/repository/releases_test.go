package repository_test

// Black-box tests of the releases API, its asset links, and its agreement
// with the 9.x release notes of tags (one store behind both).

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestReleasesAPI(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	pid := w.project.ID
	v1 := gitCmd(t, w.work, "rev-parse", "v1.0^{commit}")

	past := time.Date(2020, 3, 15, 8, 0, 0, 0, time.UTC)
	rel, resp, err := c.Releases.CreateRelease(pid, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr("v1.0"), Name: gitlab.Ptr("One"),
		Description: gitlab.Ptr("first notes"), ReleasedAt: &past,
		Assets: &gitlab.ReleaseAssetsOptions{Links: []*gitlab.ReleaseAssetLinkOptions{
			{Name: gitlab.Ptr("linux"), URL: gitlab.Ptr("https://example.com/one-linux"), LinkType: gitlab.Ptr(gitlab.PackageLinkType)},
			{Name: gitlab.Ptr("notes"), URL: gitlab.Ptr(w.project.WebURL + "/notes.txt")},
		}}})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v", err)
	}
	if rel.TagName != "v1.0" || rel.Name != "One" || rel.Description != "first notes" || rel.Author.Username != "root" ||
		rel.Commit.ID != v1 || !rel.ReleasedAt.Equal(past) || rel.CreatedAt == nil || time.Since(*rel.CreatedAt) > time.Minute ||
		rel.UpcomingRelease || rel.CommitPath != "/"+w.project.PathWithNamespace+"/-/commit/"+v1 ||
		rel.TagPath != "/"+w.project.PathWithNamespace+"/-/tags/v1.0" || rel.Links.Self != w.project.WebURL+"/-/releases/v1.0" {
		t.Fatalf("created %+v", rel)
	}
	if rel.Assets.Count != 6 || len(rel.Assets.Sources) != 4 || len(rel.Assets.Links) != 2 {
		t.Fatalf("assets %+v", rel.Assets)
	}
	wantSource := w.s.URL + "/api/v4/projects/" + store.IDString(pid) + "/repository/archive.tar.gz?sha=v1.0"
	if rel.Assets.Sources[0].Format != "zip" || rel.Assets.Sources[1].Format != "tar.gz" || rel.Assets.Sources[1].URL != wantSource ||
		rel.Assets.Sources[2].Format != "tar.bz2" || rel.Assets.Sources[3].Format != "tar" {
		t.Fatalf("sources %+v", rel.Assets.Sources)
	}
	// The sources are archives one can download.
	if r := w.s.Do(t, http.MethodGet, strings.TrimPrefix(wantSource, w.s.URL), nil); r.StatusCode != 200 {
		t.Fatalf("source download: %d", r.StatusCode)
	}
	// Links newest first; external unless they point into the project.
	l0, l1 := rel.Assets.Links[0], rel.Assets.Links[1]
	if l0.Name != "notes" || l0.External || l0.LinkType != gitlab.OtherLinkType || l1.Name != "linux" || !l1.External ||
		l1.LinkType != gitlab.PackageLinkType || l1.DirectAssetURL != l1.URL || l0.ID == l1.ID {
		t.Fatalf("links %+v %+v", l0, l1)
	}

	post := func(path, body string) (int, string) {
		t.Helper()
		r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(pid)+path, strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		return r.StatusCode, strings.TrimSpace(string(raw))
	}
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{"tag_name":"v1.0"}`, 409, `{"message":"Release already exists"}`},
		{`{"tag_name":"v9.0","description":"x"}`, 422, `{"message":"Ref is not specified"}`},
		{`{"tag_name":"v9.0","ref":"nope"}`, 400, `{"message":"Target nope is invalid"}`},
		{`{"tag_name":"a b","ref":"master"}`, 400, `{"message":"Tag name invalid"}`},
		{`{"description":"x"}`, 400, `{"error":"tag_name is missing"}`},
		{`{"tag_name":"v9.0","ref":"master","assets":{"links":[{"name":"a","url":"file:///etc/passwd"}]}}`, 400,
			`{"message":"Validation failed: Links are invalid: Url is blocked: Only allowed schemes are http, https, ftp"}`},
		{`{"tag_name":"v9.0","ref":"master","assets":{"links":[{"name":"a","url":"http://x/1"},{"name":"a","url":"http://x/1"}]}}`, 400,
			`{"message":"Validation failed: Links are invalid: Url has already been taken, Name has already been taken"}`},
	} {
		if code, got := post("/releases", tc.body); code != tc.code || got != tc.want {
			t.Errorf("%s: %d %s, want %d %s", tc.body, code, got, tc.code, tc.want)
		}
	}
	// Refused requests made no tag.
	if _, resp, err := c.Tags.GetTag(pid, "v9.0"); err == nil || resp.StatusCode != 404 {
		t.Fatal("a refused release made its tag")
	}

	// A release of a new tag: the tag is made from ref, annotated with
	// tag_message, and the form-encoded links of Rails arrive too.
	code, raw := post("/releases", `{"tag_name":"v9.0","ref":"master","tag_message":"nine","description":"ninth"}`)
	if code != 201 {
		t.Fatalf("create with ref: %d %s", code, raw)
	}
	if typ := gitCmd(t, w.bare, "cat-file", "-t", "refs/tags/v9.0"); typ != "tag" {
		t.Fatalf("tag_message makes an annotated tag, got %s", typ)
	}
	form := w.s.Do(t, http.MethodPost, "/api/v4/projects/"+store.IDString(pid)+"/releases",
		strings.NewReader("tag_name=v2.0&description=two&assets[links][][name]=a&assets[links][][url]=http://x/a&assets[links][][name]=b&assets[links][][url]=http://x/b"),
		"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/x-www-form-urlencoded")
	if form.StatusCode != 201 {
		t.Fatalf("form create: %d", form.StatusCode)
	}
	two, _, err := c.Releases.GetRelease(pid, "v2.0")
	if err != nil || two.Name != "v2.0" || len(two.Assets.Links) != 2 || two.Assets.Links[0].Name != "b" || two.Commit.ID != w.head {
		t.Fatalf("form-made release %+v %v", two, err)
	}

	// Newest released first (v1.0 was released in 2020); sort=asc turns it.
	list, resp, err := c.Releases.ListReleases(pid, nil)
	if err != nil || len(list) != 3 || list[2].TagName != "v1.0" || resp.Header.Get("X-Total") != "3" {
		t.Fatalf("list %v %v", names(list), err)
	}
	asc, _, _ := c.Releases.ListReleases(pid, &gitlab.ListReleasesOptions{Sort: gitlab.Ptr("asc")})
	if len(asc) != 3 || asc[0].TagName != "v1.0" || asc[2].TagName != list[0].TagName {
		t.Fatalf("asc %v", names(asc))
	}
	byCreated, _, _ := c.Releases.ListReleases(pid, &gitlab.ListReleasesOptions{OrderBy: gitlab.Ptr("created_at")})
	if len(byCreated) != 3 || byCreated[0].TagName != "v2.0" || byCreated[2].TagName != "v1.0" {
		t.Fatalf("by created_at %v", names(byCreated))
	}
	latest, _, err := c.Releases.GetLatestRelease(pid)
	if err != nil || latest.TagName != list[0].TagName {
		t.Fatalf("latest %+v %v", latest, err)
	}

	// One store: the tags API shows the releases API's notes and the other
	// way round.
	tag, _, err := c.Tags.GetTag(pid, "v1.0")
	if err != nil || tag.Release == nil || tag.Release.TagName != "v1.0" || tag.Release.Description != "first notes" {
		t.Fatalf("tag's release %+v %v", tag, err)
	}
	if _, _, err := c.Tags.CreateTag(pid, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v3.0"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	if code, raw := post("/repository/tags/v3.0/release", `{"description":"three notes"}`); code != 201 {
		t.Fatalf("9.x release notes: %d %s", code, raw)
	}
	three, _, err := c.Releases.GetRelease(pid, "v3.0")
	if err != nil || three.Name != "v3.0" || three.Description != "three notes" || three.Author.Username != "root" || three.Commit.ID != w.head {
		t.Fatalf("9.x release through the releases API %+v %v", three, err)
	}
	if code, raw := post("/repository/tags/v1.0/release", `{"description":"again"}`); code != 409 || raw != `{"message":"Release already exists"}` {
		t.Fatalf("9.x release notes over a release: %d %s", code, raw)
	}

	// Update: any one field; the others stay.
	up, _, err := c.Releases.UpdateRelease(pid, "v1.0", &gitlab.UpdateReleaseOptions{Name: gitlab.Ptr("Uno")})
	if err != nil || up.Name != "Uno" || up.Description != "first notes" || !up.ReleasedAt.Equal(past) || len(up.Assets.Links) != 2 {
		t.Fatalf("update %+v %v", up, err)
	}
	put := func(path, body string) (int, string) {
		t.Helper()
		r, raw := w.s.JSON(t, http.MethodPut, "/api/v4/projects/"+store.IDString(pid)+path, strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		return r.StatusCode, strings.TrimSpace(string(raw))
	}
	for _, tc := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/releases/v1.0", `{}`, 400, `{"message":"params is empty"}`},
		{"/releases/nope", `{"name":"x"}`, 404, `{"message":"Tag does not exist"}`},
		{"/releases/light", `{"name":"x"}`, 404, `{"message":"Release does not exist"}`},
	} {
		if tc.path == "/releases/light" {
			if _, _, err := c.Tags.CreateTag(pid, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("light"), Ref: gitlab.Ptr("v1.0")}); err != nil {
				t.Fatal(err)
			}
		}
		if code, got := put(tc.path, tc.body); code != tc.code || got != tc.want {
			t.Errorf("PUT %s %s: %d %s", tc.path, tc.body, code, got)
		}
	}
	if code, raw := put("/repository/tags/v1.0/release", `{"description":"changed"}`); code != 200 {
		t.Fatalf("9.x update: %d %s", code, raw)
	}
	if got, _, _ := c.Releases.GetRelease(pid, "v1.0"); got.Description != "changed" || got.Name != "Uno" {
		t.Fatalf("after the 9.x update %+v", got)
	}

	// Links.
	link, resp, err := c.ReleaseLinks.CreateReleaseLink(pid, "v1.0", &gitlab.CreateReleaseLinkOptions{Name: gitlab.Ptr("mac"),
		URL: gitlab.Ptr("https://example.com/one-mac"), LinkType: gitlab.Ptr(gitlab.ImageLinkType)})
	if err != nil || resp.StatusCode != 201 || link.Name != "mac" || link.LinkType != gitlab.ImageLinkType || !link.External {
		t.Fatalf("create link %+v %v", link, err)
	}
	for _, tc := range []struct {
		body string
		want string
	}{
		{`{"name":"other","url":"https://example.com/one-mac"}`, `{"message":["Url has already been taken"]}`},
		{`{"name":"mac","url":"https://example.com/x"}`, `{"message":["Name has already been taken"]}`},
		{`{"name":"x","url":"javascript:alert(1)"}`, `{"message":["Url is blocked: Only allowed schemes are http, https, ftp"]}`},
		{`{"name":"x","url":"https://example.com/y","link_type":"movie"}`, ``},
	} {
		code, got := post("/releases/v1.0/assets/links", tc.body)
		if code != 400 || (tc.want != "" && got != tc.want) {
			t.Errorf("link %s: %d %s", tc.body, code, got)
		}
	}
	if code, got := post("/releases/light/assets/links", `{"name":"x","url":"https://example.com/y"}`); code != 404 || got != `{"message":"404 Not found"}` {
		t.Errorf("link of a tag without release: %d %s", code, got)
	}
	links, resp, err := c.ReleaseLinks.ListReleaseLinks(pid, "v1.0", nil)
	if err != nil || len(links) != 3 || links[0].ID != link.ID || resp.Header.Get("X-Total") != "3" {
		t.Fatalf("list links %+v %v", links, err)
	}
	changed, _, err := c.ReleaseLinks.UpdateReleaseLink(pid, "v1.0", link.ID, &gitlab.UpdateReleaseLinkOptions{Name: gitlab.Ptr("macOS")})
	if err != nil || changed.Name != "macOS" || changed.URL != link.URL || changed.LinkType != gitlab.ImageLinkType {
		t.Fatalf("update link %+v %v", changed, err)
	}
	if code, got := put("/releases/v1.0/assets/links/"+store.IDString(link.ID), `{"link_type":"other"}`); code != 400 ||
		got != `{"error":"name, url are missing, at least one parameter must be provided"}` {
		t.Errorf("update link without name or url: %d %s", code, got)
	}
	// A link is found under its own release only.
	if _, resp, err := c.ReleaseLinks.GetReleaseLink(pid, "v2.0", link.ID); err == nil || resp.StatusCode != 404 {
		t.Fatalf("link under another release: %v", err)
	}
	gone, resp, err := c.ReleaseLinks.DeleteReleaseLink(pid, "v1.0", link.ID)
	if err != nil || resp.StatusCode != 200 || gone.Name != "macOS" {
		t.Fatalf("delete link %+v %v", gone, err)
	}
	r, raw2 := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(pid)+"/releases/v1.0/assets/links/"+store.IDString(link.ID), nil, nil)
	if r.StatusCode != 404 || strings.TrimSpace(string(raw2)) != `{"message":"404 Not found"}` {
		t.Fatalf("deleted link: %d %s", r.StatusCode, raw2)
	}

	// Delete answers with the release; the tag stays.
	del, resp, err := c.Releases.DeleteRelease(pid, "v1.0")
	if err != nil || resp.StatusCode != 200 || del.TagName != "v1.0" || del.Name != "Uno" || len(del.Assets.Links) != 2 {
		t.Fatalf("delete %+v %v", del, err)
	}
	r, raw2 = w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(pid)+"/releases/v1.0", nil, nil)
	if r.StatusCode != 404 || strings.TrimSpace(string(raw2)) != `{"message":"404 Not Found"}` {
		t.Fatalf("deleted release: %d %s", r.StatusCode, raw2)
	}
	if tag, _, err := c.Tags.GetTag(pid, "v1.0"); err != nil || tag.Release != nil {
		t.Fatalf("the tag after its release was deleted %+v %v", tag, err)
	}
	if _, resp, err := c.Releases.DeleteRelease(pid, "v1.0"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("delete twice: %v", err)
	}

	// Deleting a tag deletes its release (with its links): a tag of that
	// name made later has none.
	if _, err := c.Tags.DeleteTag(pid, "v2.0"); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := c.Releases.GetRelease(pid, "v2.0"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("the release of a deleted tag: %v", err)
	}
	if _, _, err := c.Tags.CreateTag(pid, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v2.0"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	if tag, _, err := c.Tags.GetTag(pid, "v2.0"); err != nil || tag.Release != nil {
		t.Fatalf("a new tag of a deleted one's name %+v %v", tag, err)
	}
}

// Deleting a tag by a push deletes its release too, as the API does.
func TestReleaseGoesWithTagDeletedByPush(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	p := g.project(t, "pushed", gitlab.PrivateVisibility)
	work := g.cli.newWork(t)
	g.cli.commit(t, work, "first", map[string]string{"a.txt": "a\n"})
	g.cli.ok(t, work, "tag", "v1.0")
	g.cli.ok(t, work, "push", "-q", g.rootURL(p), "master", "v1.0")
	if _, _, err := g.Client.Releases.CreateRelease(p.ID, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr("v1.0"), Description: gitlab.Ptr("d"),
		Assets: &gitlab.ReleaseAssetsOptions{Links: []*gitlab.ReleaseAssetLinkOptions{{Name: gitlab.Ptr("x"), URL: gitlab.Ptr("http://x/1")}}}}); err != nil {
		t.Fatal(err)
	}
	g.cli.ok(t, work, "push", "-q", g.rootURL(p), ":refs/tags/v1.0")
	if _, resp, err := g.Client.Releases.GetRelease(p.ID, "v1.0"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("the release of a tag deleted by a push: %v", err)
	}
	g.cli.ok(t, work, "push", "-q", g.rootURL(p), "v1.0")
	if list, _, err := g.Client.Releases.ListReleases(p.ID, nil); err != nil || len(list) != 0 {
		t.Fatalf("releases after the tag came back: %v %v", names(list), err)
	}
}

// Readers of the code read releases; Developers write them.
func TestReleasePermissions(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	p := g.project(t, "guarded", gitlab.PrivateVisibility)
	work := g.cli.newWork(t)
	g.cli.commit(t, work, "first", map[string]string{"a.txt": "a\n"})
	g.cli.ok(t, work, "tag", "v1.0")
	g.seed(t, p, work)
	if _, _, err := g.Client.Releases.CreateRelease(p.ID, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr("v1.0"), Description: gitlab.Ptr("d")}); err != nil {
		t.Fatal(err)
	}
	guest, reporter, developer, stranger := g.CreateUser(t, "guest"), g.CreateUser(t, "reporter"), g.CreateUser(t, "developer"), g.CreateUser(t, "stranger")
	g.addMember(t, p, guest, gitlab.GuestPermissions)
	g.addMember(t, p, reporter, gitlab.ReporterPermissions)
	g.addMember(t, p, developer, gitlab.DeveloperPermissions)

	if _, resp, err := stranger.Client.Releases.GetRelease(p.ID, "v1.0"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("a stranger reads a private project's release: %v", err)
	}
	if _, resp, err := guest.Client.Releases.ListReleases(p.ID, nil); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a guest (no code) lists releases: %v", err)
	}
	if got, _, err := reporter.Client.Releases.GetRelease(p.ID, "v1.0"); err != nil || got.Description != "d" {
		t.Fatalf("a reporter reads: %v", err)
	}
	if _, resp, err := reporter.Client.Releases.UpdateRelease(p.ID, "v1.0", &gitlab.UpdateReleaseOptions{Description: gitlab.Ptr("r")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a reporter edits: %v", err)
	}
	if _, resp, err := reporter.Client.ReleaseLinks.CreateReleaseLink(p.ID, "v1.0", &gitlab.CreateReleaseLinkOptions{Name: gitlab.Ptr("x"), URL: gitlab.Ptr("http://x/1")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("a reporter adds a link: %v", err)
	}
	got, _, err := developer.Client.Releases.UpdateRelease(p.ID, "v1.0", &gitlab.UpdateReleaseOptions{Description: gitlab.Ptr("dev")})
	if err != nil || got.Description != "dev" {
		t.Fatalf("a developer edits: %+v %v", got, err)
	}
	if _, _, err := developer.Client.Releases.DeleteRelease(p.ID, "v1.0"); err != nil {
		t.Fatalf("a developer deletes: %v", err)
	}
	raw, _ := json.Marshal(got)
	if !strings.Contains(string(raw), `"username":"root"`) {
		t.Fatalf("the author stays the creator: %s", raw)
	}
}

func names(list []*gitlab.Release) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.TagName)
	}
	return out
}
