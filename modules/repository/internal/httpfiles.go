package internal

// The HTTP adapter of files.go: routes, request inputs, GitLab views and
// status codes; the service side stays in files.go.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// findFile resolves ref and a file path in it: 404 File Not Found for
// anything unknown, a directory, a submodule, or a hostile path. Only
// trees are read: the blob's content is for the caller to stream.
func (rd *Reader) findFile(ctx context.Context, in *fileInput) (*fileAt, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	notFound := api.NotFound("File")
	p, ok := cleanTreePath(in.FilePath)
	if !ok || p == "" {
		return nil, notFound
	}
	c, err := resolveCommit(repo, in.Ref, info.DefaultBranch)
	if err != nil {
		return nil, notFound
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	e, err := t.FindEntry(p)
	if err != nil || e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
		return nil, notFound
	}
	return &fileAt{projectID: info.ID, repo: repo, commit: c, path: p, blob: e.Hash}, nil
}

func (rd *Reader) file(ctx context.Context, in *fileInput) (*struct{ Body *FileView }, error) {
	f, err := rd.findFile(ctx, in)
	if err != nil {
		return nil, err
	}
	raw, err := rd.readInline(ctx, f.projectID, f.blob, "File")
	if isMissing(err) {
		return nil, api.NotFound("File")
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	return &struct{ Body *FileView }{Body: &FileView{
		FileName: path.Base(f.path), FilePath: f.path, Size: int64(len(raw)), Encoding: "base64", Content: encodeBase64(raw),
		ContentSHA256: hex.EncodeToString(sum[:]), Ref: in.Ref, BlobID: f.blob.String(), CommitID: f.commit.Hash.String(),
		LastCommitID: lastCommit(f.repo, f.commit, f.path),
	}}, nil
}

func (rd *Reader) registerFiles(a *api.API) {
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "repository-file", Method: http.MethodGet, Path: "/projects/{id}/repository/files/{file_path}",
		Tags: tags, Summary: "A file at a ref, Base64-encoded (at most 10 MiB)", Access: api.Public}, rd.file)
	api.Register(a, api.Op{ID: "repository-file-raw", Method: http.MethodGet, Path: "/projects/{id}/repository/files/{file_path}/raw",
		Tags: tags, Summary: "A file's raw bytes at a ref (streamed)", Access: api.Public}, func(ctx context.Context, in *fileInput) (*rawOutput, error) {
		f, err := rd.findFile(ctx, in)
		if err != nil {
			return nil, err
		}
		r, err := rd.openBlob(ctx, f.projectID, f.blob)
		if isMissing(err) {
			return nil, api.NotFound("File")
		}
		if err != nil {
			return nil, err
		}
		return rd.rawBlob(r)
	})
}

type fileInput struct {
	ProjectPath
	FilePath string `path:"file_path" doc:"URL-encoded path of the file"`
	Ref      string `query:"ref" required:"true" doc:"Branch, tag or commit"`
}
