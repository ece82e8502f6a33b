package gitpack

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
)

// index is a parsed pack index. It maps the file and looks names up in
// place: opening costs no read and no per-entry allocation, and the pages
// are the page cache's, shared. The mapping goes with the index, so its
// methods keep x alive (runtime.KeepAlive) while they read it.
type index struct {
	n       int
	fanout  [256]uint32
	names   []byte // n * 20, sorted
	crcs    []byte // n * 4; nil for a version 1 index
	offs    []byte // n * 4; the high bit marks an index into large
	large   []byte // 8 bytes each
	packSum Hash
}

var idxMagic = []byte{0xff, 't', 'O', 'c'}

// openIndex maps and parses an index file.
func openIndex(path string) (*index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < 8 {
		return nil, fmt.Errorf("%s: index truncated", path)
	}
	data, mapped, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x, err := parseIndex(data)
	if err != nil {
		if mapped {
			unmapFile(data)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if mapped {
		runtime.AddCleanup(x, unmapFile, data)
	}
	return x, nil
}

// parseIndex parses a version 2 (or legacy version 1) pack index.
func parseIndex(data []byte) (*index, error) {
	x := &index{}
	if len(data) >= 8 && bytes.Equal(data[:4], idxMagic) {
		if v := binary.BigEndian.Uint32(data[4:]); v != 2 {
			return nil, fmt.Errorf("gitpack: unsupported index version %d", v)
		}
		const hdr = 8 + 256*4
		if len(data) < hdr+40 {
			return nil, errors.New("gitpack: index truncated")
		}
		if err := x.readFanout(data[8:]); err != nil {
			return nil, err
		}
		n := x.n
		if int64(len(data)) < int64(hdr)+int64(n)*28+40 {
			return nil, errors.New("gitpack: index truncated")
		}
		p := hdr
		x.names = data[p : p+20*n]
		p += 20 * n
		x.crcs = data[p : p+4*n]
		p += 4 * n
		x.offs = data[p : p+4*n]
		p += 4 * n
		rest := len(data) - p - 40
		if rest < 0 || rest%8 != 0 {
			return nil, errors.New("gitpack: index has a bad size")
		}
		x.large = data[p : p+rest]
		for i := 0; i < n; i++ {
			o := binary.BigEndian.Uint32(x.offs[4*i:])
			if o&0x80000000 != 0 && int(o&0x7fffffff) >= rest/8 {
				return nil, errors.New("gitpack: index has a bad large offset")
			}
		}
		copy(x.packSum[:], data[len(data)-40:])
		return x, nil
	}
	// Version 1: fanout, then (4-byte offset, name) pairs. Rewritten into
	// the version 2 layout, without crc32s.
	if len(data) < 256*4+40 {
		return nil, errors.New("gitpack: index truncated")
	}
	if err := x.readFanout(data); err != nil {
		return nil, err
	}
	n := x.n
	if int64(len(data)) != 256*4+int64(n)*24+40 {
		return nil, errors.New("gitpack: index has a bad size")
	}
	x.names = make([]byte, 20*n)
	x.offs = make([]byte, 4*n)
	for i := 0; i < n; i++ {
		e := data[256*4+24*i:]
		copy(x.offs[4*i:], e[:4])
		copy(x.names[20*i:], e[4:24])
		if e[0]&0x80 != 0 {
			return nil, errors.New("gitpack: version 1 index offset too large")
		}
	}
	copy(x.packSum[:], data[len(data)-40:])
	return x, nil
}

func (x *index) readFanout(b []byte) error {
	var prev uint32
	for i := range x.fanout {
		v := binary.BigEndian.Uint32(b[4*i:])
		if v < prev {
			return errors.New("gitpack: index fanout is not monotonic")
		}
		x.fanout[i] = v
		prev = v
	}
	if prev > 1<<31 {
		return errors.New("gitpack: index too large")
	}
	x.n = int(prev)
	return nil
}

// find returns the position of h in the index. Object ids are uniformly
// distributed, so it interpolates (a few probes instead of a dozen cache
// misses), falling back to bisection when a guess goes wrong.
func (x *index) find(h Hash) (int, bool) {
	lo := 0
	if h[0] > 0 {
		lo = int(x.fanout[h[0]-1])
	}
	hi := int(x.fanout[h[0]])
	// Within a fanout bucket the first byte is h[0]: interpolate on the
	// next eight.
	key := binary.BigEndian.Uint64(h[1:9])
	klo, khi := uint64(0), ^uint64(0)
	names := x.names
	for probes := 0; lo < hi; probes++ {
		var m int
		if probes < 4 && hi-lo > 8 && khi > klo {
			ph, pl := bits.Mul64(key-klo, uint64(hi-lo))
			q, _ := bits.Div64(ph, pl, khi-klo)
			m = lo + int(q)
			if m >= hi {
				m = hi - 1
			}
		} else {
			m = int(uint(lo+hi) >> 1)
		}
		name := names[20*m : 20*m+20]
		k := binary.BigEndian.Uint64(name[1:9])
		c := 0
		switch {
		case k < key:
			c = -1
		case k > key:
			c = 1
		default:
			c = bytes.Compare(name[9:], h[9:])
		}
		if c == 0 {
			runtime.KeepAlive(x)
			return m, true
		}
		if c < 0 {
			lo, klo = m+1, k
		} else {
			hi, khi = m, k
		}
	}
	runtime.KeepAlive(x)
	return 0, false
}

func (x *index) name(i int) (h Hash) {
	copy(h[:], x.names[20*i:])
	runtime.KeepAlive(x)
	return h
}

func (x *index) offset(i int) int64 {
	o := binary.BigEndian.Uint32(x.offs[4*i:])
	if o&0x80000000 == 0 {
		runtime.KeepAlive(x)
		return int64(o)
	}
	j := int(o & 0x7fffffff)
	off := int64(binary.BigEndian.Uint64(x.large[8*j:]))
	runtime.KeepAlive(x)
	return off
}

// crc returns the crc32 of entry i's bytes in the pack; ok is false for a
// version 1 index, which has none.
func (x *index) crc(i int) (uint32, bool) {
	if x.crcs == nil {
		return 0, false
	}
	crc := binary.BigEndian.Uint32(x.crcs[4*i:])
	runtime.KeepAlive(x)
	return crc, true
}

// idxEntry is one object of an index being written.
type idxEntry struct {
	hash Hash
	off  int64
	crc  uint32
}

// writeIndex writes a version 2 index of entries (sorted here) for the
// pack whose trailer is packSum, and returns the index's own checksum.
func writeIndex(w io.Writer, entries []idxEntry, packSum Hash) (Hash, error) {
	sortIdxEntries(entries)
	for i := 1; i < len(entries); i++ {
		if entries[i].hash == entries[i-1].hash {
			return Hash{}, fmt.Errorf("gitpack: object %s twice in one pack", entries[i].hash)
		}
	}
	h := sha1.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 64<<10)
	var b [8]byte
	put32 := func(v uint32) {
		binary.BigEndian.PutUint32(b[:4], v)
		bw.Write(b[:4])
	}
	bw.Write(idxMagic)
	put32(2)
	var fan [256]uint32
	for _, e := range entries {
		fan[e.hash[0]]++
	}
	var sum uint32
	for i := range fan {
		sum += fan[i]
		put32(sum)
	}
	for _, e := range entries {
		bw.Write(e.hash[:])
	}
	for _, e := range entries {
		put32(e.crc)
	}
	var large []int64
	for _, e := range entries {
		if e.off < 0x80000000 {
			put32(uint32(e.off))
		} else {
			put32(0x80000000 | uint32(len(large)))
			large = append(large, e.off)
		}
	}
	for _, o := range large {
		binary.BigEndian.PutUint64(b[:], uint64(o))
		bw.Write(b[:])
	}
	bw.Write(packSum[:])
	if err := bw.Flush(); err != nil {
		return Hash{}, err
	}
	var sumIdx Hash
	copy(sumIdx[:], h.Sum(nil))
	if _, err := w.Write(sumIdx[:]); err != nil {
		return Hash{}, err
	}
	return sumIdx, nil
}

// sortIdxEntries sorts by id: ids are uniform, so a counting sort on the
// first 16 bits leaves buckets of a few entries to finish by insertion.
func sortIdxEntries(entries []idxEntry) {
	if len(entries) < 1024 {
		slices.SortFunc(entries, func(a, b idxEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) })
		return
	}
	start := make([]int32, 1<<16+1)
	for i := range entries {
		start[int(entries[i].hash[0])<<8|int(entries[i].hash[1])+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	tmp := make([]idxEntry, len(entries))
	fill := slices.Clone(start[:1<<16])
	for _, e := range entries {
		k := int(e.hash[0])<<8 | int(e.hash[1])
		tmp[fill[k]] = e
		fill[k]++
	}
	for b := 0; b < 1<<16; b++ {
		bucket := tmp[start[b]:start[b+1]]
		if len(bucket) > 1 {
			slices.SortFunc(bucket, func(a, b idxEntry) int { return bytes.Compare(a.hash[2:], b.hash[2:]) })
		}
	}
	copy(entries, tmp)
}
