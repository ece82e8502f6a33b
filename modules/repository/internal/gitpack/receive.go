package gitpack

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zlib"
	"github.com/pjbgf/sha1cd"
)

// Incoming is a received pack held in quarantine (objects/incoming-*),
// invisible to readers of the Store until Install.
type Incoming struct {
	s       *Store
	dir     string // the quarantine directory; "" when nothing was received
	name    string // pack-<sha>; "" for a pack without objects
	objects []Hash // sorted
	trees   []Hash // the objects that are trees, sorted
	p       *pack  // the quarantined pack, for CheckConnected
	mu      sync.Mutex
	done    bool // installed or discarded
}

// Objects are the ids of the objects received (sorted; the bases a thin
// pack was completed with are not among them).
func (in *Incoming) Objects() []Hash { return in.objects }

// Trees are the ids of the received objects that are trees (sorted), for
// checks of their entries before anything is installed.
func (in *Incoming) Trees() []Hash { return in.trees }

// Discard removes the quarantine and everything in it.
func (in *Incoming) Discard() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.done {
		return nil
	}
	in.done = true
	in.p = nil
	if in.dir == "" {
		return nil
	}
	return os.RemoveAll(in.dir)
}

// Install moves the incoming pack into objects/pack and reloads.
func (s *Store) Install(in *Incoming) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.done {
		return errors.New("gitpack: incoming pack already installed or discarded")
	}
	if in.s != s {
		return errors.New("gitpack: incoming pack belongs to another store")
	}
	if in.name != "" {
		if err := os.MkdirAll(s.packDir, 0o755); err != nil {
			return err
		}
		// The .pack first: readers find packs by their .idx.
		for _, ext := range []string{".pack", ".idx"} {
			if err := os.Rename(filepath.Join(in.dir, in.name+ext), filepath.Join(s.packDir, in.name+ext)); err != nil {
				return fmt.Errorf("gitpack: install: %w", err)
			}
		}
		syncDir(s.packDir)
	}
	in.done = true
	in.p = nil
	if in.dir != "" {
		os.RemoveAll(in.dir)
	}
	if in.name == "" {
		return nil
	}
	_, err := s.reload()
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// limitedReader counts what it reads and fails past a limit.
type limitedReader struct {
	r        io.Reader
	n, max   int64
	tooLarge bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.max > 0 && l.n >= l.max {
		// One byte more proves the pack too large.
		var one [1]byte
		m, err := l.r.Read(one[:])
		if m > 0 {
			l.tooLarge = true
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if l.max > 0 && int64(len(p)) > l.max-l.n {
		p = p[:l.max-l.n]
	}
	m, err := l.r.Read(p)
	l.n += int64(m)
	return m, err
}

// streamer reads a pack from the wire. Every byte consumed is hashed for
// the trailer, added to the current entry's crc32 and written to the
// quarantine file, lazily, a buffer at a time.
type streamer struct {
	r               io.Reader
	buf             []byte
	start, pos, end int   // buf[start:pos] consumed, not yet flushed
	off             int64 // stream offset of buf[pos]
	sum             hash.Hash
	crc             uint32
	w               *bufio.Writer
	eof             bool
	err             error
}

func newStreamer(r io.Reader, w io.Writer) *streamer {
	return &streamer{r: r, buf: make([]byte, 2<<20), sum: sha1.New(), w: bufio.NewWriterSize(w, 256<<10)}
}

// flush accounts for the bytes consumed so far.
func (st *streamer) flush() {
	b := st.buf[st.start:st.pos]
	if len(b) > 0 {
		st.sum.Write(b)
		st.crc = crc32.Update(st.crc, crc32.IEEETable, b)
		if _, err := st.w.Write(b); err != nil && st.err == nil {
			st.err = err
		}
	}
	st.start = st.pos
}

func (st *streamer) fill() error {
	if st.err != nil {
		return st.err
	}
	st.flush()
	st.start, st.pos, st.end = 0, 0, 0
	if st.eof {
		return io.EOF
	}
	for st.end == 0 {
		n, err := st.r.Read(st.buf)
		st.end = n
		if err == io.EOF {
			st.eof = true
			if n == 0 {
				return io.EOF
			}
		} else if err != nil {
			st.err = err
			if n == 0 {
				return err
			}
		}
	}
	return nil
}

// ensure makes at least n unread bytes available in the buffer, short of
// the end of the stream, and returns the unread bytes.
func (st *streamer) ensure(n int) []byte {
	if st.end-st.pos >= n || st.eof || st.err != nil {
		return st.buf[st.pos:st.end]
	}
	st.flush()
	m := copy(st.buf, st.buf[st.pos:st.end])
	st.start, st.pos, st.end = 0, 0, m
	n = min(n, len(st.buf))
	for st.end < n {
		k, err := st.r.Read(st.buf[st.end:])
		st.end += k
		if err == io.EOF {
			st.eof = true
			break
		}
		if err != nil {
			st.err = err
			break
		}
	}
	return st.buf[st.pos:st.end]
}

func (st *streamer) ReadByte() (byte, error) {
	if st.pos == st.end {
		if err := st.fill(); err != nil {
			return 0, err
		}
	}
	c := st.buf[st.pos]
	st.pos++
	st.off++
	return c, nil
}

func (st *streamer) Read(p []byte) (int, error) {
	if st.pos == st.end {
		if err := st.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, st.buf[st.pos:st.end])
	st.pos += n
	st.off += int64(n)
	return n, nil
}

func (st *streamer) readFull(p []byte) error {
	_, err := io.ReadFull(st, p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// atEOF reports whether the stream has nothing more.
func (st *streamer) atEOF() (bool, error) {
	if st.pos < st.end {
		return false, nil
	}
	err := st.fill()
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

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

// resolve computes the id of every delta: a walk from each whole object
// (and each base the Store has, for a thin pack) down to the deltas on
// it, re-reading bases from the file through a bounded cache.
func (rc *receiver) resolve() error {
	n := len(rc.entries)
	p, err := newPack(rc.f, nil, false)
	if err != nil {
		return err
	}
	p.name = "incoming pack"
	rc.p = p
	defer func() {
		p.unmap()
		rc.p = nil
	}()
	rc.cache = newLRU(rc.s.cache.max)
	rc.byHash = make(map[Hash]int32, n)

	// Children of each entry by offset (ofs deltas), compressed rows.
	start := make([]int32, n+1)
	for i := range rc.entries {
		if b := rc.entries[i].base; b >= 0 {
			start[b+1]++
		}
	}
	for i := 0; i < n; i++ {
		start[i+1] += start[i]
	}
	kids := make([]int32, start[n])
	fill := slices.Clone(start[:n])
	for i := range rc.entries {
		if b := rc.entries[i].base; b >= 0 {
			kids[fill[b]] = int32(i)
			fill[b]++
		}
	}
	fill = nil
	// Children of each base id (ref deltas).
	refKids := make(map[Hash][]int32, len(rc.refs))
	for i, h := range rc.refs {
		refKids[h] = append(refKids[h], i)
	}
	for _, ks := range refKids {
		slices.Sort(ks)
	}

	var stack []int32
	resolved := 0
	visit := func(i int32) error {
		e := &rc.entries[i]
		if j, dup := rc.byHash[e.hash]; dup {
			return fmt.Errorf("object %s twice in the pack (at %d and %d)", e.hash, rc.entries[j].off, e.off)
		}
		rc.byHash[e.hash] = i
		resolved++
		stack = append(stack, i)
		return nil
	}
	// walk resolves everything below the entries on the stack.
	walk := func() error {
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if err := rc.resolveChildren(kids[start[x]:start[x+1]], start, refKids[rc.entries[x].hash], visit); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range rc.entries {
		if rc.entries[i].typ < OfsDelta {
			if err := visit(int32(i)); err != nil {
				return err
			}
			if err := walk(); err != nil {
				return err
			}
		}
	}
	// What is left are deltas on bases outside the pack: the Store's
	// (a thin pack), or missing.
	if resolved < n {
		var outside []Hash
		for h := range refKids {
			if _, ok := rc.byHash[h]; !ok {
				outside = append(outside, h)
			}
		}
		slices.SortFunc(outside, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
		for _, h := range outside {
			if !rc.s.Has(h) {
				return fmt.Errorf("delta base %s is neither in the pack nor in the repository", h)
			}
			rc.thin = append(rc.thin, h)
			if err := rc.resolveChildren(nil, start, refKids[h], visit); err != nil {
				return err
			}
			if err := walk(); err != nil {
				return err
			}
		}
	}
	if resolved < n {
		for i := range rc.entries {
			if rc.entries[i].obj == 0 {
				return fmt.Errorf("delta at %d cannot be resolved (its base is missing or the deltas loop)", rc.entries[i].off)
			}
		}
	}
	return nil
}

// resolveChildren resolves the deltas kids and refKids (whose base was
// just resolved) and visits them.
func (rc *receiver) resolveChildren(kids []int32, start []int32, refKids []int32, visit func(int32) error) error {
	for _, list := range [2][]int32{kids, refKids} {
		for _, c := range list {
			e := &rc.entries[c]
			if e.obj != 0 {
				continue
			}
			// Keep the result cached if deltas may follow on it.
			keep := start[c+1] > start[c] || len(rc.refs) > 0
			t, data, err := resolveEntry(rc.cache, rc.p, e.off, rc.limit, keep, rc.findBase)
			if err != nil {
				return fmt.Errorf("delta at %d: %w", e.off, err)
			}
			e.obj = t
			if e.hash, err = HashObject(t, data); err != nil {
				return fmt.Errorf("delta at %d: %w", e.off, err)
			}
			if err := visit(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// findBase locates a ref delta's base: in the pack once resolved, else
// in the Store.
func (rc *receiver) findBase(h Hash) (*pack, int64, Type, []byte, error) {
	if i, ok := rc.byHash[h]; ok {
		return rc.p, rc.entries[i].off, 0, nil, nil
	}
	t, data, err := rc.s.Read(h)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("delta base %s: %w", h, err)
	}
	return nil, 0, t, data, nil
}

// completeThin appends the outside bases as whole objects, rewrites the
// object count and the trailer, and returns the new trailer.
func (rc *receiver) completeThin() (Hash, error) {
	st, err := rc.f.Stat()
	if err != nil {
		return Hash{}, err
	}
	end := st.Size() - packTrailer
	if err := rc.f.Truncate(end); err != nil {
		return Hash{}, err
	}
	if _, err := rc.f.Seek(end, io.SeekStart); err != nil {
		return Hash{}, err
	}
	bw := bufio.NewWriterSize(rc.f, 256<<10)
	zw, err := zlib.NewWriterLevel(nil, zlib.DefaultCompression)
	if err != nil {
		return Hash{}, err
	}
	off := end
	for _, h := range rc.thin {
		t, data, err := rc.s.Read(h)
		if err != nil {
			return Hash{}, err
		}
		crc := crc32.NewIEEE()
		cw := &countWriter{w: io.MultiWriter(bw, crc)}
		cw.Write(appendEntryHeader(nil, t, int64(len(data))))
		zw.Reset(cw)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return Hash{}, err
		}
		rc.entries = append(rc.entries, inEntry{off: off, size: int64(len(data)), crc: crc.Sum32(), typ: t, obj: t, base: -1, hash: h})
		off += cw.n
	}
	if err := bw.Flush(); err != nil {
		return Hash{}, err
	}
	var cnt [4]byte
	binary.BigEndian.PutUint32(cnt[:], uint32(len(rc.entries)))
	if _, err := rc.f.WriteAt(cnt[:], 8); err != nil {
		return Hash{}, err
	}
	// The trailer hashes the whole file again.
	sum := sha1.New()
	if _, err := io.Copy(sum, io.NewSectionReader(rc.f, 0, off)); err != nil {
		return Hash{}, err
	}
	var trailer Hash
	copy(trailer[:], sum.Sum(nil))
	if _, err := rc.f.WriteAt(trailer[:], off); err != nil {
		return Hash{}, err
	}
	return trailer, nil
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

// CheckConnected verifies that everything reachable from tips exists
// either in the incoming pack or in the store, walking only into the
// incoming objects (the stored ones are complete by construction).
func (s *Store) CheckConnected(in *Incoming, tips []Hash) error {
	return s.CheckConnectedTrees(in, tips, nil)
}

// TreeEntryError is CheckConnectedTrees's refusal of a tree entry's name.
type TreeEntryError struct {
	Tree    Hash
	Problem string
}

func (e *TreeEntryError) Error() string {
	return "gitpack: object " + e.Tree.String() + ": " + e.Problem
}

// CheckConnectedTrees is CheckConnected that also hands the name of every
// entry of every incoming tree to checkName (nil: no check), which answers
// "" for a good name and the problem otherwise (returned as a
// *TreeEntryError). The trees the walk reads are checked as it reads them,
// so a push's trees are read once; the incoming trees no tip reaches are
// read afterwards (the pack would be installed with them, and a later
// push could point at them without their being walked again).
func (s *Store) CheckConnectedTrees(in *Incoming, tips []Hash, checkName func(name []byte) string) error {
	var inp *pack
	if in != nil {
		inp = in.p
	}
	c := &connCheck{s: s, inp: inp, seen: make(map[Hash]bool), checkName: checkName}
	if inp != nil {
		c.sn = &snapshot{packs: []*pack{inp}}
	}
	for _, t := range tips {
		if err := c.need(t, 0, Hash{}, "tip", nil); err != nil {
			return err
		}
	}
	for len(c.queue) > 0 {
		q := c.queue[len(c.queue)-1]
		c.queue = c.queue[:len(c.queue)-1]
		if err := c.walk(q); err != nil {
			return err
		}
	}
	if checkName == nil || inp == nil {
		return nil
	}
	for _, h := range in.trees {
		if c.seen[h] {
			continue // walked above
		}
		i, ok := inp.idx.find(h)
		if !ok {
			continue // a base a thin pack was completed with: stored already
		}
		_, data, err := s.readEntry(c.sn, inp, inp.idx.offset(i))
		if err != nil {
			return fmt.Errorf("gitpack: object %s: %w", h, err)
		}
		if err := c.checkNames(h, data); err != nil {
			return err
		}
	}
	return nil
}

type connCheck struct {
	s         *Store
	inp       *pack
	sn        *snapshot
	seen      map[Hash]bool
	queue     []queued
	checkName func([]byte) string
}

// checkNames runs checkName on the entries of tree h.
func (c *connCheck) checkNames(h Hash, data []byte) error {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		nul := bytes.IndexByte(data[sp:], 0)
		if nul < 0 || sp+nul+21 > len(data) {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		if p := c.checkName(data[sp+1 : sp+nul]); p != "" {
			return &TreeEntryError{Tree: h, Problem: p}
		}
		data = data[sp+nul+21:]
	}
	return nil
}

type queued struct {
	h   Hash
	off int64
	typ Type // expected type, 0 if any
}

// need records a reference from `from` to h, which should be of type t
// (0: any). what (and name, for a tree entry) say what the reference is,
// for the error (formatted only then: trees have many entries).
func (c *connCheck) need(h Hash, t Type, from Hash, what string, name []byte) error {
	if c.seen[h] {
		return nil
	}
	c.seen[h] = true
	if c.inp != nil {
		if i, ok := c.inp.idx.find(h); ok {
			if t == Blob {
				return nil // present; blobs reference nothing
			}
			c.queue = append(c.queue, queued{h, c.inp.idx.offset(i), t})
			return nil
		}
	}
	if c.s.Has(h) {
		return nil
	}
	if name != nil {
		what += " " + strconv.Quote(string(name))
	}
	if from.IsZero() {
		return fmt.Errorf("gitpack: missing object %s (%s)", h, what)
	}
	return fmt.Errorf("gitpack: missing object %s (%s of %s)", h, what, from)
}

// walk reads an incoming object and needs what it references.
func (c *connCheck) walk(q queued) error {
	t, data, err := c.s.readEntry(c.sn, c.inp, q.off)
	if err != nil {
		return fmt.Errorf("gitpack: object %s: %w", q.h, err)
	}
	if q.typ != 0 && t != q.typ {
		return fmt.Errorf("gitpack: object %s is a %s, referenced as a %s", q.h, t, q.typ)
	}
	switch t {
	case Commit:
		return c.walkCommit(q.h, data)
	case Tag:
		return c.walkTag(q.h, data)
	case Tree:
		return c.walkTree(q.h, data)
	}
	return nil
}

func (c *connCheck) walkCommit(h Hash, data []byte) error {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // end of the headers
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		var t Type
		switch string(key) {
		case "tree":
			t = Tree
		case "parent":
			t = Commit
		default:
			continue
		}
		id, ok := ParseHex(val)
		if !ok {
			return fmt.Errorf("gitpack: commit %s: bad %s line", h, key)
		}
		if err := c.need(id, t, h, string(key), nil); err != nil {
			return err
		}
	}
	return nil
}

func (c *connCheck) walkTag(h Hash, data []byte) error {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	val, ok := bytes.CutPrefix(line, []byte("object "))
	if !ok {
		return fmt.Errorf("gitpack: tag %s: no object line", h)
	}
	id, ok := ParseHex(val)
	if !ok {
		return fmt.Errorf("gitpack: tag %s: bad object line", h)
	}
	return c.need(id, 0, h, "tagged object", nil)
}

func (c *connCheck) walkTree(h Hash, data []byte) error {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		mode := data[:sp]
		nul := bytes.IndexByte(data[sp:], 0)
		if nul < 0 || sp+nul+21 > len(data) {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		name := data[sp+1 : sp+nul]
		if c.checkName != nil {
			if p := c.checkName(name); p != "" {
				return &TreeEntryError{Tree: h, Problem: p}
			}
		}
		var id Hash
		copy(id[:], data[sp+nul+1:])
		data = data[sp+nul+21:]
		var t Type
		switch string(mode) {
		case "160000":
			continue // a submodule's commit lives elsewhere
		case "40000", "040000":
			t = Tree
		default:
			t = Blob
		}
		if err := c.need(id, t, h, "entry", name); err != nil {
			return err
		}
	}
	return nil
}
