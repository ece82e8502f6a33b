package gitpack

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// packWriter writes a pack through a 64 KiB buffer, hashing everything
// for the trailer and keeping the crc32 of the current entry.
type packWriter struct {
	w   io.Writer
	sum hash.Hash
	buf []byte
	n   int64 // bytes written so far (the next entry's offset)
	crc uint32
	err error
}

const writeChunk = 64 << 10

func newPackWriter(w io.Writer) *packWriter {
	return &packWriter{w: w, sum: sha1.New(), buf: make([]byte, 0, writeChunk)}
}

func (pw *packWriter) Write(b []byte) (int, error) {
	if pw.err != nil {
		return 0, pw.err
	}
	pw.crc = crc32.Update(pw.crc, crc32.IEEETable, b)
	pw.n += int64(len(b))
	if len(pw.buf)+len(b) <= cap(pw.buf) {
		pw.buf = append(pw.buf, b...)
		return len(b), nil
	}
	if err := pw.flush(); err != nil {
		return 0, err
	}
	if len(b) >= cap(pw.buf) {
		pw.sum.Write(b)
		if _, err := pw.w.Write(b); err != nil {
			pw.err = err
			return 0, err
		}
		return len(b), nil
	}
	pw.buf = append(pw.buf, b...)
	return len(b), nil
}

func (pw *packWriter) flush() error {
	if pw.err != nil {
		return pw.err
	}
	if len(pw.buf) == 0 {
		return nil
	}
	pw.sum.Write(pw.buf)
	_, pw.err = pw.w.Write(pw.buf)
	pw.buf = pw.buf[:0]
	return pw.err
}

// finish writes the trailer and returns it.
func (pw *packWriter) finish() (Hash, error) {
	if err := pw.flush(); err != nil {
		return Hash{}, err
	}
	var h Hash
	copy(h[:], pw.sum.Sum(nil))
	if _, err := pw.w.Write(h[:]); err != nil {
		return Hash{}, err
	}
	pw.n += packTrailer
	return h, nil
}

func packHeader(n int) []byte {
	b := []byte{'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[8:], uint32(n))
	return b
}

// WritePack writes a version 2 pack of exactly the given objects (order
// and duplicates do not matter) to w, reusing stored entries byte for byte
// where it can.
func (s *Store) WritePack(w io.Writer, objects []Hash, opt WriteOptions) error {
	_, err := s.writePack(w, objects, opt, nil)
	return err
}

// packSel is the part of one pack a write takes.
type packSel struct {
	p        *pack
	sel      []uint64 // bitset by index position
	count    int
	whole    bool    // stream the pack's object region as is
	streamed bool    // ... and it is written, from start
	start    int64   //
	newOff   []int64 // by rank, for ofs deltas' bases (general path)
}

func (ps *packSel) selected(pos uint32) bool { return ps.sel[pos>>6]&(1<<(pos&63)) != 0 }

// writeJob is one write in progress.
type writeJob struct {
	s       *Store
	sn      *snapshot
	opt     WriteOptions
	packs   []*pack    // the packs drawn from: opt.Whole's, then sn's
	sels    []*packSel // parallel to packs; nil where nothing is taken
	loose   []Hash
	isLoose map[Hash]bool
	total   int
	done    int
	pw      *packWriter
	rec     *[]idxEntry
	// noRefFast: take the whole-pack path only for packs without ref
	// deltas (Repack turns them into ofs deltas).
	noRefFast bool
	br        bytes.Reader
	zw        *zlib.Writer // nil: pooled, fast level
}

// writePack writes the pack and returns its trailer; with rec it also
// records every object's offset and crc32 (for an index).
func (s *Store) writePack(w io.Writer, objects []Hash, opt WriteOptions, rec *[]idxEntry) (Hash, error) {
	if s.closed.Load() {
		return Hash{}, ErrClosed
	}
	j := &writeJob{s: s, opt: opt, rec: rec, noRefFast: rec != nil}
	if rec != nil {
		// A pack to keep: compress what is recompressed as git would.
		j.zw, _ = zlib.NewWriterLevel(nil, zlib.DefaultCompression)
	}
	if err := j.locate(objects); err != nil {
		return Hash{}, err
	}
	j.pw = newPackWriter(w)
	j.pw.Write(packHeader(j.total))
	for _, ps := range j.sels {
		if ps == nil {
			continue
		}
		var err error
		if ps.whole {
			err = j.writeWhole(ps)
		} else {
			err = j.writeSome(ps)
		}
		if err != nil {
			return Hash{}, err
		}
	}
	for _, h := range j.loose {
		if err := j.writeLoose(h); err != nil {
			return Hash{}, err
		}
	}
	sum, err := j.pw.finish()
	if err != nil {
		return Hash{}, err
	}
	if opt.Progress != nil {
		opt.Progress(j.done, j.total)
	}
	return sum, nil
}

// locate finds every object, dedupes and decides the whole-pack path.
func (j *writeJob) locate(objects []Hash) error {
	j.sn = j.s.snap.Load()
	retried := false
	for {
		j.setPacks()
		j.loose = j.loose[:0]
		j.isLoose = nil
		j.total = 0
		var missing *Hash
		for i := range objects {
			h := objects[i]
			if err := j.take(h); err != nil {
				missing = &objects[i]
				break
			}
		}
		if missing == nil {
			break
		}
		if retried || !j.s.refresh(j.sn) {
			return fmt.Errorf("%w: %s", ErrNotFound, *missing)
		}
		retried = true
		j.sn = j.s.snap.Load()
	}
	slices.SortFunc(j.loose, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
	j.loose = slices.Compact(j.loose)
	j.total += len(j.loose)
	if len(j.loose) > 0 {
		j.isLoose = make(map[Hash]bool, len(j.loose))
		for _, h := range j.loose {
			j.isLoose[h] = true
		}
	}
	for _, ps := range j.sels {
		if ps == nil {
			continue
		}
		j.total += ps.count
		if ps.count == ps.p.idx.n {
			ok, err := j.canStream(ps)
			if err != nil {
				return err
			}
			ps.whole = ok
		}
	}
	return nil
}

// setPacks lists the packs the write draws from: the whole packs asked
// for (first: objects are taken from them in preference), then the rest
// of the snapshot's.
func (j *writeJob) setPacks() {
	j.packs = j.packs[:0]
	for _, cp := range j.opt.Whole {
		if cp.p != nil && !slices.Contains(j.packs, cp.p) {
			j.packs = append(j.packs, cp.p)
		}
	}
	nWhole := len(j.packs)
	for _, p := range j.sn.packs {
		if !slices.Contains(j.packs[:nWhole], p) {
			j.packs = append(j.packs, p)
		}
	}
	j.sels = make([]*packSel, len(j.packs))
	for i := 0; i < nWhole; i++ {
		p := j.packs[i]
		ps := &packSel{p: p, sel: make([]uint64, (p.idx.n+63)/64), count: p.idx.n}
		for k := range ps.sel {
			ps.sel[k] = ^uint64(0)
		}
		j.sels[i] = ps
	}
}

func (j *writeJob) take(h Hash) error {
	for i, p := range j.packs {
		pos, ok := p.idx.find(h)
		if !ok {
			continue
		}
		ps := j.sels[i]
		if ps == nil {
			ps = &packSel{p: p, sel: make([]uint64, (p.idx.n+63)/64)}
			j.sels[i] = ps
		}
		if !ps.selected(uint32(pos)) {
			ps.sel[pos>>6] |= 1 << (uint(pos) & 63)
			ps.count++
		}
		return nil
	}
	if j.s.hasLoose(h) {
		j.loose = append(j.loose, h)
		return nil
	}
	return ErrNotFound
}

// canStream reports whether a pack whose every object is wanted can be
// copied as it is: its deltas' bases must reach the client.
func (j *writeJob) canStream(ps *packSel) (bool, error) {
	p := ps.p
	if err := p.scan(); err != nil {
		return false, err
	}
	if j.rec != nil && p.idx.crcs == nil {
		return false, nil // no crc32s to copy into the new index
	}
	if !j.opt.OfsDelta && slices.Contains(p.kinds, OfsDelta) {
		return false, nil
	}
	if j.noRefFast && len(p.refDeltas) > 0 {
		return false, nil
	}
	for _, rd := range p.refDeltas {
		if p.bases[rd.rank] >= 0 || j.inOutput(rd.base) {
			continue
		}
		if j.opt.Thin && j.opt.ClientHas != nil && j.opt.ClientHas(rd.base) {
			continue
		}
		return false, nil
	}
	return true, nil
}

// emittedAt returns where h went in the output, if it is written already
// (wherever it is stored).
func (j *writeJob) emittedAt(h Hash) (int64, bool) {
	for i, p := range j.packs {
		pos, ok := p.idx.find(h)
		if !ok {
			continue
		}
		qs := j.sels[i]
		if qs == nil || !qs.selected(uint32(pos)) {
			return 0, false
		}
		if qs.whole {
			if !qs.streamed {
				return 0, false
			}
			r, _ := p.rank(p.idx.offset(pos))
			return p.offs[r] - 12 + qs.start, true
		}
		if qs.newOff == nil {
			return 0, false
		}
		r, _ := p.rank(p.idx.offset(pos))
		if o := qs.newOff[r]; o >= 0 {
			return o, true
		}
		return 0, false
	}
	return 0, false
}

// inOutput reports whether the write includes h.
func (j *writeJob) inOutput(h Hash) bool {
	for i, p := range j.packs {
		if pos, ok := p.idx.find(h); ok {
			ps := j.sels[i]
			return ps != nil && ps.selected(uint32(pos))
		}
	}
	return j.isLoose[h]
}

func (j *writeJob) progress() {
	j.done++
	if j.opt.Progress != nil && j.done%1024 == 0 {
		j.opt.Progress(j.done, j.total)
	}
}

// writeWhole streams a pack's object region in big chunks.
func (j *writeJob) writeWhole(ps *packSel) error {
	p := ps.p
	start := j.pw.n
	ps.start = start
	if j.rec != nil {
		for i := 0; i < p.idx.n; i++ {
			crc, _ := p.idx.crc(i)
			*j.rec = append(*j.rec, idxEntry{p.idx.name(i), p.idx.offset(i) - 12 + start, crc})
		}
	}
	defer runtime.KeepAlive(p)
	end := p.size - packTrailer
	next := 0
	p.order()
	for off := int64(12); off < end; {
		n := min(1<<20, end-off)
		if _, err := j.pw.Write(p.data[off : off+n]); err != nil {
			return err
		}
		off += n
		// Progress by entries passed.
		for next < len(p.offs) && p.offs[next] < off {
			next++
			j.progress()
		}
	}
	ps.streamed = true
	return nil
}

// writeSome writes the wanted entries of a pack one by one, in offset
// order except that a delta's base in the pack comes before it.
func (j *writeJob) writeSome(ps *packSel) error {
	p := ps.p
	if err := p.scan(); err != nil {
		return err
	}
	n := len(p.offs)
	ps.newOff = make([]int64, n)
	for i := range ps.newOff {
		ps.newOff[i] = -1
	}
	// Order: emit a base (in this pack, wanted) before its delta.
	state := make([]byte, n) // 0 new, 1 visiting, 2 emitted
	var order []int32
	var stack []int32
	for r := 0; r < n; r++ {
		if !ps.selected(p.byOff[r]) || state[r] == 2 {
			continue
		}
		stack = append(stack[:0], int32(r))
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			if state[x] == 2 {
				stack = stack[:len(stack)-1]
				continue
			}
			if b := p.bases[x]; b >= 0 && state[b] == 0 && ps.selected(p.byOff[b]) {
				state[x] = 1
				stack = append(stack, b)
				continue
			}
			state[x] = 2
			order = append(order, x)
			stack = stack[:len(stack)-1]
		}
	}
	for _, r := range order {
		if err := j.writeEntry(ps, int(r)); err != nil {
			return err
		}
		j.progress()
	}
	return nil
}

// writeEntry writes the entry of rank r, reusing its compressed data.
func (j *writeJob) writeEntry(ps *packSel, r int) error {
	p := ps.p
	pos := p.byOff[r]
	off, end := p.offs[r], p.end(r)
	length := end - off
	h := p.idx.name(int(pos))
	newOff := j.pw.n
	ps.newOff[r] = newOff

	defer runtime.KeepAlive(p)
	entry := p.data[off:end]
	j.br.Reset(entry)
	eh, err := parseEntryHeader(&j.br, off)
	if err != nil || int64(eh.hdrLen) > length {
		return fmt.Errorf("gitpack: %s: corrupt entry at %d", p.name, off)
	}
	var hdr [64]byte
	out := hdr[:0]
	switch eh.typ {
	case Commit, Tree, Blob, Tag:
		out = append(out, entry[:eh.hdrLen]...)
	default:
		b := int(p.bases[r])
		var baseHash Hash
		if eh.typ == OfsDelta {
			baseHash = p.idx.name(int(p.byOff[b]))
		} else {
			baseHash = eh.baseHash
		}
		// Where the base went in this pack, if it is there already.
		baseOff := int64(-1)
		if b >= 0 && ps.newOff[b] >= 0 {
			baseOff = ps.newOff[b]
		} else if o, ok := j.emittedAt(baseHash); ok {
			baseOff = o
		}
		switch {
		case baseOff >= 0 && j.opt.OfsDelta:
			out = appendEntryHeader(out, OfsDelta, eh.size)
			out = appendOfs(out, newOff-baseOff)
		case baseOff >= 0 || j.inOutput(baseHash) ||
			(j.opt.Thin && j.opt.ClientHas != nil && j.opt.ClientHas(baseHash)):
			out = appendEntryHeader(out, RefDelta, eh.size)
			out = append(out, baseHash[:]...)
		default:
			// The client will not have the base: send the object whole.
			t, data, err := j.s.readEntry(j.sn, p, off)
			if err != nil {
				return err
			}
			return j.writeCompressed(h, t, data)
		}
	}
	j.pw.crc = 0
	j.pw.Write(out)
	j.pw.Write(entry[eh.hdrLen:])
	if j.pw.err != nil {
		return j.pw.err
	}
	j.record(h, newOff)
	return nil
}

func (j *writeJob) record(h Hash, off int64) {
	if j.rec != nil {
		*j.rec = append(*j.rec, idxEntry{h, off, j.pw.crc})
	}
}

// writeLoose writes a loose object, compressed whole.
func (j *writeJob) writeLoose(h Hash) error {
	t, data, err := j.s.readLoose(h)
	if err != nil {
		return fmt.Errorf("gitpack: loose object %s: %w", h, err)
	}
	if err := j.writeCompressed(h, t, data); err != nil {
		return err
	}
	j.progress()
	return nil
}

var zlibWriters = sync.Pool{New: func() any {
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return zw
}}

// writeCompressed writes a whole object entry.
func (j *writeJob) writeCompressed(h Hash, t Type, data []byte) error {
	off := j.pw.n
	j.pw.crc = 0
	var hdr [16]byte
	j.pw.Write(appendEntryHeader(hdr[:0], t, int64(len(data))))
	zw := j.zw
	if zw == nil {
		zw = zlibWriters.Get().(*zlib.Writer)
		defer zlibWriters.Put(zw)
	}
	zw.Reset(j.pw)
	zw.Write(data)
	err := zw.Close()
	zw.Reset(nil)
	if err != nil {
		return err
	}
	if j.pw.err != nil {
		return j.pw.err
	}
	j.record(h, off)
	return nil
}
