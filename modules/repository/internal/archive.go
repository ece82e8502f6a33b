package internal

import (
	"archive/tar"
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/dsnet/compress/bzip2"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/klauspost/compress/gzip"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

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

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

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

// writeArchive writes the archive. Blobs stream from the object store
// (see raw.go): an archive holds one file's content in memory at no point,
// whatever its size.
func writeArchive(ctx context.Context, w io.Writer, objs *gitpack.Store, repo *git.Repository, tree *object.Tree, top, format string, c *object.Commit) error {
	// each opens a file's blob and hands it to fn.
	each := func(fn func(p string, mode filemode.FileMode, blob *gitpack.ObjectReader) error) error {
		return walkFiles(repo, tree, "", func(p string, mode filemode.FileMode, h plumbing.Hash) error {
			r, err := objs.Stream(ctx, h)
			if err != nil {
				return err
			}
			defer r.Close()
			if r.Type != gitpack.Blob {
				return fmt.Errorf("archive: %s is a %s, not a blob", h, r.Type)
			}
			return fn(p, mode, r)
		})
	}
	switch format {
	case "zip":
		zw := zip.NewWriter(w)
		if err := each(func(p string, mode filemode.FileMode, blob *gitpack.ObjectReader) error {
			hdr := &zip.FileHeader{Name: path.Join(top, p), Method: zip.Deflate, Modified: c.Committer.When}
			fm, _ := mode.ToOSFileMode()
			hdr.SetMode(fm)
			out, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, blob)
			return err
		}); err != nil {
			return err
		}
		return zw.Close()
	default:
		var out io.Writer = w
		var compressor io.WriteCloser
		switch format {
		case "tar.gz":
			compressor = gzip.NewWriter(w)
		case "tar.bz2":
			bz, err := bzip2.NewWriter(w, &bzip2.WriterConfig{Level: bzip2.DefaultCompression})
			if err != nil {
				return err
			}
			compressor = bz
		}
		if compressor != nil {
			out = compressor
		}
		tw := tar.NewWriter(out)
		if err := each(func(p string, mode filemode.FileMode, blob *gitpack.ObjectReader) error {
			hdr := &tar.Header{Name: path.Join(top, p), Size: blob.Size, ModTime: c.Committer.When, Mode: 0o644, Format: tar.FormatPAX}
			switch mode {
			case filemode.Executable:
				hdr.Mode = 0o755
			case filemode.Symlink:
				target, err := io.ReadAll(io.LimitReader(blob, 4096))
				if err != nil {
					return err
				}
				hdr.Typeflag, hdr.Linkname, hdr.Size, hdr.Mode = tar.TypeSymlink, string(target), 0, 0o777
				return tw.WriteHeader(hdr)
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err := io.Copy(tw, blob)
			return err
		}); err != nil {
			return err
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if compressor != nil {
			return compressor.Close()
		}
		return nil
	}
}

// walkFiles calls fn for every file of the tree (submodules are skipped: an
// archive holds no other repository's content).
func walkFiles(repo *git.Repository, t *object.Tree, prefix string, fn func(string, filemode.FileMode, plumbing.Hash) error) error {
	for _, e := range t.Entries {
		p := path.Join(prefix, e.Name)
		switch e.Mode {
		case filemode.Dir:
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return err
			}
			if err := walkFiles(repo, sub, p, fn); err != nil {
				return err
			}
		case filemode.Submodule:
		default:
			if err := fn(p, e.Mode, e.Hash); err != nil {
				return err
			}
		}
	}
	return nil
}

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
