package gitpack

// Resolving a received pack's deltas: the ids of ofs and ref deltas,
// computed by walking from each whole object (and each base the Store has,
// for a thin pack) down to the deltas on it, and completing a thin pack by
// appending the bases it left out.

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/zlib"
)

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
