package internal

// The HTTP adapter of raw.go: routes, request inputs, GitLab views and
// status codes; the service side stays in raw.go.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// tooLargeInline is the 400 of a JSON endpoint asked for a blob over
// maxInlineBlob (what is "Blob" or "File").

// findBlob resolves :sha to a blob of the project: a full id, or an
// abbreviation of at least 4 hex digits that names one object only, found
// in the pack indexes without reading any object. Anything else, or an
// object that is no blob, is 404 Blob Not Found.
func (rd *Reader) findBlob(ctx context.Context, id, sha string) (int64, plumbing.Hash, error) {
	info, err := rd.access.Require(ctx, id, projects.ReadCode)
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	notFound := api.NotFound("Blob")
	sha = strings.ToLower(sha)
	if len(sha) < 4 || len(sha) > 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return 0, plumbing.ZeroHash, notFound
	}
	if len(sha) == 40 {
		return info.ID, plumbing.NewHash(sha), nil
	}
	objs, err := rd.store.Objects(info.ID)
	if err != nil {
		return 0, plumbing.ZeroHash, err
	}
	found := objs.Prefix(sha, 2)
	if len(found) != 1 {
		return 0, plumbing.ZeroHash, notFound
	}
	return info.ID, found[0], nil
}

func (rd *Reader) registerBlobs(a *api.API) {
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "repository-blob", Method: http.MethodGet, Path: "/projects/{id}/repository/blobs/{sha}", Tags: tags,
		Summary: "A blob, Base64-encoded (at most 10 MiB)", Access: api.Public}, func(ctx context.Context, in *blobInput) (*struct{ Body *BlobView }, error) {
		pid, h, err := rd.findBlob(ctx, in.ID, in.SHA)
		if err != nil {
			return nil, err
		}
		raw, err := rd.readInline(ctx, pid, h, "Blob")
		if isMissing(err) {
			return nil, api.NotFound("Blob")
		}
		if err != nil {
			return nil, err
		}
		return &struct{ Body *BlobView }{Body: &BlobView{Size: int64(len(raw)), Encoding: "base64", Content: encodeBase64(raw), SHA: h.String()}}, nil
	})
	api.Register(a, api.Op{ID: "repository-blob-raw", Method: http.MethodGet, Path: "/projects/{id}/repository/blobs/{sha}/raw", Tags: tags,
		Summary: "A blob's raw bytes (streamed)", Access: api.Public}, func(ctx context.Context, in *blobInput) (*rawOutput, error) {
		pid, h, err := rd.findBlob(ctx, in.ID, in.SHA)
		if err != nil {
			return nil, err
		}
		r, err := rd.openBlob(ctx, pid, h)
		if isMissing(err) {
			return nil, api.NotFound("Blob")
		}
		if err != nil {
			return nil, err
		}
		return rd.rawBlob(r)
	})
}

type blobInput struct {
	ProjectPath
	SHA string `path:"sha"`
}

type rawOutput struct {
	ContentType   string `header:"Content-Type"`
	ContentLength string `header:"Content-Length"`
	NoSniff       string `header:"X-Content-Type-Options"`
	Body          func(huma.Context)
}

// rawBlob streams an open blob (and closes it): text as text/plain,
// anything else (a NUL in the first 8000 bytes, as git decides) as
// application/octet-stream; never sniffed by browsers. Only the first
// 8000 bytes are held; the rest is inflated as it is written.
func (rd *Reader) rawBlob(r *gitpack.ObjectReader) (*rawOutput, error) {
	head, ct, err := sniffBlob(r)
	if err != nil {
		r.Close()
		return nil, err
	}
	size := r.Size
	return &rawOutput{ContentType: ct, ContentLength: strconv.FormatInt(size, 10), NoSniff: "nosniff", Body: func(ctx huma.Context) {
		defer r.Close()
		rd.streamBlob(ctx.BodyWriter(), r, head)
	}}, nil
}

// sniffBlob reads the first 8000 bytes of an open blob and says what it
// is: "text/plain; charset=utf-8", or "application/octet-stream" for a NUL
// in them (as git decides) or bytes that are not UTF-8.
func sniffBlob(r *gitpack.ObjectReader) (head []byte, contentType string, err error) {
	head = make([]byte, min(sniffBytes, r.Size))
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, "", err
	}
	ct := "application/octet-stream"
	if !bytes.Contains(head, []byte{0}) && utf8.Valid(trimPartialRune(head)) {
		ct = "text/plain; charset=utf-8"
	}
	return head, ct, nil
}

// streamBlob writes head (what sniffBlob read) and the rest of r to w,
// inflating as it writes.
func (rd *Reader) streamBlob(w io.Writer, r *gitpack.ObjectReader, head []byte) {
	if _, err := w.Write(head); err != nil {
		return
	}
	// Past the first byte the status cannot change: a read error cuts
	// the body short of its Content-Length, which clients notice.
	src := &errReader{r: r}
	if _, err := io.Copy(w, src); err != nil && src.err != nil {
		rd.store.log.Warn("blob read failed while streaming", zap.Error(src.err))
	}
}
