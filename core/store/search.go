package store

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Text search: an index whose keys are the distinct trigrams (three bytes)
// of the lower case of a row's searched texts, kept in the same
// transaction as the row like every index.
//
// Layout: one key per row and trigram, trigram ++ 0x00 ++ id (8 bytes,
// big-endian), the layout of every non-unique index. A trigram is always
// three bytes, so the four-byte prefix trigram ++ 0x00 holds exactly one
// trigram's rows, in id order, and a row's membership in a list is one
// Seek. A row whose texts hold more than maxSearchTrigrams distinct
// trigrams (a long description) is not split into trigrams at all: it is
// kept under the one key overflowKey, and every search counts it a
// candidate, so a huge text costs its writer one key, not thousands.
//
// A query of three bytes or more (lower-cased) is answered by a
// leapfrog join of its trigrams' lists: each list is a cursor, and the one
// behind seeks to the highest id any other stands on. The number of seeks
// is bounded by the shortest list (times the number of trigrams), so the
// rarest trigram sets the cost whatever the order of the lists, and no
// per-trigram count needs maintaining on every write. The result is a
// superset: the trigrams may come from different texts or places. The
// caller keeps the rows its exact rule matches (ContainsFold on the
// documented fields). A shorter query has no trigram; Search says so and
// the caller scans.

// maxSearchTrigrams bounds the index keys of one row (see overflowKey).
const maxSearchTrigrams = 4096

// overflowKey is the one key of a row with too many trigrams. Four bytes,
// so its list (prefix 0xff 0xff 0xff 0xff 0x00) is no trigram's
// (trigram ++ 0x00).
const overflowKey = "\xff\xff\xff\xff"

// MinSearch is the shortest query, in bytes after lower-casing, that a
// search index can narrow.
const MinSearch = 3

// searchKeys are the sorted distinct trigrams of the lower case of texts
// (each text on its own: no trigram spans two fields), or overflowKey.
func searchKeys(texts []string) []string {
	set := map[string]struct{}{}
	for _, text := range texts {
		s := strings.ToLower(text)
		for i := 0; i+3 <= len(s); i++ {
			set[s[i:i+3]] = struct{}{}
		}
		if len(set) > maxSearchTrigrams {
			return []string{overflowKey}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// queryTrigrams are the distinct trigrams of the lower case of q, nil when
// it is shorter than MinSearch.
func queryTrigrams(q string) []string {
	s := strings.ToLower(q)
	if len(s) < MinSearch {
		return nil
	}
	out := make([]string, 0, len(s)-2)
	for i := 0; i+3 <= len(s); i++ {
		if t := s[i : i+3]; !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// ContainsFold is the rule a search index serves: text contains q in any
// case (both lower-cased, as the store lower-cases both for its keys).
func ContainsFold(text, q string) bool {
	return strings.Contains(strings.ToLower(text), strings.ToLower(q))
}

// Search returns, in ascending id order, the ids of the rows whose texts
// in the search index named index may contain q in any case: the rows
// holding every trigram of q, and those too long to split. The caller
// verifies each with its exact rule. ok is false when q is shorter than
// MinSearch bytes: the index cannot narrow it, and the caller scans.
func (t *Table[I, T, P]) Search(tx *Tx, index, q string) (ids []I, ok bool, err error) {
	ib, ix, err := t.index(tx, index)
	if err != nil {
		return nil, false, err
	}
	if !ix.Search {
		return nil, false, errNotSearch(t.name, index)
	}
	tris := queryTrigrams(q)
	if tris == nil {
		return nil, false, nil
	}
	ids = []I{}
	joined := leapfrog(ib, tris)
	overflow := postings(ib, overflowKey)
	// Both lists ascend; merge them (a row is in one or the other).
	i, j := 0, 0
	for i < len(joined) || j < len(overflow) {
		if j == len(overflow) || (i < len(joined) && joined[i] < overflow[j]) {
			ids = append(ids, I(joined[i]))
			i++
		} else {
			ids = append(ids, I(overflow[j]))
			j++
		}
	}
	return ids, true, nil
}

// postings is every id under key, ascending.
func postings(ib *bucketRef, key string) []uint64 {
	var out []uint64
	prefix := append([]byte(key), 0)
	c := ib.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			out = append(out, KeyID(k))
		}
	}
	return out
}

// leapfrog intersects the id lists of the trigrams, ascending.
func leapfrog(ib *bucketRef, tris []string) []uint64 {
	type list struct {
		prefix []byte
		seek   func([]byte) ([]byte, []byte)
		next   func() ([]byte, []byte)
		id     uint64
	}
	lists := make([]*list, len(tris))
	// at reads the id a cursor stands on, false past its list's end.
	at := func(l *list, k []byte) bool {
		if k == nil || !bytes.HasPrefix(k, l.prefix) || len(k) != len(l.prefix)+8 {
			return false
		}
		l.id = KeyID(k)
		return true
	}
	for i, tri := range tris {
		c := ib.Cursor()
		l := &list{prefix: append([]byte(tri), 0), seek: c.Seek, next: c.Next}
		if k, _ := l.seek(l.prefix); !at(l, k) {
			return nil
		}
		lists[i] = l
	}
	var out []uint64
	target := make([]byte, 0, 12)
	for {
		high := lists[0].id
		for _, l := range lists[1:] {
			high = max(high, l.id)
		}
		agree := true
		for _, l := range lists {
			if l.id == high {
				continue
			}
			agree = false
			target = append(append(target[:0], l.prefix...), Key(high)...)
			if k, _ := l.seek(target); !at(l, k) {
				return out
			}
		}
		if !agree {
			continue
		}
		out = append(out, high)
		if k, _ := lists[0].next(); !at(lists[0], k) {
			return out
		}
	}
}

// reindexSearch fills the empty bucket name with every row's trigrams.
// Keys are put in key order, each appended after the last: bbolt inserts
// into a node's sorted array and splits nodes only at commit, so the
// millions of keys of a large table put in row order (scattered over every
// trigram's list) would cost time quadratic in one transaction's size.
// The rows come in id order, so each trigram's list is gathered ascending.
func (t *Table[I, T, P]) reindexSearch(tx *Tx, ix *Index[T], name []byte) error {
	lists := map[string][]uint64{}
	err := t.Scan(tx, false, 0, func(p P) (bool, error) {
		id := uint64(p.RecordID())
		for _, key := range ix.keysOf((*T)(p)) {
			lists[key] = append(lists[key], id)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(lists))
	for k := range lists {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := tx.bucket(name)
	if bb, ok := b.(*boltBucket); ok {
		bb.raw().FillPercent = 0.9 // appended in order: pages need little room to grow
	}
	for _, key := range keys {
		for _, id := range lists[key] {
			if err := b.Put(compositeKey(key, id), nil); err != nil {
				return err
			}
		}
		delete(lists, key)
	}
	return nil
}

// diffSorted is what leaves (in before, not after) and what comes (in
// after, not before) between two sorted key lists: a search index's keys
// are too many for the pairwise comparison of the other indexes.
func diffSorted(before, after []string) (gone, come []string) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case j == len(after) || (i < len(before) && before[i] < after[j]):
			gone = append(gone, before[i])
			i++
		case i == len(before) || after[j] < before[i]:
			come = append(come, after[j])
			j++
		default:
			i++
			j++
		}
	}
	return gone, come
}

func errNotSearch(table, index string) error {
	return fmt.Errorf("store: index %s.%s is not a search index", table, index)
}
