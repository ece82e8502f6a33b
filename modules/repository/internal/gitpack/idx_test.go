package gitpack

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"testing"
)

// TestIndexFind checks lookups in indexes written by writeIndex: every
// present id found at its place, absent ones (also between and around
// present ones) not found, with skewed ids too.
func TestIndexFind(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7, 100, 5000, 70000} {
		for _, skew := range []bool{false, true} {
			var ents []idxEntry
			for i := 0; i < n; i++ {
				var h Hash
				if skew {
					// Clustered ids: same first 9 bytes for runs.
					h[0] = byte(i % 3)
					h[9] = byte(i >> 8)
					h[10] = byte(i)
				} else {
					h = sha1.Sum(binary.BigEndian.AppendUint32(nil, uint32(i)))
				}
				ents = append(ents, idxEntry{h, int64(12 + i), uint32(i)})
			}
			var buf bytes.Buffer
			if _, err := writeIndex(&buf, ents, Hash{}); err != nil {
				t.Fatal(err)
			}
			x, err := parseIndex(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range ents {
				pos, ok := x.find(e.hash)
				if !ok || pos != i || x.name(pos) != e.hash || x.offset(pos) != e.off {
					t.Fatalf("n %d skew %v: find(%s) = %d %v", n, skew, e.hash, pos, ok)
				}
				for _, d := range []int{-1, 1} {
					g := e.hash
					g[19] += byte(d)
					if _, ok := x.find(g); ok && g != e.hash {
						found := false
						for _, f := range ents {
							found = found || f.hash == g
						}
						if !found {
							t.Fatalf("found absent %s", g)
						}
					}
				}
			}
			var zero, ff Hash
			for i := range ff {
				ff[i] = 0xff
			}
			for _, h := range []Hash{zero, ff} {
				_, ok := x.find(h)
				present := false
				for _, e := range ents {
					present = present || e.hash == h
				}
				if ok != present {
					t.Fatalf("find(%s) = %v", h, ok)
				}
			}
		}
	}
}

func TestIndexLargeOffsets(t *testing.T) {
	t.Parallel()
	ents := []idxEntry{
		{sha1.Sum([]byte("a")), 12, 1},
		{sha1.Sum([]byte("b")), 1 << 33, 2},
		{sha1.Sum([]byte("c")), 0x7fffffff, 3},
		{sha1.Sum([]byte("d")), 0x80000000, 4},
	}
	var buf bytes.Buffer
	if _, err := writeIndex(&buf, append([]idxEntry(nil), ents...), Hash{1}); err != nil {
		t.Fatal(err)
	}
	x, err := parseIndex(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.large) != 16 {
		t.Fatalf("%d bytes of large offsets", len(x.large))
	}
	for _, e := range ents {
		i, ok := x.find(e.hash)
		crc, _ := x.crc(i)
		if !ok || x.offset(i) != e.off || crc != e.crc {
			t.Fatalf("%s: %d %v", e.hash, x.offset(i), ok)
		}
	}
	// Corrupt indexes are refused.
	b := buf.Bytes()
	for _, bad := range [][]byte{b[:100], b[:len(b)-1], append(bytes.Clone(b[:8]), make([]byte, 1024)...)} {
		if _, err := parseIndex(bad); err == nil {
			t.Fatalf("parsed a corrupt index of %d bytes", len(bad))
		}
	}
}
