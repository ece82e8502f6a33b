package repository_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestCommitComments(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	// Rule 1: the full sha, a path, an existing line and line_type new: a line comment.
	lc, resp, err := c.Commits.PostCommitComment(w.project.ID, w.head, &gitlab.PostCommitCommentOptions{
		Note: gitlab.Ptr("nice line"), Path: gitlab.Ptr("README.md"), Line: gitlab.Ptr(int64(2)), LineType: gitlab.Ptr("new")})
	if err != nil || resp.StatusCode != 201 || lc.Note != "nice line" || lc.Path != "README.md" || lc.Line != 2 || lc.LineType != "new" || lc.Author.Username != "root" {
		t.Fatalf("line comment %+v %v", lc, err)
	}
	// Rule 2: a branch name, or a line or path that does not exist: on the commit, nulls.
	id := store.IDString(w.project.ID)
	for _, q := range []string{
		"/repository/commits/master/comments?note=on+branch&path=README.md&line=1&line_type=new",
		"/repository/commits/" + w.head + "/comments?note=bad+line&path=README.md&line=99&line_type=new",
		"/repository/commits/" + w.head + "/comments?note=bad+path&path=nope.md&line=1&line_type=new",
		"/repository/commits/" + w.head + "/comments?note=plain",
	} {
		var got map[string]any
		r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+id+q, nil, &got, "PRIVATE-TOKEN", w.s.RootToken)
		if r.StatusCode != 201 || got["path"] != nil || got["line"] != nil || got["line_type"] != nil {
			t.Errorf("%s: %d %s", q, r.StatusCode, raw)
		}
	}
	list, resp, err := w.s.NewClient(t, "").Commits.GetCommitComments(w.project.ID, w.head, nil)
	if err != nil || len(list) != 5 || resp.Header.Get("X-Total") != "5" || list[0].Note != "nice line" {
		t.Fatalf("list %d %v", len(list), err)
	}
	if r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+id+"/repository/commits/"+w.head+"/comments?note=x", nil, nil); r.StatusCode != 401 {
		t.Fatalf("anonymous comment: %d %s", r.StatusCode, raw)
	}
	if r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+id+"/repository/commits/"+w.head+"/comments", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 400 ||
		strings.TrimSpace(string(raw)) != `{"error":"note is missing"}` {
		t.Fatalf("missing note: %d %s", r.StatusCode, raw)
	}
}
