package repository_test

import (
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestReleasePages: the releases page lists what GET /releases lists,
// newest first, with the notes rendered at their tag (a relative link
// into the tag's tree), the tag, commit and assets; the release's own
// page is its API _links.self; a private project's releases are the
// API's to see; notes with a script render inert.
func TestReleasePages(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "shipped", "public")
	c := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first", map[string]string{"CHANGES.md": "x\n"})
	for i, tag := range []string{"v1.0", "v2.0"} {
		if _, _, err := s.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr(tag), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
		notes := "Read [the changes](CHANGES.md).\n\n<script>alert(1)</script>"
		if i == 1 {
			notes = "Second **release**."
		}
		if _, _, err := s.Client.Releases.CreateRelease(p.ID, &gitlab.CreateReleaseOptions{TagName: gitlab.Ptr(tag), Name: gitlab.Ptr("Release " + tag),
			Description: gitlab.Ptr(notes), Assets: &gitlab.ReleaseAssetsOptions{Links: []*gitlab.ReleaseAssetLinkOptions{
				{Name: gitlab.Ptr("Binary " + tag), URL: gitlab.Ptr("https://example.com/" + tag + ".bin")}}}}); err != nil {
			t.Fatal(err)
		}
	}
	b := s.NewBrowser(t)
	page := b.Get(t, "/root/shipped/-/releases")
	wantPage(t, "releases", page, 200, `<h1>Releases</h1>`, `<h2 id="release-1"><bdi>Release v2.0</bdi></h2>`, `<h2 id="release-2"><bdi>Release v1.0</bdi></h2>`,
		`<a href="`+s.URL+`/root/shipped/-/blob/v1.0/CHANGES.md" rel="nofollow noreferrer">the changes</a>`, `<p>Second <strong>release</strong>.</p>`,
		`<a href="/root/shipped/-/tree/v1.0"><bdi>v1.0</bdi></a>`, `<a class="mono" href="/root/shipped/-/commit/`+c.ID+`">`+c.ID[:8]+`</a>`,
		`<a href="https://example.com/v2.0.bin" rel="nofollow noreferrer"><bdi>Binary v2.0</bdi></a>`, `Source code (zip)`,
		`<a href="/root/shipped/-/releases" aria-current="page">Releases</a>`)
	if strings.Index(page.Body, "Release v2.0") > strings.Index(page.Body, "Release v1.0") {
		t.Error("the releases are not newest first")
	}
	if strings.Contains(page.Body, "<script>alert") {
		t.Error("the notes' script reached the page")
	}
	rel, _, err := s.Client.Releases.GetRelease(p.ID, "v1.0")
	if err != nil {
		t.Fatal(err)
	}
	self := strings.TrimPrefix(rel.Links.Self, s.URL)
	wantPage(t, "one release", b.Get(t, self), 200, `<h1 id="release-1"><bdi>Release v1.0</bdi></h1>`)
	wantPage(t, "no such release", b.Get(t, "/root/shipped/-/releases/v9"), 404)

	priv := stocktest.NewProject(t, s.Client, "secret", "private")
	p2 := b.Get(t, "/root/secret/-/releases")
	if p2.StatusCode != 302 || !strings.HasPrefix(p2.Header.Get("Location"), "/users/sign_in") {
		t.Errorf("anonymous private releases: %d %q", p2.StatusCode, p2.Header.Get("Location"))
	}
	wantPage(t, "empty", s.SignedIn(t, "root", s.RootPassword).Get(t, "/root/secret/-/releases"), 200, `This project has no releases yet.`)
	_ = priv
}

// TestProjectHeaderShowsStarsAndForks: the project header counts the
// stars and forks the API counts.
func TestProjectHeaderShowsStarsAndForks(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, s.Client, "liked", "public")
	if _, _, err := alice.Client.Projects.StarProject(p.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Projects.StarProject(p.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Projects.ForkProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	wantPage(t, "overview", s.NewBrowser(t).Get(t, "/root/liked"), 200,
		`<span class="counts muted"><span>2 stars</span> · <span>1 fork</span></span>`)
}
