package gitpack

// Streaming reads, for serving object content (raw blobs, archives)
// without holding it: a 400 MB blob of zeros is a few hundred KB of pack,
// and Read would inflate all of it into memory for each request.
//
//   - A whole (non-delta) packed object inflates from the mapped pack
//     straight to the reader, a buffer at a time. So does a loose object.
//   - A delta whose chain involves only objects up to memBytes (8 MiB) is
//     resolved in memory through the cache, as Read does: the common case,
//     bounded per request.
//   - A larger delta chain is resolved with bounded memory: the chain's
//     base and each intermediate result over memBytes go to a temporary
//     file (unlinked at once where the platform allows) beside objects/,
//     each delta is applied as it inflates, reading its base with ReadAt,
//     and the last delta is applied as the caller reads. At most maxSpills
//     of these run at once per Store, so concurrent requests cannot fill
//     the disk; others wait (or give up with their context).
//
// Every stream checks the sizes its headers declare and, at its end, the
// zlib checksums: a corrupt object is an error from Read, never content
// silently cut short.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zlib"
)

// defaultMemBytes bounds the objects a stream resolves in memory: the
// base and every result of a delta chain. Larger chains spill to disk.
const defaultMemBytes = 8 << 20

// maxSpills bounds the large delta chains one Store resolves through
// temporary files at once.
const maxSpills = 2

// ObjectReader streams one object's content. Type and Size are known when
// it is returned; the content is produced (and, for a large delta chain,
// resolved) as it is read. Close releases it. Not safe for concurrent use.
type ObjectReader struct {
	Type Type
	Size int64

	ctx   context.Context
	packs []*pack // read from: they stay mapped while the reader lives
	open  func(*ObjectReader) (io.Reader, error)
	r     io.Reader
	err   error
	// closers run at Close, last first (temporary files, a spill slot).
	closers []func()
}

// Read reads the object's content.
func (o *ObjectReader) Read(p []byte) (int, error) {
	if o.r == nil {
		if o.err != nil {
			return 0, o.err
		}
		if o.open == nil {
			return 0, io.EOF
		}
		r, err := o.open(o)
		if err != nil {
			o.err = err
			return 0, err
		}
		o.r = r
	}
	return o.r.Read(p)
}

// Close releases what the reader holds. It may be called more than once.
func (o *ObjectReader) Close() error {
	for i := len(o.closers) - 1; i >= 0; i-- {
		o.closers[i]()
	}
	o.closers = nil
	o.r, o.open, o.packs = nil, nil, nil
	if o.err == nil {
		o.err = errors.New("gitpack: object reader closed")
	}
	return nil
}

func (o *ObjectReader) onClose(f func()) { o.closers = append(o.closers, f) }

// Stream opens an object for reading its content a piece at a time. ctx
// bounds the wait for a spill slot and the resolution of a large delta
// chain; reading a whole object does not consult it.
func (s *Store) Stream(ctx context.Context, h Hash) (*ObjectReader, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	sn := s.snap.Load()
	for {
		o, err := s.streamIn(ctx, sn, h)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return o, err
		}
		if !s.refresh(sn) {
			return nil, err
		}
		sn = s.snap.Load()
	}
}

// Stat returns an object's type and size, reading only headers: of a
// delta, the first bytes of the top delta and the entry headers down its
// chain.
func (s *Store) Stat(h Hash) (Type, int64, error) {
	if s.closed.Load() {
		return 0, 0, ErrClosed
	}
	sn := s.snap.Load()
	for {
		t, size, err := s.statIn(sn, h)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return t, size, err
		}
		if !s.refresh(sn) {
			return 0, 0, err
		}
		sn = s.snap.Load()
	}
}

func (s *Store) statIn(sn *snapshot, h Hash) (Type, int64, error) {
	p, i, ok := sn.find(h)
	if !ok {
		t, size, err := s.statLoose(h)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: %s", ErrNotFound, h)
		}
		return t, size, err
	}
	off := p.idx.offset(i)
	er := entryReaders.Get().(*entryReader)
	defer er.release()
	size := int64(-1)
	for depth := 0; ; depth++ {
		if depth > maxChain {
			return 0, 0, errors.New("gitpack: delta chain loops or is too long")
		}
		if t, d, ok := s.cache.get(cacheKey{p.id, off}); ok {
			if size < 0 {
				size = int64(len(d))
			}
			return t, size, nil
		}
		hd, err := er.open(p, off)
		if err != nil {
			return 0, 0, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
		}
		if hd.typ < OfsDelta {
			if size < 0 {
				size = hd.size
			}
			return hd.typ, size, nil
		}
		if size < 0 {
			if _, size, err = er.deltaSizes(); err != nil {
				return 0, 0, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
			}
		}
		if hd.typ == OfsDelta {
			off = hd.baseOff
			continue
		}
		if q, o, ok := sn.locateBase(p, hd.baseHash); ok {
			p, off = q, o
			continue
		}
		t, _, err := s.statLoose(hd.baseHash)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%w: delta base %s", ErrNotFound, hd.baseHash)
		}
		return t, size, err
	}
}

// statLoose reads a loose object's header only.
func (s *Store) statLoose(h Hash) (Type, int64, error) {
	f, err := os.Open(s.loosePath(h))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	lr := looseReaders.Get().(*looseReader)
	defer looseReaders.Put(lr)
	if err := resetZlib(&lr.zr, bufio.NewReaderSize(f, 512)); err != nil {
		return 0, 0, err
	}
	var hdr [64]byte
	n := 0
	for n < len(hdr) {
		m, err := lr.zr.Read(hdr[n:])
		if i := bytes.IndexByte(hdr[n:n+m], 0); i >= 0 {
			t, size, err := parseLooseHeader(hdr[:n+i], st.Size())
			if err != nil {
				return 0, 0, fmt.Errorf("gitpack: loose object %s: %w", h, err)
			}
			return t, size, nil
		}
		n += m
		if err != nil {
			break
		}
	}
	return 0, 0, fmt.Errorf("gitpack: loose object %s: bad header", h)
}

// deltaSizes reads the two sizes at the start of the delta the reader was
// just opened at (see entryReader.open), inflating only its first bytes.
func (er *entryReader) deltaSizes() (src, dst int64, err error) {
	if err := resetZlib(&er.zr, &er.br); err != nil {
		return 0, 0, err
	}
	br := oneByteReader{r: er.zr}
	if src, err = readVarint(&br); err != nil {
		return 0, 0, err
	}
	dst, err = readVarint(&br)
	return src, dst, err
}

// oneByteReader reads single bytes from r without buffering past them.
type oneByteReader struct {
	r io.Reader
	b [1]byte
}

func (o *oneByteReader) ReadByte() (byte, error) {
	if _, err := io.ReadFull(o.r, o.b[:]); err != nil {
		return 0, err
	}
	return o.b[0], nil
}

func (s *Store) streamIn(ctx context.Context, sn *snapshot, h Hash) (*ObjectReader, error) {
	if p, i, ok := sn.find(h); ok {
		return s.streamEntry(ctx, sn, p, p.idx.offset(i))
	}
	o, err := s.streamLoose(h)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, h)
	}
	return o, err
}

// streamEntry opens the entry at off in p.
func (s *Store) streamEntry(ctx context.Context, sn *snapshot, p *pack, off int64) (*ObjectReader, error) {
	if t, d, ok := s.cache.get(cacheKey{p.id, off}); ok {
		return memReader(t, d), nil
	}
	hd, err := entryHeaderAt(p, off)
	if err != nil {
		return nil, err
	}
	o := &ObjectReader{Type: hd.typ, Size: hd.size, ctx: ctx, packs: []*pack{p}}
	if hd.typ < OfsDelta {
		data := off + int64(hd.hdrLen)
		o.open = func(o *ObjectReader) (io.Reader, error) { return inflateStream(o, p, data, hd.size) }
		return o, nil
	}
	chain, base, err := s.deltaChain(sn, p, off)
	if err != nil {
		return nil, err
	}
	o.Type, o.Size = base.typ, chain[0].dst
	largest := base.size
	for _, l := range chain {
		largest = max(largest, l.dst, l.size)
		if l.p != p {
			o.packs = append(o.packs, l.p)
		}
	}
	if base.p != nil && base.p != p {
		o.packs = append(o.packs, base.p)
	}
	if largest <= s.memBytes {
		// Small enough: resolve as Read does, with its cache.
		o.open = func(*ObjectReader) (io.Reader, error) {
			_, data, err := s.readEntry(sn, p, off)
			if err != nil {
				return nil, err
			}
			return bytes.NewReader(data), nil
		}
		return o, nil
	}
	o.open = func(o *ObjectReader) (io.Reader, error) { return s.spill(o, chain, base) }
	return o, nil
}

// memReader serves an object already in memory.
func memReader(t Type, d []byte) *ObjectReader {
	r := bytes.NewReader(d)
	return &ObjectReader{Type: t, Size: int64(len(d)), open: func(*ObjectReader) (io.Reader, error) { return r, nil }}
}

// entryHeaderAt parses the header of the entry at off in p.
func entryHeaderAt(p *pack, off int64) (entryHeader, error) {
	if off < 12 || off >= p.size-packTrailer {
		return entryHeader{}, fmt.Errorf("gitpack: entry offset %d out of range", off)
	}
	hd, err := parseEntryHeader(bytes.NewReader(p.data[off:p.size-packTrailer]), off)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return hd, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
	}
	return hd, nil
}

// inflateStream inflates the zlib stream at data in p, which must hold
// exactly size bytes.
func inflateStream(o *ObjectReader, p *pack, data, size int64) (io.Reader, error) {
	zr, err := zlib.NewReader(bytes.NewReader(p.data[data : p.size-packTrailer]))
	if err != nil {
		return nil, fmt.Errorf("gitpack: %s at %d: inflate: %w", p.name, data, err)
	}
	o.onClose(func() { zr.Close() })
	return &exactReader{r: zr, left: size}, nil
}

// exactReader passes on exactly left bytes of r and then requires r to
// end, which also makes zlib check its checksum: an object shorter or
// longer than its header says is an error.
type exactReader struct {
	r    io.Reader
	left int64
	done bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		if !e.done {
			var one [1]byte
			for {
				m, err := e.r.Read(one[:])
				if m > 0 {
					return 0, errInflateLong
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return 0, inflateErr(err)
				}
			}
			e.done = true
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	m, err := e.r.Read(p)
	e.left -= int64(m)
	switch {
	case err == io.EOF && e.left > 0:
		return m, errInflateSmall
	case err == io.EOF:
		err = nil
	case err != nil:
		return m, inflateErr(err)
	}
	return m, nil
}

// streamLoose opens a loose object; fs.ErrNotExist when there is none.
func (s *Store) streamLoose(h Hash) (*ObjectReader, error) {
	f, err := os.Open(s.loosePath(h))
	if err != nil {
		return nil, err
	}
	t, size, r, err := looseStream(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("gitpack: loose object %s: %w", h, err)
	}
	o := &ObjectReader{Type: t, Size: size}
	o.onClose(func() { f.Close() })
	o.open = func(*ObjectReader) (io.Reader, error) { return r, nil }
	return o, nil
}

// looseStream reads a loose object's header from f and returns a reader
// of its content.
func looseStream(f *os.File) (Type, int64, io.Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, nil, err
	}
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 32<<10))
	if err != nil {
		return 0, 0, nil, inflateErr(err)
	}
	br := bufio.NewReaderSize(zr, 32<<10)
	hdr, err := br.ReadSlice(0)
	if err != nil || len(hdr) > 64 {
		return 0, 0, nil, errors.New("bad header")
	}
	t, size, err := parseLooseHeader(hdr[:len(hdr)-1], st.Size())
	if err != nil {
		return 0, 0, nil, err
	}
	return t, size, &exactReader{r: br, left: size}, nil
}

// chainLink is one delta of a chain and what its header declares.
type chainLink struct {
	p        *pack
	data     int64 // offset of its zlib stream
	size     int64 // inflated size of the delta itself
	src, dst int64 // the sizes of its base and of its result
}

// chainBase is the bottom of a delta chain: a cached object, a whole pack
// entry (p set) or a loose object.
type chainBase struct {
	typ    Type
	size   int64
	cached []byte
	p      *pack
	data   int64
	loose  Hash
}

// deltaChain walks the delta chain of the entry at off in p (a delta),
// reading headers only: the deltas from the top down, and its base.
func (s *Store) deltaChain(sn *snapshot, p *pack, off int64) ([]chainLink, chainBase, error) {
	var chain []chainLink
	er := entryReaders.Get().(*entryReader)
	defer er.release()
	for {
		key := cacheKey{p.id, off}
		if len(chain) > maxChain {
			return nil, chainBase{}, errors.New("gitpack: delta chain loops or is too long")
		}
		if len(chain) > 0 {
			if t, d, ok := s.cache.get(key); ok {
				return chain, chainBase{typ: t, size: int64(len(d)), cached: d}, checkChain(chain, int64(len(d)))
			}
		}
		hd, err := er.open(p, off)
		if err != nil {
			return nil, chainBase{}, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
		}
		data := off + int64(hd.hdrLen)
		if hd.typ < OfsDelta {
			if len(chain) == 0 {
				return nil, chainBase{}, errors.New("gitpack: not a delta")
			}
			return chain, chainBase{typ: hd.typ, size: hd.size, p: p, data: data}, checkChain(chain, hd.size)
		}
		src, dst, err := er.deltaSizes()
		if err != nil {
			return nil, chainBase{}, fmt.Errorf("gitpack: %s at %d: %w", p.name, off, err)
		}
		chain = append(chain, chainLink{p: p, data: data, size: hd.size, src: src, dst: dst})
		if hd.typ == OfsDelta {
			off = hd.baseOff
			continue
		}
		if q, o, ok := sn.locateBase(p, hd.baseHash); ok {
			p, off = q, o
			continue
		}
		lo, err := s.streamLoose(hd.baseHash)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, chainBase{}, fmt.Errorf("%w: delta base %s", ErrNotFound, hd.baseHash)
		}
		if err != nil {
			return nil, chainBase{}, err
		}
		lo.Close()
		return chain, chainBase{typ: lo.Type, size: lo.Size, loose: hd.baseHash}, checkChain(chain, lo.Size)
	}
}

// checkChain checks that each delta's declared base size is what the
// level below produces.
func checkChain(chain []chainLink, baseSize int64) error {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].src != baseSize {
			return fmt.Errorf("gitpack: delta base size %d, base has %d bytes", chain[i].src, baseSize)
		}
		baseSize = chain[i].dst
	}
	return nil
}

// readVarint reads a delta header size.
func readVarint(br io.ByteReader) (int64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := br.ReadByte()
		if err != nil || shift > 56 {
			return 0, errDeltaCorrupt
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
	}
	if v > 1<<62 {
		return 0, errDeltaCorrupt
	}
	return int64(v), nil
}

// spill resolves a large delta chain level by level (see the top of the
// file) and returns the reader of the last delta applied to its base.
func (s *Store) spill(o *ObjectReader, chain []chainLink, base chainBase) (io.Reader, error) {
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case s.spills <- struct{}{}:
		o.onClose(func() { <-s.spills })
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The base.
	var cur io.ReaderAt
	var release func()
	switch {
	case base.cached != nil:
		cur = bytes.NewReader(base.cached)
	case base.p != nil:
		src := &ObjectReader{}
		r, err := inflateStream(src, base.p, base.data, base.size)
		if err != nil {
			return nil, err
		}
		cur, release, err = s.materialize(ctx, r, base.size)
		src.Close()
		if err != nil {
			return nil, err
		}
	default:
		lo, err := s.streamLoose(base.loose)
		if err != nil {
			return nil, err
		}
		cur, release, err = s.materialize(ctx, lo, base.size)
		lo.Close()
		if err != nil {
			return nil, err
		}
	}
	curSize := base.size
	// The levels in between, bottom up.
	for i := len(chain) - 1; i >= 1; i-- {
		l := chain[i]
		holder := &ObjectReader{}
		r, err := applyStream(holder, cur, curSize, l)
		if err != nil {
			holder.Close()
			if release != nil {
				release()
			}
			return nil, err
		}
		next, nextRelease, err := s.materialize(ctx, r, l.dst)
		holder.Close()
		if release != nil {
			release()
		}
		if err != nil {
			return nil, err
		}
		cur, release, curSize = next, nextRelease, l.dst
	}
	if release != nil {
		o.onClose(release)
	}
	return applyStream(o, cur, curSize, chain[0])
}

// materialize reads size bytes from r into memory (up to memBytes) or
// into a temporary file, checking ctx between chunks.
func (s *Store) materialize(ctx context.Context, r io.Reader, size int64) (io.ReaderAt, func(), error) {
	if size <= s.memBytes {
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, nil, err
		}
		if err := expectEOF(r); err != nil {
			return nil, nil, err
		}
		return bytes.NewReader(buf), nil, nil
	}
	f, err := os.CreateTemp(filepath.Dir(s.objDir), "fennec-stream-*")
	if err != nil {
		return nil, nil, fmt.Errorf("gitpack: %w", err)
	}
	// Unlinked at once where the platform allows: a crash leaves nothing.
	name := f.Name()
	unlinked := os.Remove(name) == nil
	release := func() {
		f.Close()
		if !unlinked {
			os.Remove(name)
		}
	}
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			release()
			return nil, nil, err
		}
		m, rerr := r.Read(buf)
		if m > 0 {
			if _, err := f.Write(buf[:m]); err != nil {
				release()
				return nil, nil, fmt.Errorf("gitpack: %w", err)
			}
			n += int64(m)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			release()
			return nil, nil, rerr
		}
	}
	if n != size {
		release()
		return nil, nil, errInflateSmall
	}
	return f, release, nil
}

// expectEOF requires r to have nothing more.
func expectEOF(r io.Reader) error {
	var one [1]byte
	for {
		m, err := r.Read(one[:])
		if m > 0 {
			return errInflateLong
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// applyStream returns a reader of delta l applied to base (of baseSize
// bytes), inflating the delta as it goes.
func applyStream(o *ObjectReader, base io.ReaderAt, baseSize int64, l chainLink) (io.Reader, error) {
	if l.src != baseSize {
		return nil, fmt.Errorf("gitpack: delta base size %d, base has %d bytes", l.src, baseSize)
	}
	zr, err := inflateStream(o, l.p, l.data, l.size)
	if err != nil {
		return nil, err
	}
	d := bufio.NewReaderSize(zr, 64<<10)
	// The sizes, checked by deltaChain already.
	if _, err := readVarint(d); err != nil {
		return nil, err
	}
	if _, err := readVarint(d); err != nil {
		return nil, err
	}
	return &deltaApplier{base: base, baseSize: baseSize, d: d, left: l.dst}, nil
}

// deltaApplier produces a delta's result as it reads the delta's
// instructions (see delta.go for the format).
type deltaApplier struct {
	base     io.ReaderAt
	baseSize int64
	d        *bufio.Reader
	left     int64 // result bytes still to come
	copyOff  int64 // the copy under way
	copyLeft int64
	insLeft  int64 // the insert under way
	err      error
}

func (a *deltaApplier) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.read(p)
	if err != nil {
		a.err = err
	}
	return n, err
}

func (a *deltaApplier) read(p []byte) (int, error) {
	for a.copyLeft == 0 && a.insLeft == 0 {
		if a.left == 0 {
			// The delta must end here.
			if err := expectEOF(a.d); err != nil {
				if err == errInflateLong {
					return 0, errDeltaCorrupt
				}
				return 0, err
			}
			return 0, io.EOF
		}
		if err := a.next(); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if a.copyLeft > 0 {
		n := int(min(int64(len(p)), a.copyLeft))
		m, err := a.base.ReadAt(p[:n], a.copyOff)
		if m < n {
			if err == nil || err == io.EOF {
				err = errDeltaCorrupt
			}
			return m, err
		}
		a.copyOff += int64(m)
		a.copyLeft -= int64(m)
		a.left -= int64(m)
		return m, nil
	}
	n := int(min(int64(len(p)), a.insLeft))
	m, err := io.ReadFull(a.d, p[:n])
	a.insLeft -= int64(m)
	a.left -= int64(m)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = errDeltaCorrupt
		}
		return m, err
	}
	return m, nil
}

// next reads one instruction.
func (a *deltaApplier) next() error {
	op, err := a.d.ReadByte()
	if err != nil {
		if err == io.EOF {
			return errDeltaCorrupt // ended before the declared result
		}
		return err
	}
	switch {
	case op&0x80 != 0:
		var off, size uint64
		for i := uint(0); i < 4; i++ {
			if op&(1<<i) != 0 {
				c, err := a.d.ReadByte()
				if err != nil {
					return errDeltaCorrupt
				}
				off |= uint64(c) << (8 * i)
			}
		}
		for i := uint(0); i < 3; i++ {
			if op&(0x10<<i) != 0 {
				c, err := a.d.ReadByte()
				if err != nil {
					return errDeltaCorrupt
				}
				size |= uint64(c) << (8 * i)
			}
		}
		if size == 0 {
			size = 0x10000
		}
		if off+size > uint64(a.baseSize) || int64(size) > a.left {
			return errDeltaCorrupt
		}
		a.copyOff, a.copyLeft = int64(off), int64(size)
	case op != 0:
		if int64(op) > a.left {
			return errDeltaCorrupt
		}
		a.insLeft = int64(op)
	default:
		return errDeltaCorrupt
	}
	return nil
}
