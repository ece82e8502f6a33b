package ci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// What CI reads of a repository, pushed with the real git: the CI file at
// a commit (bounded: a huge one is refused unread), the head of a branch
// or a tag (a branch first; an annotated tag leads to its commit, a tag of
// a tree to no CI file), for a push, the API's pipeline and the project's
// lint alike. The reads went through go-git's repository before issue 36,
// through gitread since. A lightweight tag of a tree was taken for a
// commit before: a 500 from the API and lint, and a push event retried
// forever.
func TestRefsAndCIFileReads(t *testing.T) {
	t.Parallel()
	var bus *events.Bus
	s := startRunners(t, fennectest.WithExtract(&bus))
	c := s.Client
	p := stocktest.NewProject(t, c, "heads-and-tags", "private")
	w := newGitWork(t, s, p)
	const ci = "build:\n  script: [echo build]\n"
	head := w.commit(t, "first", map[string]string{".gitlab-ci.yml": ci})
	runGit(t, w.dir, "tag", "light")
	runGit(t, w.dir, "tag", "-a", "-m", "annotated", "annot")
	runGit(t, w.dir, "tag", "treetag", "HEAD^{tree}")
	runGit(t, w.dir, "branch", "both")
	w.push(t, "master", "both")
	w.push(t, "--tags")
	other := w.commit(t, "second", map[string]string{"README": "x\n"})
	runGit(t, w.dir, "tag", "both")
	runGit(t, w.dir, "checkout", "-q", "-b", "huge")
	hugeCI := "j:\n  script: [echo]\n# " + strings.Repeat("x", 1<<20) + "\n"
	huge := w.commit(t, "huge", map[string]string{".gitlab-ci.yml": hugeCI})
	w.push(t, "master", "huge", "refs/tags/both")

	// Pushes: a pipeline at the commit of each tag, none for the tag of a
	// tree (and the pushes after it are handled still).
	for ref, sha := range map[string]string{"light": head, "annot": head, "master": other} {
		found := false
		for deadline := time.Now().Add(20 * time.Second); !found && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			list, _, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr(ref)})
			if err != nil {
				t.Fatal(err)
			}
			for _, pl := range list {
				found = found || pl.SHA == sha
			}
		}
		if !found {
			t.Errorf("no pipeline of %s at %s", ref, sha)
		}
	}
	if pl := waitRefPipeline(t, c, p.ID, "huge", "failed"); pl.SHA != huge || pl.YamlErrors != "The CI configuration is too large: 1048577 bytes, the limit is 1048576 bytes" {
		t.Errorf("the huge CI file's pipeline: %s %q", pl.SHA, pl.YamlErrors)
	}
	awaited := true
	for deadline := time.Now().Add(10 * time.Second); awaited && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		err := s.Store.View(context.Background(), func(tx *store.Tx) error {
			var err error
			awaited, err = bus.Awaits(tx, "ci.pipeline_on_push", func(payload json.RawMessage) bool {
				return bytes.Contains(payload, []byte(`"refs/tags/treetag"`))
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if awaited {
		t.Errorf("the push of a tag of a tree is still waiting for CI")
	}
	if list, _, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr("treetag")}); err != nil || len(list) != 0 {
		t.Errorf("pipelines of a tag of a tree: %v %v", list, err)
	}

	// The API: a branch wins over a tag of its name.
	call := func(method, path string) (int, string) {
		code, _, raw := rawJSON(t, method, fmt.Sprintf("%s/api/v4/projects/%d/%s", s.URL, p.ID, path), nil, "PRIVATE-TOKEN", s.RootToken)
		return code, strings.TrimSpace(string(raw))
	}
	for _, tc := range []struct {
		ref  string
		code int
		want []string
	}{
		{"both", 201, []string{`"sha":"` + head + `","ref":"both",`, `"tag":false,`}},
		{"annot", 201, []string{`"sha":"` + head + `","ref":"annot",`, `"tag":true,`}},
		{"treetag", 400, []string{`{"message":{"base":["Missing .gitlab-ci.yml file"]}}`}},
		{"nowhere", 400, []string{`{"message":{"base":["Reference not found"]}}`}},
	} {
		code, raw := call(http.MethodPost, "pipeline?ref="+tc.ref)
		for _, want := range tc.want {
			if code != tc.code || !strings.Contains(raw, want) {
				t.Errorf("a pipeline of %s: %d %s, want %d %s", tc.ref, code, raw, tc.code, want)
			}
		}
	}
	for _, tc := range []struct {
		ref  string
		code int
		want string
	}{
		{"annot", 200, `{"valid":true,"errors":[],"warnings":[]}`},
		{"", 200, `{"valid":true,"errors":[],"warnings":[]}`},
		{"treetag", 404, `{"message":"404 Commit Not Found"}`},
		{"nowhere", 404, `{"message":"404 Commit Not Found"}`},
	} {
		if code, raw := call(http.MethodGet, "ci/lint?ref="+tc.ref); code != tc.code || raw != tc.want {
			t.Errorf("lint of %q: %d %s, want %d %s", tc.ref, code, raw, tc.code, tc.want)
		}
	}
}
