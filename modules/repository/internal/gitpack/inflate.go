package gitpack

import (
	"encoding/binary"
	"errors"
	"hash/adler32"
	"math/bits"
	"slices"
	"sync"
)

// A zlib decoder for the common case here: the compressed stream is in
// memory (a mapped pack, a receive buffer) and the inflated size is known
// (the entry header says it). Decoding straight into the result, with
// Huffman tables sized to each block's longest code, is several times
// cheaper than a general streaming inflater on the small objects (commits,
// trees, deltas) that dominate a pack. The format is RFC 1950 around
// RFC 1951; which streams it accepts follows zlib, which wrote them.

var (
	errInflateShort   = errors.New("gitpack: compressed data truncated")
	errInflateCorrupt = errors.New("gitpack: corrupt compressed data")
	errInflateLong    = errors.New("gitpack: object larger than its header says")
	errInflateSmall   = errors.New("gitpack: object smaller than its header says")
	errInflateAdler   = errors.New("gitpack: compressed data checksum mismatch")
)

// huffTable decodes one Huffman code: a primary table indexed by the next
// `bits` input bits, and for longer codes subtables of 1<<sub entries. An
// entry is sym<<16 | flags | length; length 0 marks an invalid code.
type huffTable struct {
	e      []uint32
	bits   uint
	sub    uint
	subGen []uint32 // by primary entry: the build that gave it a subtable
	gen    uint32
}

const (
	entrySub = 1 << 5 // the entry points at a subtable (sym is its start)
	entryLen = 31
)

// Which incomplete codes build accepts.
const (
	codeComplete = iota // the code length code
	codeZlib            // literal/length and distance: a lone 1-bit code
	codeAny             // the fixed distance code
)

// build makes the table for the code lengths lens (RFC 1951 3.2.2),
// with a primary table of at most maxBits bits. Like zlib it refuses
// over-subscribed codes and incomplete ones, except (codeZlib) a lone
// code of length one; no code at all gives a table that fails when used.
func (t *huffTable) build(lens []uint8, maxBits uint, mode int) error {
	var count [16]uint16
	maxLen := uint(0)
	for _, l := range lens {
		count[l&15]++
	}
	count[0] = 0
	for l := 15; l > 0; l-- {
		if count[l] != 0 {
			maxLen = uint(l)
			break
		}
	}
	left := 1
	for l := 1; l <= 15; l++ {
		left <<= 1
		left -= int(count[l])
		if left < 0 {
			return errInflateCorrupt // over-subscribed
		}
	}
	if maxLen > 0 && left > 0 && mode != codeAny && (mode == codeComplete || maxLen != 1) {
		return errInflateCorrupt // incomplete
	}
	tb := maxBits
	if maxLen < tb {
		tb = maxLen
	}
	if tb == 0 {
		tb = 1
	}
	sub := uint(0)
	if maxLen > tb {
		sub = maxLen - tb
	}
	t.bits, t.sub = tb, sub
	size := 1 << tb
	if cap(t.e) < size {
		t.e = make([]uint32, size, size+(32<<sub))
	}
	t.e = t.e[:size]
	if sub > 0 {
		// Which primary entries have their subtable in this build.
		if len(t.subGen) < size {
			t.subGen = make([]uint32, size)
		}
		t.gen++
		if t.gen == 0 {
			clear(t.subGen)
			t.gen = 1
		}
	}
	if left != 0 || maxLen == 0 {
		// Incomplete: entries no code reaches stay invalid. (A complete
		// code writes every entry.)
		clear(t.e)
	}
	if maxLen == 0 {
		return nil
	}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l <= 15; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	for sym, l := range lens {
		if l == 0 {
			continue
		}
		l &= 15
		c := next[l]
		next[l]++
		rev := uint32(bits.Reverse16(uint16(c))) >> (16 - uint(l))
		if uint(l) <= tb {
			e := uint32(sym)<<16 | uint32(l)
			for i := rev; i < uint32(size); i += 1 << l {
				t.e[i] = e
			}
			continue
		}
		// A long code: its first tb bits lead to a subtable.
		p := rev & uint32(size-1)
		if t.subGen[p] != t.gen {
			t.subGen[p] = t.gen
			start := len(t.e)
			t.e = slices.Grow(t.e, 1<<sub)[:start+1<<sub]
			if left != 0 {
				clear(t.e[start:])
			}
			t.e[p] = uint32(start)<<16 | entrySub | uint32(tb)
		}
		start := t.e[p] >> 16
		rest := uint(l) - tb
		e := uint32(sym)<<16 | uint32(rest)
		for i := rev >> tb; i < 1<<sub; i += 1 << rest {
			t.e[start+i] = e
		}
	}
	return nil
}

// inflater holds the tables of one decoding; pooled.
type inflater struct {
	lit, dist, pre huffTable
	lens           [288 + 32]uint8
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}

var fixedTables = sync.OnceValues(func() (*huffTable, *huffTable) {
	var lens [288 + 32]uint8
	for i := 0; i < 144; i++ {
		lens[i] = 8
	}
	for i := 144; i < 256; i++ {
		lens[i] = 9
	}
	for i := 256; i < 280; i++ {
		lens[i] = 7
	}
	for i := 280; i < 288; i++ {
		lens[i] = 8
	}
	for i := 288; i < 288+30; i++ {
		lens[i] = 5
	}
	lit, dist := new(huffTable), new(huffTable)
	if err := lit.build(lens[:288], 9, codeComplete); err != nil {
		panic(err)
	}
	// The fixed distance code has 30 symbols of 5 bits: incomplete.
	if err := dist.build(lens[288:288+30], 5, codeAny); err != nil {
		panic(err)
	}
	return lit, dist
})

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	preOrder  = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// bitReader reads bits least significant first. Past the end of src it
// reads zeros, counting them (over) so truncation is caught.
type bitReader struct {
	src  []byte
	pos  int
	bb   uint64
	nb   uint
	over int
}

// refill makes at least 56 bits available.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.src) {
		r.bb |= binary.LittleEndian.Uint64(r.src[r.pos:]) << r.nb
		r.pos += int((63 - r.nb) >> 3)
		r.nb |= 56
		return
	}
	for r.nb <= 56 {
		if r.pos < len(r.src) {
			r.bb |= uint64(r.src[r.pos]) << r.nb
		} else {
			r.over++
		}
		r.pos++
		r.nb += 8
	}
}

func (r *bitReader) take(n uint) uint32 {
	v := uint32(r.bb & (1<<n - 1))
	r.bb >>= n
	r.nb -= n
	return v
}

// decode reads one symbol; the caller has refilled enough bits.
func (r *bitReader) decode(t *huffTable) (uint32, bool) {
	e := t.e[r.bb&(1<<t.bits-1)]
	if e&entrySub != 0 {
		r.bb >>= t.bits
		r.nb -= t.bits
		e = t.e[e>>16+uint32(r.bb&(1<<t.sub-1))]
	}
	n := uint(e & entryLen)
	if n == 0 {
		return 0, false
	}
	r.bb >>= n
	r.nb -= n
	return e >> 16, true
}

// bytePos is where the next whole byte starts (after aligning).
func (r *bitReader) bytePos() int { return r.pos - int(r.nb>>3) }

// inflateZlib decodes the zlib stream at the start of src into dst, which
// it must fill exactly, and returns how many bytes of src the stream took.
func inflateZlib(dst, src []byte) (int, error) {
	if len(src) < 2 {
		return 0, errInflateShort
	}
	cmf, flg := src[0], src[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint(cmf)<<8|uint(flg))%31 != 0 || flg&0x20 != 0 {
		return 0, errInflateCorrupt
	}
	f := inflaters.Get().(*inflater)
	defer inflaters.Put(f)
	r := bitReader{src: src, pos: 2}
	out, err := f.inflate(dst, &r)
	if err != nil {
		return 0, err
	}
	if out != len(dst) {
		return 0, errInflateSmall
	}
	end := r.bytePos()
	if end+4 > len(src) {
		return 0, errInflateShort
	}
	if binary.BigEndian.Uint32(src[end:]) != adler32.Checksum(dst) {
		return 0, errInflateAdler
	}
	return end + 4, nil
}

// inflate decodes deflate blocks into dst and returns the bytes written.
func (f *inflater) inflate(dst []byte, r *bitReader) (int, error) {
	out := 0
	for {
		r.refill()
		if r.over > 8 {
			return 0, errInflateShort
		}
		final := r.take(1)
		switch r.take(2) {
		case 0: // stored
			r.take(r.nb & 7)
			p := r.bytePos()
			r.bb, r.nb = 0, 0
			if p+4 > len(r.src) {
				return 0, errInflateShort
			}
			n := int(binary.LittleEndian.Uint16(r.src[p:]))
			if uint16(n) != ^binary.LittleEndian.Uint16(r.src[p+2:]) {
				return 0, errInflateCorrupt
			}
			p += 4
			if p+n > len(r.src) {
				return 0, errInflateShort
			}
			if out+n > len(dst) {
				return 0, errInflateLong
			}
			copy(dst[out:], r.src[p:p+n])
			out += n
			r.pos = p + n
		case 1:
			lit, dist := fixedTables()
			var err error
			if out, err = decodeBlock(dst, out, r, lit, dist); err != nil {
				return 0, err
			}
		case 2:
			if err := f.readTables(r); err != nil {
				return 0, err
			}
			var err error
			if out, err = decodeBlock(dst, out, r, &f.lit, &f.dist); err != nil {
				return 0, err
			}
		default:
			return 0, errInflateCorrupt
		}
		if r.over > 8 || r.bytePos() > len(r.src) {
			return 0, errInflateShort
		}
		if final == 1 {
			// Drop the bits up to the byte boundary.
			r.take(r.nb & 7)
			return out, nil
		}
	}
}

// readTables reads a dynamic block's code lengths and builds its tables.
func (f *inflater) readTables(r *bitReader) error {
	r.refill()
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	npre := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errInflateCorrupt
	}
	var pre [19]uint8
	for i := 0; i < npre; i++ {
		if r.nb < 3 {
			r.refill()
		}
		pre[preOrder[i]] = uint8(r.take(3))
	}
	if err := f.pre.build(pre[:], 7, codeComplete); err != nil {
		return err
	}
	lens := f.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if r.nb < 32 {
			r.refill()
			if r.over > 8 {
				return errInflateShort
			}
		}
		sym, ok := r.decode(&f.pre)
		if !ok {
			return errInflateCorrupt
		}
		if sym < 16 {
			lens[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return errInflateCorrupt
			}
			val = lens[i-1]
			rep = 3 + int(r.take(2))
		case 17:
			rep = 3 + int(r.take(3))
		default:
			rep = 11 + int(r.take(7))
		}
		if i+rep > len(lens) {
			return errInflateCorrupt
		}
		for k := 0; k < rep; k++ {
			lens[i+k] = val
		}
		i += rep
	}
	if lens[256] == 0 {
		return errInflateCorrupt // no end of block
	}
	if err := f.lit.build(lens[:nlit], 10, codeZlib); err != nil {
		return err
	}
	return f.dist.build(lens[nlit:], 8, codeZlib)
}

// decodeBlock decodes one Huffman-coded block.
func decodeBlock(dst []byte, out int, r *bitReader, lit, dist *huffTable) (int, error) {
	for {
		// 15 bits of length code + 5 extra + 15 of distance + 13 extra.
		if r.nb < 48 {
			r.refill()
			if r.over > 8 {
				return 0, errInflateShort
			}
		}
		sym, ok := r.decode(lit)
		if !ok {
			return 0, errInflateCorrupt
		}
		if sym < 256 {
			if out >= len(dst) {
				return 0, errInflateLong
			}
			dst[out] = byte(sym)
			out++
			continue
		}
		if sym == 256 {
			return out, nil
		}
		sym -= 257
		if sym >= 29 {
			return 0, errInflateCorrupt
		}
		length := int(lenBase[sym]) + int(r.take(uint(lenExtra[sym])))
		dsym, ok := r.decode(dist)
		if !ok || dsym >= 30 {
			return 0, errInflateCorrupt
		}
		d := int(distBase[dsym]) + int(r.take(uint(distExtra[dsym])))
		if d > out {
			return 0, errInflateCorrupt
		}
		end := out + length
		if end > len(dst) {
			return 0, errInflateLong
		}
		if d >= length {
			copy(dst[out:end], dst[out-d:out])
			out = end
			continue
		}
		// Overlapping: copy the growing run.
		start := out - d
		for out < end {
			out += copy(dst[out:end], dst[start:out])
		}
	}
}
