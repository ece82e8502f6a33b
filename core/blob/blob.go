package blob

// The contract: what a Store promises, its errors and its keys.

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Store keeps objects under keys. Every method that writes is durable when
// it returns nil: a node that dies afterwards loses nothing it was told
// was written.
type Store interface {
	// Put stores what r yields as key's object, replacing the one there.
	// It is atomic: a reader sees the old object or the new one, never a
	// part; when r (or the write) fails, or ctx ends, nothing changes.
	Put(ctx context.Context, key string, r io.Reader) (size int64, err error)
	// Create is Put for a key that has no object yet: ErrExist when it
	// has one, which then stays as it was (two nodes making one host key:
	// the first wins, the second reads it).
	Create(ctx context.Context, key string, r io.Reader) (size int64, err error)
	// Append adds data at offset, which must be the object's size (0 for
	// an absent object, which it makes): a job's trace as it grows. Any
	// other offset is refused with ErrOffset and the object's size. It
	// returns the size after the write.
	Append(ctx context.Context, key string, offset int64, data []byte) (size int64, err error)
	// Open reads key's object as it is now: an object appended to later
	// is read up to the size it had here. ErrNotFound when there is none.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes key's object; an absent one is no error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every object under the prefix (a key's
	// leading segments: "uploads/7" removes "uploads/7/a/b", not
	// "uploads/70/c").
	DeletePrefix(ctx context.Context, prefix string) error
	// List returns the objects under the prefix (as DeletePrefix reads
	// it), ordered by key.
	List(ctx context.Context, prefix string) ([]Entry, error)
}

// Object is an object opened for reading: ranges through Seek or ReadAt
// (a zip archive is read by its directory at the end).
type Object interface {
	io.ReadSeekCloser
	io.ReaderAt
	// Size is the object's size when it was opened.
	Size() int64
	// ModTime is when it was last written (Last-Modified of a download).
	ModTime() time.Time
}

// Entry is an object as List finds it.
type Entry struct {
	Key  string
	Size int64
}

// Sentinel errors, tested with errors.Is.
var (
	ErrNotFound   = errors.New("blob: no such object")
	ErrExist      = errors.New("blob: the object exists")
	ErrOffset     = errors.New("blob: append at an offset that is not the object's size")
	ErrInvalidKey = errors.New("blob: invalid key")
)

// maxKeyBytes bounds a key: S3's limit, and far above any path Fennec makes.
const maxKeyBytes = 1024

// CheckKey says whether key is one a Store accepts: slash-separated,
// relative, without empty, "." or ".." segments, without NUL or
// backslash, valid UTF-8, and with no segment that begins with a dot
// (hidden names are the implementation's own: temporary files). Nothing
// that passes can name a place outside the store.
func CheckKey(key string) error {
	if key == "" || len(key) > maxKeyBytes || !utf8.ValidString(key) || strings.ContainsAny(key, "\\\x00") {
		return invalid(key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg[0] == '.' {
			return invalid(key)
		}
	}
	return nil
}

func invalid(key string) error {
	return &KeyError{Key: key}
}

// KeyError is ErrInvalidKey with the key refused.
type KeyError struct{ Key string }

func (e *KeyError) Error() string { return ErrInvalidKey.Error() + " " + quote(e.Key) }
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return `"` + strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", `\0`), "?") + `"`
}

// OffsetError is ErrOffset with the object's size, which the caller
// answers with (a runner told where to resume).
type OffsetError struct{ Size int64 }

func (e *OffsetError) Error() string { return ErrOffset.Error() }
func (e *OffsetError) Unwrap() error { return ErrOffset }

// SizeOf is the size of key's object: 0 and no error when there is none
// (a job's trace not begun).
func SizeOf(ctx context.Context, s Store, key string) (int64, error) {
	o, err := s.Open(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	size := o.Size()
	return size, o.Close()
}
