package internal

// Blob content is read through the project's gitpack.Store, never through
// go-git's blob objects: go-git inflates a whole blob into memory (twice,
// with its cache), so a 400 MB blob of zeros, pushed as a few hundred KB
// of pack, cost about 1.5 GB per anonymous download. A Stream inflates as
// the response is written; the JSON endpoints learn the size from the
// object's header and refuse large blobs before reading any content.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"

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

// tooLargeInline refuses a blob over maxInlineBlob for a JSON endpoint.
func tooLargeInline(what string, size int64) error {
	return invalid(fmt.Sprintf("400 Bad request - %s is too large to be returned as JSON (%d bytes, at most %d); use the raw endpoint",
		what, size, maxInlineBlob))
}
