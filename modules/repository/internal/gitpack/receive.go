package gitpack

// Receive: a pushed pack read into quarantine, its trailer checked, every
// object's id computed with collision detection, indexed, and a thin pack
// completed (receivedelta.go); the input side is receiveinput.go, the
// quarantine incoming.go, the check before refs move connected.go.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/pjbgf/sha1cd"
)

// inEntry is one entry of a received pack.
type inEntry struct {
	off  int64
	size int64
	crc  uint32
	typ  Type  // stored type; after resolution the object's type
	obj  Type  // the object's type (0 until resolved)
	base int32 // ofs delta: the base's entry
	hash Hash  // once resolved
}

// receiver is one Receive in progress.
type receiver struct {
	s       *Store
	limit   int64
	dir     string
	f       *os.File
	entries []inEntry
	refs    map[int32]Hash // ref delta entry -> base id
	byHash  map[Hash]int32
	cache   *lru
	p       *pack // the received file, read back to resolve deltas
	thin    []Hash
	zr      io.ReadCloser
	scratch []byte
}

// Receive reads a pack from r into quarantine, checks its trailer, indexes
// it and completes a thin pack with the bases the Store has (appending
// them, as git index-pack --fix-thin does). An empty pack (a push of
// deletes only, or r at EOF) gives an Incoming with no objects.
func (s *Store) Receive(r io.Reader, opt ReceiveOptions) (*Incoming, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	lr := &limitedReader{r: r, max: opt.MaxBytes}
	in, err := s.receive(lr, opt)
	if lr.tooLarge {
		if in != nil {
			in.Discard()
		}
		return nil, ErrTooLarge
	}
	return in, err
}

func (s *Store) receive(r io.Reader, opt ReceiveOptions) (in *Incoming, err error) {
	// Nothing at all: a push of deletes only.
	var first [12]byte
	n, err := io.ReadFull(r, first[:])
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return &Incoming{s: s}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitpack: receive: pack header: %w", err)
	}
	if string(first[:4]) != "PACK" {
		return nil, errors.New("gitpack: receive: not a pack")
	}
	if v := binary.BigEndian.Uint32(first[4:]); v != 2 && v != 3 {
		return nil, fmt.Errorf("gitpack: receive: unsupported pack version %d", v)
	}
	count := binary.BigEndian.Uint32(first[8:])

	dir, err := os.MkdirTemp(s.objDir, "incoming-")
	if err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	rc := &receiver{s: s, dir: dir, limit: opt.MaxObjectBytes}
	if rc.limit <= 0 {
		rc.limit = 1 << 30
	}
	defer func() {
		if rc.f != nil {
			rc.f.Close()
		}
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	rc.f, err = os.OpenFile(filepath.Join(dir, "tmp_pack"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	trailer, err := rc.stream(io.MultiReader(bytes.NewReader(first[:]), r), count)
	if err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	if count == 0 {
		os.RemoveAll(dir)
		return &Incoming{s: s}, nil
	}
	if err := rc.resolve(); err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	objects := make([]Hash, len(rc.entries))
	var trees []Hash
	for i := range rc.entries {
		objects[i] = rc.entries[i].hash
		if rc.entries[i].obj == Tree {
			trees = append(trees, rc.entries[i].hash)
		}
	}
	if len(rc.thin) > 0 {
		if trailer, err = rc.completeThin(); err != nil {
			return nil, fmt.Errorf("gitpack: receive: %w", err)
		}
	}
	name := "pack-" + trailer.String()
	if err := rc.finish(trailer, name); err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	p, err := openPack(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("gitpack: receive: %w", err)
	}
	slices.SortFunc(objects, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	slices.SortFunc(trees, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	return &Incoming{s: s, dir: dir, name: name, objects: objects, trees: trees, p: p}, nil
}

// stream reads the pack's entries and trailer into the quarantine file,
// hashing the whole objects. It returns the trailer.
func (rc *receiver) stream(r io.Reader, count uint32) (Hash, error) {
	st := newStreamer(r, rc.f)
	rc.entries = make([]inEntry, 0, min(count, 1<<16))
	var hdr [12]byte
	if err := st.readFull(hdr[:]); err != nil {
		return Hash{}, err
	}
	oh := sha1cd.New().(collisionHash)
	var copyBuf [32 << 10]byte
	for i := uint32(0); i < count; i++ {
		st.flush()
		st.crc = 0
		off := st.off
		h, err := parseEntryHeader(st, off)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, err)
		}
		e := inEntry{off: off, size: h.size, typ: h.typ, base: -1}
		var w io.Writer = io.Discard
		switch h.typ {
		case OfsDelta, RefDelta:
			if h.size > rc.limit {
				return Hash{}, fmt.Errorf("entry %d at %d: delta of %d bytes exceeds the limit", i, off, h.size)
			}
		default:
			e.obj = h.typ
			oh.Reset()
			oh.Write(objectHeader(h.typ, h.size))
			w = oh
		}
		done, err := rc.inflateBuffered(st, h.size, w)
		if err != nil {
			return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, err)
		}
		if !done {
			// Big, or oddly compressed: stream it.
			if err := resetZlib(&rc.zr, st); err != nil {
				return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, err)
			}
			// Inflate at most size+1 bytes: more is an error, and so is less.
			m, err := io.CopyBuffer(w, io.LimitReader(rc.zr, h.size+1), copyBuf[:])
			if err != nil {
				return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, inflateErr(err))
			}
			if m != h.size {
				return Hash{}, fmt.Errorf("entry %d at %d: %d bytes inflated, header says %d", i, off, m, h.size)
			}
			if err := zlibEnd(rc.zr); err != nil {
				return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, err)
			}
		}
		st.flush()
		e.crc = st.crc
		switch h.typ {
		case OfsDelta:
			b, ok := slices.BinarySearchFunc(rc.entries, h.baseOff, func(e inEntry, off int64) int {
				return cmpInt64(e.off, off)
			})
			if !ok {
				return Hash{}, fmt.Errorf("entry %d at %d: no entry at its base offset %d", i, off, h.baseOff)
			}
			e.base = int32(b)
		case RefDelta:
			if rc.refs == nil {
				rc.refs = make(map[int32]Hash)
			}
			rc.refs[int32(len(rc.entries))] = h.baseHash
		default:
			sum, collision := oh.CollisionResistantSum(nil)
			if collision {
				return Hash{}, fmt.Errorf("entry %d at %d: %w", i, off, errCollision)
			}
			copy(e.hash[:], sum)
		}
		rc.entries = append(rc.entries, e)
	}
	st.flush()
	var want Hash
	copy(want[:], st.sum.Sum(nil))
	var got Hash
	if err := st.readFull(got[:]); err != nil {
		return Hash{}, fmt.Errorf("trailer: %w", err)
	}
	if got != want {
		return Hash{}, errors.New("pack checksum mismatch")
	}
	if eof, err := st.atEOF(); err != nil {
		return Hash{}, err
	} else if !eof {
		return Hash{}, errors.New("garbage after the pack")
	}
	st.flush()
	if st.err != nil {
		return Hash{}, st.err
	}
	if err := st.w.Flush(); err != nil {
		return Hash{}, err
	}
	return got, nil
}

// fastRecvMax bounds the entries inflated from the receive buffer in one
// go (the buffer holds any such entry's compressed data).
const fastRecvMax = 1 << 20

// inflateBuffered inflates a small entry's data straight from the
// stream's buffer into w. It reports false, consuming nothing, when the
// entry is to be streamed instead.
func (rc *receiver) inflateBuffered(st *streamer, size int64, w io.Writer) (bool, error) {
	if size > fastRecvMax {
		return false, nil
	}
	// Room for anything short of a pathological encoder.
	need := int(size + size/4 + 64)
	avail := st.ensure(need)
	if cap(rc.scratch) < int(size) {
		rc.scratch = make([]byte, size, max(size, 64<<10))
	}
	dst := rc.scratch[:size]
	n, err := inflateZlib(dst, avail)
	switch err {
	case nil:
		st.pos += n
		st.off += int64(n)
		w.Write(dst)
		return true, nil
	case errInflateShort:
		return false, nil // the streaming path tells truncation apart
	}
	return false, err
}

// zlibEnd checks that a zlib stream ends (with its checksum) here.
func zlibEnd(zr io.Reader) error {
	var one [1]byte
	for {
		m, err := zr.Read(one[:])
		if m > 0 {
			return errors.New("object larger than its header says")
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return inflateErr(err)
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func objectHeader(t Type, size int64) []byte {
	b := make([]byte, 0, 32)
	b = append(b, t.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, size, 10)
	return append(b, 0)
}

// collisionHash is SHA-1 with collision detection (sha1cd, as git's
// sha1dc): an object made by a known collision attack is refused.
type collisionHash interface {
	hash.Hash
	CollisionResistantSum([]byte) ([]byte, bool)
}

var errCollision = errors.New("gitpack: SHA-1 collision attack detected in an object")

// HashObject computes an object's id, refusing collision attacks.
func HashObject(t Type, data []byte) (Hash, error) {
	h := sha1cd.New().(collisionHash)
	h.Write(objectHeader(t, int64(len(data))))
	h.Write(data)
	sum, collision := h.CollisionResistantSum(nil)
	var out Hash
	copy(out[:], sum)
	if collision {
		return out, errCollision
	}
	return out, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// finish syncs the pack, writes its index and names both after the
// trailer.
func (rc *receiver) finish(trailer Hash, name string) error {
	if err := rc.f.Sync(); err != nil {
		return err
	}
	idx := make([]idxEntry, len(rc.entries))
	for i, e := range rc.entries {
		idx[i] = idxEntry{e.hash, e.off, e.crc}
	}
	base := filepath.Join(rc.dir, name)
	f, err := os.OpenFile(base+".idx", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := writeIndex(f, idx, trailer); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(filepath.Join(rc.dir, "tmp_pack"), base+".pack")
}
