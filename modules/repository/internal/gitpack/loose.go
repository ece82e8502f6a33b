package gitpack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Loose objects: objects/ab/cdef..., a zlib stream of "type size\0data".

func (s *Store) loosePath(h Hash) string {
	x := h.String()
	return filepath.Join(s.objDir, x[:2], x[2:])
}

func (s *Store) hasLoose(h Hash) bool {
	_, err := os.Lstat(s.loosePath(h))
	return err == nil
}

type looseReader struct {
	zr io.ReadCloser
	br bytes.Reader
}

var looseReaders = sync.Pool{New: func() any { return new(looseReader) }}

// maxDeflateRatio bounds how much a deflate stream can inflate (a little
// over 1032:1), so a declared size beyond it is a lie.
const maxDeflateRatio = 1040

// readLoose reads a loose object; os.ErrNotExist when there is none.
func (s *Store) readLoose(h Hash) (Type, []byte, error) {
	if t, data, ok := s.loose.get(h); ok {
		return t, data, nil
	}
	raw, err := os.ReadFile(s.loosePath(h))
	if err != nil {
		return 0, nil, err
	}
	t, data, err := parseLoose(raw)
	if err != nil {
		return 0, nil, fmt.Errorf("gitpack: loose object %s: %w", h, err)
	}
	if t != Blob {
		s.loose.put(h, t, data)
	}
	return t, data, nil
}

// looseCache keeps loose commits, trees and tags once read. The API writes
// its commits loose, and a burst of requests about one new commit (statuses
// from CI, comments) would otherwise read and inflate the same file each
// time. Objects are immutable by id, so an entry never goes stale; a full
// cache drops an arbitrary entry (Go's map order), which is enough for a
// cache this small.
type looseCache struct {
	mu    sync.Mutex
	m     map[Hash]looseEntry
	bytes int
}

type looseEntry struct {
	typ  Type
	data []byte
}

const (
	looseCacheBytes     = 4 << 20
	looseCacheMaxObject = 64 << 10
)

func (c *looseCache) get(h Hash) (Type, []byte, bool) {
	c.mu.Lock()
	e, ok := c.m[h]
	c.mu.Unlock()
	return e.typ, e.data, ok
}

func (c *looseCache) put(h Hash, t Type, data []byte) {
	if len(data) > looseCacheMaxObject {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[Hash]looseEntry)
	}
	if _, ok := c.m[h]; ok {
		return
	}
	for k, e := range c.m {
		if c.bytes+len(data) <= looseCacheBytes {
			break
		}
		delete(c.m, k)
		c.bytes -= len(e.data)
	}
	c.m[h] = looseEntry{typ: t, data: data}
	c.bytes += len(data)
}

// parseLoose inflates a loose object file.
func parseLoose(raw []byte) (Type, []byte, error) {
	lr := looseReaders.Get().(*looseReader)
	defer looseReaders.Put(lr)
	lr.br.Reset(raw)
	if err := resetZlib(&lr.zr, &lr.br); err != nil {
		return 0, nil, err
	}
	// The header is short: read until its NUL.
	var hdr [64]byte
	n := 0
	nul := -1
	for nul < 0 && n < len(hdr) {
		m, err := lr.zr.Read(hdr[n:])
		if i := bytes.IndexByte(hdr[n:n+m], 0); i >= 0 {
			nul = n + i
		}
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, inflateErr(err)
		}
	}
	if nul < 0 {
		return 0, nil, errors.New("bad header")
	}
	t, size, err := parseLooseHeader(hdr[:nul], int64(len(raw)))
	if err != nil {
		return 0, nil, err
	}
	data := make([]byte, size)
	got := copy(data, hdr[nul+1:n])
	if n-(nul+1) > len(data) {
		return 0, nil, errors.New("object larger than its header says")
	}
	if _, err := io.ReadFull(lr.zr, data[got:]); err != nil {
		return 0, nil, inflateErr(err)
	}
	var one [1]byte
	for {
		m, err := lr.zr.Read(one[:])
		if m > 0 {
			return 0, nil, errors.New("object larger than its header says")
		}
		if err == io.EOF {
			return t, data, nil
		}
		if err != nil {
			return 0, nil, inflateErr(err)
		}
	}
}

// parseLooseHeader parses "type size" (without its NUL) of a loose object
// whose file has fileSize bytes: a size the file cannot inflate to is a lie.
func parseLooseHeader(hdr []byte, fileSize int64) (Type, int64, error) {
	sp := bytes.IndexByte(hdr, ' ')
	if sp < 0 {
		return 0, 0, errors.New("bad header")
	}
	t := typeByName(string(hdr[:sp]))
	if t == 0 {
		return 0, 0, fmt.Errorf("bad type %q", hdr[:sp])
	}
	size, err := strconv.ParseInt(string(hdr[sp+1:]), 10, 64)
	if err != nil || size < 0 || size > fileSize*maxDeflateRatio+64 {
		return 0, 0, errors.New("bad size")
	}
	return t, size, nil
}

func typeByName(s string) Type {
	switch s {
	case "commit":
		return Commit
	case "tree":
		return Tree
	case "blob":
		return Blob
	case "tag":
		return Tag
	}
	return 0
}
