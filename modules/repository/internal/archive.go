package internal

import (
	"archive/tar"
	"archive/zip"
	"context"
	"fmt"
	"io"
	"path"
	"regexp"

	"github.com/dsnet/compress/bzip2"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/klauspost/compress/gzip"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

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
