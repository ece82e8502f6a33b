package repository_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

type readWorld struct {
	s       *fennectest.Server
	project *gitlab.Project
	work    string // a clone with the history
	head    string
	bare    string // the project's repository on disk
}

func pushTarget(t *testing.T, w *readWorld) string { return w.bare }

// newReadWorld makes a public project and pushes a small history into its
// repository with the git CLI: two commits on master, a feature branch, a
// lightweight and an annotated tag, a binary file and a nested directory.
func newReadWorld(t *testing.T, visibility gitlab.VisibilityValue) *readWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var bus *events.Bus
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&bus, &repos))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("code"), Visibility: gitlab.Ptr(visibility)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, bus)
	w := t.TempDir()
	gitCmd(t, w, "init", "-q", "-b", "master")
	write := func(name, content string) {
		full := filepath.Join(w, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "hello\n")
	write("docs/guide/intro.md", "intro\n")
	gitCmd(t, w, "add", ".")
	gitCmd(t, w, "commit", "-q", "-m", "first\n\nbody of the first")
	gitCmd(t, w, "tag", "v1.0")
	write("README.md", "hello\nworld\n")
	write("bin/blob.dat", "\x00\x01\x02binary")
	write("run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(filepath.Join(w, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w, "add", ".")
	gitCmd(t, w, "commit", "-q", "-m", "second")
	gitCmd(t, w, "tag", "-a", "v2.0", "-m", "release two")
	gitCmd(t, w, "branch", "feature")
	touchRepository(t, s.Client, p.ID)
	gitCmd(t, w, "push", "-q", "--tags", repos.Path(p.ID), "master", "feature")
	return &readWorld{s: s, project: p, work: w, head: gitCmd(t, w, "rev-parse", "HEAD"), bare: repos.Path(p.ID)}
}

func TestTreeMatchesGit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	anon := w.s.NewClient(t, "")
	tree, resp, err := anon.Repositories.ListTree(w.project.ID, &gitlab.ListTreeOptions{Recursive: gitlab.Ptr(true), ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tree {
		got = append(got, e.Type+" "+e.Mode+" "+e.ID+" "+e.Path)
	}
	var want []string
	for _, line := range strings.Split(gitCmd(t, w.work, "ls-tree", "-r", "-t", "HEAD"), "\n") {
		meta, p, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		want = append(want, f[1]+" "+f[0]+" "+f[2]+" "+p)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree differs from git ls-tree:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Directories come first at each level.
	top, _, err := anon.Repositories.ListTree(w.project.ID, nil)
	if err != nil || len(top) != 4 || top[0].Type != "tree" || top[1].Type != "tree" || top[2].Type != "blob" {
		t.Fatalf("top level %+v %v", top, err)
	}
	sub, _, err := anon.Repositories.ListTree(w.project.ID, &gitlab.ListTreeOptions{Path: gitlab.Ptr("docs/guide"), Ref: gitlab.Ptr("v1.0")})
	if err != nil || len(sub) != 1 || sub[0].Path != "docs/guide/intro.md" {
		t.Fatalf("subtree at v1.0: %+v %v", sub, err)
	}
	for _, bad := range []string{"?path=../../etc", "?path=docs/../..", "?ref=nope", "?ref=-x", "?ref=master..feature", "?ref=master@%7B0%7D", "?path=nothere"} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/tree"+bad, nil, nil)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Tree Not Found"}` {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

func TestBlobsAndRaw(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	sha := gitCmd(t, w.work, "rev-parse", "HEAD:README.md")
	var blob struct {
		Size     int64  `json:"size"`
		Encoding string `json:"encoding"`
		Content  string `json:"content"`
		SHA      string `json:"sha"`
	}
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/blobs/"+sha, nil, &blob)
	if resp.StatusCode != 200 || blob.Encoding != "base64" || blob.SHA != sha || blob.Size != 12 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if dec, _ := base64.StdEncoding.DecodeString(blob.Content); string(dec) != "hello\nworld\n" {
		t.Fatalf("content %q", dec)
	}
	raw, _, err := w.s.NewClient(t, "").Repositories.RawBlobContent(w.project.ID, sha)
	if err != nil || string(raw) != "hello\nworld\n" {
		t.Fatalf("raw %q %v", raw, err)
	}
	bin := gitCmd(t, w.work, "rev-parse", "HEAD:bin/blob.dat")
	r := w.s.Do(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/blobs/"+bin+"/raw", nil)
	got := new(bytes.Buffer)
	_, _ = got.ReadFrom(r.Body)
	r.Body.Close()
	if r.Header.Get("Content-Type") != "application/octet-stream" || r.Header.Get("X-Content-Type-Options") != "nosniff" || got.String() != "\x00\x01\x02binary" {
		t.Fatalf("binary raw: %s %q", r.Header.Get("Content-Type"), got)
	}
	for _, bad := range []string{"0000000000000000000000000000000000000000", "zz", "..%2F..%2Fx"} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/blobs/"+bad, nil, nil)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Blob Not Found"}` {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}

func TestCommits(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.NewClient(t, "")
	list, resp, err := c.Commits.ListCommits(w.project.ID, nil)
	if err != nil || len(list) != 2 || list[0].ID != w.head || list[0].Title != "second" || list[1].Message != "first\n\nbody of the first\n" {
		t.Fatalf("commits %+v %v", list, err)
	}
	if resp.Header.Get("X-Next-Page") != "" {
		t.Fatalf("one page only: X-Next-Page %q", resp.Header.Get("X-Next-Page"))
	}
	page1, resp, err := c.Commits.ListCommits(w.project.ID, &gitlab.ListCommitsOptions{ListOptions: gitlab.ListOptions{PerPage: 1}})
	if err != nil || len(page1) != 1 || resp.Header.Get("X-Next-Page") != "2" {
		t.Fatalf("page 1 of 1: %v next %q", err, resp.Header.Get("X-Next-Page"))
	}
	first := gitCmd(t, w.work, "rev-parse", "HEAD~1")
	atTag, _, err := c.Commits.ListCommits(w.project.ID, &gitlab.ListCommitsOptions{RefName: gitlab.Ptr("v1.0")})
	if err != nil || len(atTag) != 1 || atTag[0].ID != first {
		t.Fatalf("ref_name=v1.0: %+v %v", atTag, err)
	}
	byPath, _, err := c.Commits.ListCommits(w.project.ID, &gitlab.ListCommitsOptions{Path: gitlab.Ptr("run.sh")})
	if err != nil || len(byPath) != 1 || byPath[0].ID != w.head {
		t.Fatalf("path=run.sh: %+v %v", byPath, err)
	}
	one, _, err := c.Commits.GetCommit(w.project.ID, "master", nil)
	adds, dels := 0, 0
	for _, line := range strings.Split(gitCmd(t, w.work, "diff", "--numstat", "HEAD~1", "HEAD"), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] != "-" { // "-" marks a binary file
			a, _ := strconv.Atoi(f[0])
			d, _ := strconv.Atoi(f[1])
			adds, dels = adds+a, dels+d
		}
	}
	if err != nil || one.ID != w.head || one.ShortID != w.head[:8] || one.Stats == nil ||
		one.Stats.Additions != int64(adds) || one.Stats.Deletions != int64(dels) || one.Stats.Total != int64(adds+dels) {
		t.Fatalf("single commit stats %+v (git says +%d -%d) %v", one.Stats, adds, dels, err)
	}
	if len(one.ParentIDs) != 1 || one.ParentIDs[0] != first {
		t.Fatalf("parents %v", one.ParentIDs)
	}
	resp2, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/commits/deadbeef", nil, nil)
	if resp2.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Commit Not Found"}` {
		t.Fatalf("unknown commit: %d %s", resp2.StatusCode, body)
	}
}

func TestBranchesAndTags(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.NewClient(t, "")
	br, _, err := c.Branches.ListBranches(w.project.ID, nil)
	if err != nil || len(br) != 2 || br[0].Name != "feature" || br[1].Name != "master" || br[1].Commit.ID != w.head {
		t.Fatalf("branches %+v %v", br, err)
	}
	one, _, err := c.Branches.GetBranch(w.project.ID, "master")
	if err != nil || one.Commit.ID != w.head || one.Protected {
		t.Fatalf("branch %+v %v", one, err)
	}
	tags, _, err := c.Tags.ListTags(w.project.ID, nil)
	if err != nil || len(tags) != 2 || tags[0].Name != "v2.0" || tags[1].Name != "v1.0" {
		t.Fatalf("tags must be in reverse name order: %+v %v", tags, err)
	}
	if tags[0].Message != "release two" || tags[0].Commit.ID != w.head {
		t.Fatalf("annotated tag %+v", tags[0])
	}
	var raw []map[string]any
	w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/tags", nil, &raw)
	if raw[1]["message"] != nil || raw[1]["release"] != nil {
		t.Fatalf("a lightweight tag has message null and release null: %v", raw[1])
	}
	for path, want := range map[string]string{
		"/repository/branches/nope": `{"message":"404 Branch Not Found"}`,
		"/repository/tags/nope":     `{"message":"404 Tag Not Found"}`,
	} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+path, nil, nil)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != want {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// A private project's repository is not readable by others (404, as the
// project itself), and an empty repository reads as empty, never 500.
func TestPrivateAndEmpty(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PrivateVisibility)
	id := store.IDString(w.project.ID)
	for _, path := range []string{"/repository/tree", "/repository/commits", "/repository/branches", "/repository/tags"} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+id+path, nil, nil)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Project Not Found"}` {
			t.Errorf("anonymous %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if _, _, err := w.s.Client.Repositories.ListTree(w.project.ID, nil); err != nil {
		t.Fatalf("the owner reads it: %v", err)
	}
	empty, _, err := w.s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("empty")})
	if err != nil {
		t.Fatal(err)
	}
	eid := store.IDString(empty.ID)
	for path, wantStatus := range map[string]int{"/repository/tree": 404, "/repository/commits": 200, "/repository/branches": 200, "/repository/tags": 200, "/repository/commits/master": 404} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+eid+path, nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
		if resp.StatusCode != wantStatus || (wantStatus == 200 && strings.TrimSpace(string(body)) != "[]") {
			t.Errorf("empty %s: %d %s", path, resp.StatusCode, body)
		}
	}
}

func waitABit() { time.Sleep(20 * time.Millisecond) }
