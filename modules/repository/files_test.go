package repository_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestFilesAPI(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.NewClient(t, "")
	f, _, err := c.RepositoryFiles.GetFile(w.project.ID, "docs/guide/intro.md", &gitlab.GetFileOptions{Ref: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := base64.StdEncoding.DecodeString(f.Content)
	sum := sha256.Sum256(dec)
	first := gitCmd(t, w.work, "rev-parse", "HEAD~1")
	if string(dec) != "intro\n" || f.FileName != "intro.md" || f.FilePath != "docs/guide/intro.md" || f.Encoding != "base64" ||
		f.BlobID != gitCmd(t, w.work, "rev-parse", "HEAD:docs/guide/intro.md") || f.CommitID != w.head ||
		f.LastCommitID != first || f.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("file %+v (last commit should be %s)", f, first)
	}
	raw, _, err := c.RepositoryFiles.GetRawFile(w.project.ID, "README.md", &gitlab.GetRawFileOptions{Ref: gitlab.Ptr("v1.0")})
	if err != nil || string(raw) != "hello\n" {
		t.Fatalf("raw at v1.0 %q %v", raw, err)
	}
	for _, bad := range []string{"nope.md", "docs", "docs%2F..%2F..%2Fetc%2Fpasswd", "..%2FREADME.md", "%2E%2E"} {
		resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/files/"+bad+"?ref=master", nil, nil)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 File Not Found"}` {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/files/README.md", nil, nil)
	if resp.StatusCode != 400 || strings.TrimSpace(string(body)) != `{"error":"ref is missing"}` {
		t.Fatalf("missing ref: %d %s", resp.StatusCode, body)
	}
}
