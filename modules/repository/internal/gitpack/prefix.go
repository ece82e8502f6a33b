package gitpack

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// Prefix lists the objects, packed or loose, whose id starts with the hex
// prefix (at least 4 digits, lower or upper case), sorted, at most limit
// of them: enough to tell a unique abbreviation from an ambiguous one
// without reading any object.
func (s *Store) Prefix(prefix string, limit int) []Hash {
	prefix = strings.ToLower(prefix)
	if len(prefix) < 4 || len(prefix) > 40 || limit <= 0 {
		return nil
	}
	even, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return nil
	}
	if len(prefix)%2 == 1 && strings.Trim(prefix[len(prefix)-1:], "0123456789abcdef") != "" {
		return nil
	}
	match := func(h Hash) bool { return strings.HasPrefix(h.String(), prefix) }
	sn := s.snap.Load()
	for {
		seen := map[Hash]bool{}
		var out []Hash
		add := func(h Hash) bool {
			if !seen[h] && match(h) {
				seen[h] = true
				out = append(out, h)
			}
			return len(out) < limit
		}
		more := true
		for _, p := range sn.packs {
			if more = p.idx.withPrefix(even, add); !more {
				break
			}
		}
		if more {
			dir := filepath.Join(s.objDir, prefix[:2])
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				h, ok := ParseHex([]byte(prefix[:2] + e.Name()))
				if ok && !add(h) {
					break
				}
			}
		}
		if len(out) > 0 || !s.refresh(sn) {
			slices.SortFunc(out, func(a, b Hash) int { return bytes.Compare(a[:], b[:]) })
			return out
		}
		sn = s.snap.Load()
	}
}

// withPrefix calls fn for the names starting with the bytes pre (at least
// one) until fn returns false; it reports whether fn always returned true.
func (x *index) withPrefix(pre []byte, fn func(Hash) bool) bool {
	defer runtime.KeepAlive(x)
	lo := 0
	if pre[0] > 0 {
		lo = int(x.fanout[pre[0]-1])
	}
	hi := int(x.fanout[pre[0]])
	i := lo + sort.Search(hi-lo, func(k int) bool {
		return bytes.Compare(x.names[20*(lo+k):20*(lo+k)+len(pre)], pre) >= 0
	})
	for ; i < hi && bytes.HasPrefix(x.names[20*i:20*i+20], pre); i++ {
		var h Hash
		copy(h[:], x.names[20*i:])
		if !fn(h) {
			return false
		}
	}
	return true
}
