package internal

// The HTTP adapter of archive.go: routes, request inputs, GitLab views and
// status codes; the service side stays in archive.go.

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (rd *Reader) registerArchive(a *api.API) {
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "repository-archive", Method: http.MethodGet, Path: "/projects/{id}/repository/archive",
		Tags: tags, Summary: "An archive of the repository at a commit (streamed)", Access: api.Public},
		func(ctx context.Context, in *archiveInput) (*archiveOutput, error) { return rd.archive(ctx, in, "") })
	for _, ext := range []string{"tar.gz", "tgz", "gz", "tar.bz2", "tbz", "tbz2", "tb2", "bz2", "tar", "zip"} {
		ext := ext
		api.Register(a, api.Op{ID: "repository-archive-" + strings.ReplaceAll(ext, ".", "-"), Method: http.MethodGet,
			Path: "/projects/{id}/repository/archive." + ext, Tags: tags, Summary: "An archive as ." + ext, Access: api.Public},
			func(ctx context.Context, in *archiveInput) (*archiveOutput, error) { return rd.archive(ctx, in, ext) })
	}
}

type archiveInput struct {
	ProjectPath
	SHA    string `query:"sha" doc:"Commit, branch or tag; default branch when empty"`
	Format string `query:"format" enum:"tar.gz,tgz,gz,tar.bz2,tbz,tbz2,tb2,bz2,tar,zip," doc:"tar.gz (default; also tgz, gz), tar.bz2 (also tbz, tbz2, tb2, bz2), tar or zip"`
}

type archiveOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               func(huma.Context)
}

// archive streams the tree of a commit as tar.gz, tar or zip, entries under
// a top directory "<project>-<ref>-<sha>", the same name as the file.
func (rd *Reader) archive(ctx context.Context, in *archiveInput, format string) (*archiveOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	if format == "" {
		format = in.Format
	}
	// GitLab 9.x took each of these spellings of the two compressed tars.
	switch format {
	case "", "tgz", "gz":
		format = "tar.gz"
	case "tbz", "tbz2", "tb2", "bz2":
		format = "tar.bz2"
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil {
		return nil, ErrCommitNotFound
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	ref := in.SHA
	if ref == "" {
		ref = info.DefaultBranch
	}
	objs, err := rd.store.Objects(info.ID)
	if err != nil {
		return nil, err
	}
	name := unsafeName.ReplaceAllString(info.Path+"-"+ref+"-"+c.Hash.String(), "-")
	ct := map[string]string{"tar.gz": "application/gzip", "tar.bz2": "application/x-bzip2", "tar": "application/x-tar", "zip": "application/zip"}[format]
	return &archiveOutput{
		ContentType:        ct,
		ContentDisposition: `attachment; filename="` + name + "." + format + `"`,
		Body: func(hctx huma.Context) {
			w := hctx.BodyWriter()
			// Errors after the first byte cannot change the status any more:
			// the archive is cut short and the client's unpacking fails.
			_ = writeArchive(hctx.Context(), w, objs, repo, tree, name, format, c)
		},
	}, nil
}
