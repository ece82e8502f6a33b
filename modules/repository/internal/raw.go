package internal

// Blob content is read through the project's gitpack.Store, never through
// go-git's blob objects: go-git inflates a whole blob into memory (twice,
// with its cache), so a 400 MB blob of zeros, pushed as a few hundred KB
// of pack, cost about 1.5 GB per anonymous download. A Stream inflates as
// the response is written; the JSON endpoints learn the size from the
// object's header and refuse large blobs before reading any content.

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// maxInlineBlob bounds the blobs the JSON endpoints (blobs/:sha,
// files/:path) return inline as Base64: about 13 MiB of JSON, built in
// memory. GitLab's blob viewer stops at the same 10 MiB; anything larger
// is for the raw endpoints, which stream.
const maxInlineBlob = 10 << 20

// errNotBlob: the object exists but is not a blob.
var errNotBlob = errors.New("repository: not a blob")

// openBlob opens blob h of a project for streaming; gitpack.ErrNotFound
// or errNotBlob when there is no such blob.
func (rd *Reader) openBlob(ctx context.Context, projectID int64, h plumbing.Hash) (*gitpack.ObjectReader, error) {
	objs, err := rd.store.Objects(projectID)
	if err != nil {
		return nil, err
	}
	r, err := objs.Stream(ctx, h)
	if err != nil {
		return nil, err
	}
	if r.Type != gitpack.Blob {
		r.Close()
		return nil, errNotBlob
	}
	return r, nil
}

// isMissing tells a missing object (a 404) from a failure to read one.
func isMissing(err error) bool {
	return errors.Is(err, gitpack.ErrNotFound) || errors.Is(err, errNotBlob)
}

// readInline reads a whole blob for a JSON endpoint: refused (400) over
// maxInlineBlob before any content is read.
func (rd *Reader) readInline(ctx context.Context, projectID int64, h plumbing.Hash, what string) ([]byte, error) {
	r, err := rd.openBlob(ctx, projectID, h)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size > maxInlineBlob {
		return nil, tooLargeInline(what, r.Size)
	}
	buf := make([]byte, r.Size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("repository: read blob %s: %w", h, err)
	}
	return buf, nil
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// BlobView is GET /repository/blobs/:sha.
type BlobView struct {
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
	SHA      string `json:"sha"`
}

// sniffBytes is how much of a blob decides text or binary, as git does.
const sniffBytes = 8000

// rawBlob streams an open blob (and closes it): text as text/plain,
// anything else (a NUL in the first 8000 bytes, as git decides) as
// application/octet-stream; never sniffed by browsers. Only the first
// 8000 bytes are held; the rest is inflated as it is written.
func (rd *Reader) rawBlob(r *gitpack.ObjectReader) (*rawOutput, error) {
	head := make([]byte, min(sniffBytes, r.Size))
	if _, err := io.ReadFull(r, head); err != nil {
		r.Close()
		return nil, err
	}
	ct := "application/octet-stream"
	if !bytes.Contains(head, []byte{0}) && utf8.Valid(trimPartialRune(head)) {
		ct = "text/plain; charset=utf-8"
	}
	size := r.Size
	return &rawOutput{ContentType: ct, ContentLength: strconv.FormatInt(size, 10), NoSniff: "nosniff", Body: func(ctx huma.Context) {
		defer r.Close()
		w := ctx.BodyWriter()
		if _, err := w.Write(head); err != nil {
			return
		}
		// Past the first byte the status cannot change: a read error cuts
		// the body short of its Content-Length, which clients notice.
		src := &errReader{r: r}
		if _, err := io.Copy(w, src); err != nil && src.err != nil {
			rd.store.log.Warn("blob read failed while streaming", zap.Error(src.err))
		}
	}}, nil
}

// errReader remembers its reader's error (to tell it from the client's).
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of a prefix.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}
