package gitpack

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zlib"
)

// pack is one open pack and its index. The pack file is mapped into
// memory for as long as the pack is referenced (by a snapshot or a
// reader), so a pack removed from disk keeps serving the readers that
// still hold it; the mapping goes once nothing references the pack.
// Whatever reads p.data keeps p alive until it is done (runtime.KeepAlive).
type pack struct {
	name string // pack-<sha>
	path string // of the .pack
	id   uint64 // cache key space
	data []byte // the whole file
	// private: mapped for one owner, who unmaps it (unmap)
	private bool
	size    int64
	idx     *index

	closed *closedInfo // from the .fennec sidecar, nil if none

	orderOnce sync.Once
	byOff     []uint32 // index positions sorted by offset
	offs      []int64  // offsets in that order

	scanOnce  sync.Once
	scanErr   error
	kinds     []Type          // by rank
	bases     []int32         // by rank: the base's rank in this pack, or -1
	refDeltas []refDeltaEntry // the ref deltas, by rank
}

type refDeltaEntry struct {
	rank uint32
	base Hash
}

var packIDs atomic.Uint64

const packTrailer = 20

// openPack opens base+".pack" with base+".idx".
func openPack(base string) (*pack, error) {
	x, err := openIndex(base + ".idx")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping stays
	p, err := newPack(f, x, true)
	if err != nil {
		return nil, fmt.Errorf("%s.pack: %w", base, err)
	}
	p.path = base + ".pack"
	// A sidecar that cannot be read only costs the shortcut it offers.
	p.closed, _ = readSidecar(base + ".fennec")
	return p, nil
}

// newPack maps f and checks its header and trailer against the index
// (x nil: no index, for a pack being received). A shared pack is unmapped
// by the runtime once unreachable; a private one (!shared) by its owner,
// with unmap.
func newPack(f *os.File, x *index, shared bool) (*pack, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < 12+packTrailer {
		return nil, errors.New("gitpack: pack truncated")
	}
	data, mapped, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("gitpack: map pack: %w", err)
	}
	p := &pack{id: packIDs.Add(1), data: data, size: size, idx: x}
	if mapped && shared {
		runtime.AddCleanup(p, unmapFile, data)
	}
	if mapped && !shared {
		p.private = true
	}
	if string(data[:4]) != "PACK" {
		return nil, errors.New("gitpack: not a pack file")
	}
	if v := binary.BigEndian.Uint32(data[4:]); v != 2 && v != 3 {
		return nil, fmt.Errorf("gitpack: unsupported pack version %d", v)
	}
	var sum Hash
	copy(sum[:], data[size-packTrailer:])
	p.name = "pack-" + sum.String()
	if x != nil {
		if n := binary.BigEndian.Uint32(data[8:]); int(n) != x.n {
			return nil, fmt.Errorf("gitpack: pack has %d objects, its index %d", n, x.n)
		}
		if sum != x.packSum {
			return nil, errors.New("gitpack: pack and index checksums differ")
		}
	}
	return p, nil
}

// unmap releases a private pack's mapping; p must not be used after.
func (p *pack) unmap() {
	if p.private {
		unmapFile(p.data)
		p.private = false
	}
	p.data = nil
}

var errTooBig = errors.New("gitpack: pack too large for this platform")

// order builds the offset-sorted view of the index: entry ends, and the
// index position of the entry at an offset.
func (p *pack) order() {
	p.orderOnce.Do(func() {
		n := p.idx.n
		type po struct {
			off int64
			pos uint32
		}
		tmp := make([]po, n)
		for i := range tmp {
			tmp[i] = po{p.idx.offset(i), uint32(i)}
		}
		slices.SortFunc(tmp, func(a, b po) int {
			switch {
			case a.off < b.off:
				return -1
			case a.off > b.off:
				return 1
			}
			return 0
		})
		p.byOff = make([]uint32, n)
		p.offs = make([]int64, n)
		for i, e := range tmp {
			p.byOff[i] = e.pos
			p.offs[i] = e.off
		}
	})
}

// rank returns the rank (position in offset order) of the entry at off.
func (p *pack) rank(off int64) (int, bool) {
	p.order()
	r, ok := slices.BinarySearch(p.offs, off)
	return r, ok
}

// end returns where the entry of rank r ends.
func (p *pack) end(r int) int64 {
	if r+1 < len(p.offs) {
		return p.offs[r+1]
	}
	return p.size - packTrailer
}

// scan reads every entry's header once (a sequential read of the whole
// pack) and records each entry's type and base.
func (p *pack) scan() error {
	p.scanOnce.Do(func() {
		p.order()
		n := len(p.offs)
		kinds := make([]Type, n)
		bases := make([]int32, n)
		var refs []refDeltaEntry
		defer runtime.KeepAlive(p)
		var br bytes.Reader
		for r, off := range p.offs {
			end := p.end(r)
			br.Reset(p.data[off:end])
			h, err := parseEntryHeader(&br, off)
			if err != nil {
				p.scanErr = fmt.Errorf("gitpack: %s: corrupt entry at %d", p.name, off)
				return
			}
			kinds[r] = h.typ
			bases[r] = -1
			switch h.typ {
			case OfsDelta:
				b, ok := p.rank(h.baseOff)
				if !ok {
					p.scanErr = fmt.Errorf("gitpack: %s: delta at %d has no base", p.name, off)
					return
				}
				bases[r] = int32(b)
			case RefDelta:
				refs = append(refs, refDeltaEntry{uint32(r), h.baseHash})
				if i, ok := p.idx.find(h.baseHash); ok {
					if b, ok := p.rank(p.idx.offset(i)); ok {
						bases[r] = int32(b)
					}
				}
			}
		}
		p.kinds, p.bases, p.refDeltas = kinds, bases, refs
	})
	return p.scanErr
}

// refBase returns the base id of the ref delta of rank r.
func (p *pack) refBase(r int) Hash {
	i, _ := slices.BinarySearchFunc(p.refDeltas, uint32(r), func(e refDeltaEntry, r uint32) int {
		return int(e.rank) - int(r)
	})
	return p.refDeltas[i].base
}

// entryHeader is a parsed pack entry header.
type entryHeader struct {
	typ      Type
	size     int64 // inflated size (of the delta, for deltas)
	baseOff  int64 // ofs delta: the base's offset
	baseHash Hash  // ref delta: the base's id
	hdrLen   int   // header length, base reference included
}

var errCorruptEntry = errors.New("gitpack: corrupt pack entry")

// parseEntryHeader reads an entry header at off from br.
func parseEntryHeader(br io.ByteReader, off int64) (entryHeader, error) {
	var h entryHeader
	c, err := br.ReadByte()
	if err != nil {
		return h, err
	}
	n := 1
	h.typ = Type(c >> 4 & 7)
	size := uint64(c & 15)
	shift := uint(4)
	for c&0x80 != 0 {
		if c, err = br.ReadByte(); err != nil {
			return h, err
		}
		n++
		if shift > 56 {
			return h, errCorruptEntry
		}
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	if size > 1<<62 {
		return h, errCorruptEntry
	}
	h.size = int64(size)
	switch h.typ {
	case Commit, Tree, Blob, Tag:
	case OfsDelta:
		if c, err = br.ReadByte(); err != nil {
			return h, err
		}
		n++
		d := uint64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return h, err
			}
			n++
			if d >= 1<<56 {
				return h, errCorruptEntry
			}
			d = (d+1)<<7 | uint64(c&0x7f)
		}
		if d == 0 || d > uint64(off-12) {
			return h, fmt.Errorf("gitpack: delta at %d has a bad base offset", off)
		}
		h.baseOff = off - int64(d)
	case RefDelta:
		for i := range h.baseHash {
			if h.baseHash[i], err = br.ReadByte(); err != nil {
				return h, err
			}
		}
		n += 20
	default:
		return h, fmt.Errorf("gitpack: entry at %d has bad type %d", off, h.typ)
	}
	h.hdrLen = n
	return h, nil
}

// appendEntryHeader appends the type-and-size header of an entry.
func appendEntryHeader(b []byte, t Type, size int64) []byte {
	c := byte(t)<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(b, c)
}

// appendOfs appends an ofs delta's base distance.
func appendOfs(b []byte, d int64) []byte {
	var tmp [10]byte
	i := len(tmp) - 1
	tmp[i] = byte(d & 0x7f)
	for d >>= 7; d > 0; d >>= 7 {
		d--
		i--
		tmp[i] = 0x80 | byte(d&0x7f)
	}
	return append(b, tmp[i:]...)
}

// entryReader inflates pack entries; pooled.
type entryReader struct {
	br   bytes.Reader
	rest []byte // from the entry's data to the pack's trailer
	zr   io.ReadCloser
}

var entryReaders = sync.Pool{New: func() any { return new(entryReader) }}

// open positions the reader at the entry at off and parses its header.
// The caller keeps p alive while it reads.
func (er *entryReader) open(p *pack, off int64) (entryHeader, error) {
	if off < 12 || off >= p.size-packTrailer {
		return entryHeader{}, fmt.Errorf("gitpack: entry offset %d out of range", off)
	}
	er.br.Reset(p.data[off : p.size-packTrailer])
	h, err := parseEntryHeader(&er.br, off)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		er.rest = p.data[off+int64(h.hdrLen) : p.size-packTrailer]
	}
	return h, err
}

// maxFastInflate bounds the objects inflated in one go into a buffer of
// their declared size; larger ones stream (and grow as data comes).
const maxFastInflate = 256 << 20

// inflate inflates the entry's data, which must be exactly size bytes.
func (er *entryReader) inflate(size int64) ([]byte, error) {
	if size <= maxFastInflate && size <= int64(len(er.rest))*maxDeflateRatio {
		dst := make([]byte, size)
		if _, err := inflateZlib(dst, er.rest); err != nil {
			return nil, err
		}
		return dst, nil
	}
	return inflateFrom(&er.zr, &er.br, size, 0)
}

func (er *entryReader) release() {
	er.br.Reset(nil)
	er.rest = nil
	entryReaders.Put(er)
}

// inflateFrom inflates a zlib stream from src that must hold exactly size
// bytes. It allocates as data arrives rather than by the declared size
// beyond 1 MiB; limit (if > 0) bounds size.
func inflateFrom(zp *io.ReadCloser, src io.Reader, size, limit int64) ([]byte, error) {
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("gitpack: object of %d bytes exceeds the limit", size)
	}
	if err := resetZlib(zp, src); err != nil {
		return nil, err
	}
	zr := *zp
	var buf []byte
	if size <= 1<<20 {
		buf = make([]byte, size)
		if _, err := io.ReadFull(zr, buf); err != nil {
			return nil, inflateErr(err)
		}
	} else {
		buf = make([]byte, 0, 1<<20)
		for int64(len(buf)) < size {
			if len(buf) == cap(buf) {
				c := int64(cap(buf)) * 2
				if c > size {
					c = size
				}
				buf = slices.Grow(buf, int(c)-len(buf))
			}
			m, err := zr.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+m]
			if err != nil {
				if err == io.EOF && int64(len(buf)) == size {
					break
				}
				return nil, inflateErr(err)
			}
		}
	}
	// The stream must end here (and its checksum match).
	var one [1]byte
	for {
		m, err := zr.Read(one[:])
		if m > 0 {
			return nil, errors.New("gitpack: object larger than its header says")
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, inflateErr(err)
		}
	}
}

func inflateErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("gitpack: object smaller than its header says, or truncated")
	}
	return fmt.Errorf("gitpack: inflate: %w", err)
}

func resetZlib(zp *io.ReadCloser, src io.Reader) error {
	if *zp == nil {
		zr, err := zlib.NewReader(src)
		if err != nil {
			return fmt.Errorf("gitpack: inflate: %w", err)
		}
		*zp = zr
		return nil
	}
	if err := (*zp).(zlib.Resetter).Reset(src, nil); err != nil {
		return fmt.Errorf("gitpack: inflate: %w", err)
	}
	return nil
}
