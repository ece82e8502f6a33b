package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json/v1"
)

var metaBucket = []byte("_meta")

// Record is the constraint on the pointer type of a table's rows: a row knows
// its own id so the table can assign it on insert.
type Record[T any, I ID] interface {
	*T
	RecordID() I
	SetRecordID(I)
}

// ID is the constraint on a table's id type: int64 or a module's named id
// (snippet.ID, cicd.JobID), so rows, services and contracts share one type
// and no caller converts. Ids are positive; the key is their 8 big-endian
// bytes either way, so a table written with uint64 ids reads the same.
type ID interface{ ~int64 | ~uint64 }

// Index describes a secondary index. Keys returns the index keys of a row
// (already normalised, e.g. lower-cased); empty keys are skipped. A unique
// index refuses a second row with the same key with a *ConflictError.
//
// A Search index is a text index (search.go): Keys returns the texts a
// search looks in (a name, a path, a description), and the index holds
// their lower-case trigrams; Table.Search reads it. It is never Unique.
type Index[T any] struct {
	Name   string
	Unique bool
	Search bool
	Keys   func(*T) []string
}

// keysOf are a row's distinct keys in the index: its trigrams, sorted,
// for a search index.
func (ix *Index[T]) keysOf(rec *T) []string {
	if ix.Search {
		return searchKeys(ix.Keys(rec))
	}
	return uniqueKeys(ix.Keys(rec))
}

// Table stores rows of T as JSON under big-endian ids, with its indexes kept
// in the same transaction. A Table value is immutable after NewTable and safe
// for concurrent use; all state lives in the transaction passed to each call.
type Table[I ID, T any, P Record[T, I]] struct {
	name    string
	bucket  []byte
	count   []byte
	indexes []Index[T]
	ibucket map[string][]byte
}

// NewTable defines a table of T keyed by I: store.NewTable[snippet.ID,
// Snippet]("snippets.snippets"). name must be unique across the
// application; modules prefix it with their own name ("identity.users").
func NewTable[I ID, T any, P Record[T, I]](name string, indexes ...Index[T]) *Table[I, T, P] {
	t := &Table[I, T, P]{
		name:    name,
		bucket:  []byte(name),
		count:   []byte("count:" + name),
		indexes: indexes,
		ibucket: make(map[string][]byte, len(indexes)),
	}
	for _, ix := range indexes {
		t.ibucket[ix.Name] = []byte(name + "#" + ix.Name)
	}
	return t
}

// Name is the table's name.
func (t *Table[I, T, P]) Name() string { return t.name }

// Buckets lists the bbolt buckets the table needs; declare them at start-up.
func (t *Table[I, T, P]) Buckets() []string {
	out := []string{t.name}
	for _, ix := range t.indexes {
		out = append(out, string(t.ibucket[ix.Name]))
	}
	return out
}

// Key encodes an id as the 8-byte big-endian key used by every table, so
// byte order equals numeric order.
func Key[N ID](id N) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(id))
	return k[:]
}

// IDString is an id in decimal, as index keys and composite keys hold it
// ("42", "7/42") and as references, paths and headers show it, for every
// id type, so no module keeps its own formatter.
func IDString[N ID](id N) string {
	if id < 0 {
		return strconv.FormatInt(int64(id), 10)
	}
	return strconv.FormatUint(uint64(id), 10)
}

// KeyID decodes a key made by Key.
func KeyID(k []byte) uint64 {
	if len(k) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k[len(k)-8:])
}

func (t *Table[I, T, P]) b(tx *Tx) (*bucketRef, error) {
	b := tx.bucket(t.bucket)
	if b == nil {
		return nil, fmt.Errorf("store: table %s has no bucket (not declared?)", t.name)
	}
	return &bucketRef{b}, nil
}

// Insert assigns the next id to rec and stores it with its index entries.
func (t *Table[I, T, P]) Insert(tx *Tx, rec P) error {
	b, err := t.b(tx)
	if err != nil {
		return err
	}
	// Check every unique key before writing anything or taking an id, so a
	// refused insert changes nothing even if the caller goes on and commits.
	if err := t.checkUnique(tx, (*T)(rec), 0); err != nil {
		return err
	}
	id, err := b.NextSequence()
	if err != nil {
		return err
	}
	rec.SetRecordID(I(id))
	if err := t.addIndexes(tx, (*T)(rec), id); err != nil {
		return err
	}
	if err := t.put(b, id, rec); err != nil {
		return err
	}
	return t.addCount(tx, 1)
}

// Get loads the row with the given id, or ErrNotFound.
func (t *Table[I, T, P]) Get(tx *Tx, id I) (P, error) {
	b, err := t.b(tx)
	if err != nil {
		return nil, err
	}
	v := b.Get(Key(id))
	if v == nil {
		return nil, ErrNotFound
	}
	rec, err := t.decode(v)
	if err == nil && tx.Writable() && len(t.indexes) > 0 {
		tx.read.remember(t.name, uint64(id), v, t.indexKeys((*T)(rec)))
	}
	return rec, err
}

// indexKeys are a row's keys in each index, in index order.
func (t *Table[I, T, P]) indexKeys(rec *T) [][]string {
	out := make([][]string, len(t.indexes))
	for i := range t.indexes {
		out[i] = t.indexes[i].keysOf(rec)
	}
	return out
}

// Exists reports whether a row with the id exists, without decoding it.
func (t *Table[I, T, P]) Exists(tx *Tx, id I) bool {
	b, err := t.b(tx)
	return err == nil && b.Get(Key(id)) != nil
}

// Update replaces an existing row, moving its index entries as needed.
func (t *Table[I, T, P]) Update(tx *Tx, rec P) error {
	b, err := t.b(tx)
	if err != nil {
		return err
	}
	id := uint64(rec.RecordID())
	old := b.Get(Key(id))
	if old == nil {
		return ErrNotFound
	}
	// The keys of the stored row: remembered when this transaction read
	// it (the usual read-modify-write), else decoded again.
	oldKeys, ok := tx.read.recall(t.name, id, old)
	if !ok {
		prev, err := t.decode(old)
		if err != nil {
			return err
		}
		oldKeys = t.indexKeys((*T)(prev))
	}
	if err := t.checkUnique(tx, (*T)(rec), id); err != nil {
		return err
	}
	if err := t.moveIndexes(tx, oldKeys, t.indexKeys((*T)(rec)), id); err != nil {
		return err
	}
	tx.read.forget(t.name, id)
	return t.put(b, id, rec)
}

// moveIndexes changes only the index entries whose keys differ between the
// row's old and new versions: most updates change no indexed field, and an
// entry deleted and put back again still dirties its pages, which the
// commit then writes.
func (t *Table[I, T, P]) moveIndexes(tx *Tx, before, after [][]string, id uint64) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		oldKeys, newKeys := before[i], after[i]
		if slices.Equal(oldKeys, newKeys) {
			continue
		}
		ib, _, err := t.index(tx, ix.Name)
		if err != nil {
			return err
		}
		if ix.Search {
			gone, come := diffSorted(oldKeys, newKeys)
			for _, key := range gone {
				if err := ib.Delete(compositeKey(key, id)); err != nil {
					return err
				}
			}
			for _, key := range come {
				if err := ib.Put(compositeKey(key, id), nil); err != nil {
					return err
				}
			}
			continue
		}
		for _, key := range oldKeys {
			if slices.Contains(newKeys, key) {
				continue
			}
			k := []byte(key)
			if !ix.Unique {
				k = compositeKey(key, id)
			} else if v := ib.Get(k); v == nil || KeyID(v) != id {
				continue
			}
			if err := ib.Delete(k); err != nil {
				return err
			}
		}
		for _, key := range newKeys {
			if slices.Contains(oldKeys, key) {
				continue
			}
			if !ix.Unique {
				if err := ib.Put(compositeKey(key, id), nil); err != nil {
					return err
				}
				continue
			}
			// checkUnique has refused a key another row holds.
			if err := ib.Put([]byte(key), Key(id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes a row and its index entries; a missing row is ErrNotFound.
func (t *Table[I, T, P]) Delete(tx *Tx, id I) error {
	b, err := t.b(tx)
	if err != nil {
		return err
	}
	old := b.Get(Key(id))
	if old == nil {
		return ErrNotFound
	}
	prev, err := t.decode(old)
	if err != nil {
		return err
	}
	if err := t.removeIndexes(tx, (*T)(prev), uint64(id)); err != nil {
		return err
	}
	if err := b.Delete(Key(id)); err != nil {
		return err
	}
	return t.addCount(tx, -1)
}

// Reindex rebuilds one index from every row; migrations use it when they add
// an index to a table that already has rows. A unique index that the rows
// violate fails with a *ConflictError (and the migration rolls back).
func (t *Table[I, T, P]) Reindex(tx *Tx, index string) error {
	_, ix, err := t.index(tx, index)
	if err != nil {
		return err
	}
	name := t.ibucket[index]
	if err := tx.etx.DeleteBucket(name); err != nil {
		return err
	}
	if _, err := tx.etx.CreateBucketIfNotExists(name); err != nil {
		return err
	}
	if ix.Search {
		return t.reindexSearch(tx, ix, name)
	}
	return t.Scan(tx, false, 0, func(p P) (bool, error) {
		rec := (*T)(p)
		id := uint64(p.RecordID())
		nb := &bucketRef{tx.bucket(name)}
		for _, key := range ix.keysOf(rec) {
			if ix.Unique {
				if v := nb.Get([]byte(key)); v != nil && KeyID(v) != id {
					return false, &ConflictError{Table: t.name, Index: ix.Name, Key: key}
				}
				if err := nb.Put([]byte(key), Key(id)); err != nil {
					return false, err
				}
				continue
			}
			if err := nb.Put(compositeKey(key, id), nil); err != nil {
				return false, err
			}
		}
		return true, nil
	})
}

// DeleteBy deletes every row whose key in an index is key (a user's keys,
// a project's statuses...) and returns how many it deleted.
func (t *Table[I, T, P]) DeleteBy(tx *Tx, index, key string) (int, error) {
	ids, err := t.IDsBy(tx, index, key)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		if err := t.Delete(tx, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// GetBy finds the row whose unique index key equals key.
func (t *Table[I, T, P]) GetBy(tx *Tx, index, key string) (P, error) {
	ib, ix, err := t.index(tx, index)
	if err != nil {
		return nil, err
	}
	if !ix.Unique {
		return nil, fmt.Errorf("store: index %s.%s is not unique", t.name, index)
	}
	v := ib.Get([]byte(key))
	if v == nil {
		return nil, ErrNotFound
	}
	return t.Get(tx, I(KeyID(v)))
}

// IDsBy returns the ids of the rows with the given key in an index, ascending.
func (t *Table[I, T, P]) IDsBy(tx *Tx, index, key string) ([]I, error) {
	ib, ix, err := t.index(tx, index)
	if err != nil {
		return nil, err
	}
	if ix.Unique {
		v := ib.Get([]byte(key))
		if v == nil {
			return []I{}, nil
		}
		return []I{I(KeyID(v))}, nil
	}
	ids := []I{}
	prefix := append([]byte(key), 0)
	c := ib.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			ids = append(ids, I(KeyID(k)))
		}
	}
	return ids, nil
}

// FirstIDsBy is IDsBy's first n ids at most: the next part of a removal
// done in steps (DB.UpdateInSteps), without listing every row each time.
func (t *Table[I, T, P]) FirstIDsBy(tx *Tx, index, key string, n int) ([]I, error) {
	ib, ix, err := t.index(tx, index)
	if err != nil {
		return nil, err
	}
	if ix.Unique || n <= 0 {
		ids, err := t.IDsBy(tx, index, key)
		return ids[:min(len(ids), max(n, 0))], err
	}
	ids := []I{}
	prefix := append([]byte(key), 0)
	c := ib.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < n; k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			ids = append(ids, I(KeyID(k)))
		}
	}
	return ids, nil
}

// IDs returns every row id in ascending order without decoding any row.
func (t *Table[I, T, P]) IDs(tx *Tx) ([]I, error) {
	b, err := t.b(tx)
	if err != nil {
		return nil, err
	}
	ids := make([]I, 0, t.Count(tx))
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		ids = append(ids, I(KeyID(k)))
	}
	return ids, nil
}

// Count is the number of rows, kept up to date on insert and delete.
func (t *Table[I, T, P]) Count(tx *Tx) int {
	v := tx.bucket(metaBucket).Get(t.count)
	if len(v) != 8 {
		return 0
	}
	return int(KeyID(v))
}

// Scan calls fn for rows in id order (descending when desc), skipping the
// first skip rows, until fn returns false or an error.
func (t *Table[I, T, P]) Scan(tx *Tx, desc bool, skip int, fn func(P) (bool, error)) error {
	b, err := t.b(tx)
	if err != nil {
		return err
	}
	c := b.Cursor()
	first, next := c.First, c.Next
	if desc {
		first, next = c.Last, c.Prev
	}
	for k, v := first(); k != nil; k, v = next() {
		if skip > 0 {
			skip--
			continue
		}
		rec, err := t.decode(v)
		if err != nil {
			return err
		}
		more, err := fn(rec)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Page returns up to limit rows after skipping offset, in id order, and the
// total row count.
func (t *Table[I, T, P]) Page(tx *Tx, desc bool, offset, limit int) ([]P, int, error) {
	if limit <= 0 {
		return []P{}, t.Count(tx), nil
	}
	if offset < 0 {
		offset = 0
	}
	out := make([]P, 0, min(limit, 1024))
	err := t.Scan(tx, desc, offset, func(p P) (bool, error) {
		out = append(out, p)
		return len(out) < limit, nil
	})
	return out, t.Count(tx), err
}

func (t *Table[I, T, P]) decode(v []byte) (P, error) {
	rec := P(new(T))
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("store: decode %s row: %w", t.name, err)
	}
	return rec, nil
}

func (t *Table[I, T, P]) put(b *bucketRef, id uint64, rec P) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode %s row: %w", t.name, err)
	}
	return b.Put(Key(id), v)
}

func (t *Table[I, T, P]) index(tx *Tx, name string) (*bucketRef, *Index[T], error) {
	for i := range t.indexes {
		if t.indexes[i].Name == name {
			b := tx.bucket(t.ibucket[name])
			if b == nil {
				return nil, nil, fmt.Errorf("store: index %s.%s has no bucket", t.name, name)
			}
			return &bucketRef{b}, &t.indexes[i], nil
		}
	}
	return nil, nil, fmt.Errorf("store: table %s has no index %q", t.name, name)
}

// checkUnique reports the first unique key of rec held by a row other than
// id (0: a row not stored yet).
func (t *Table[I, T, P]) checkUnique(tx *Tx, rec *T, id uint64) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		if !ix.Unique {
			continue
		}
		ib, _, err := t.index(tx, ix.Name)
		if err != nil {
			return err
		}
		for _, key := range uniqueKeys(ix.Keys(rec)) {
			if v := ib.Get([]byte(key)); v != nil && KeyID(v) != id {
				return &ConflictError{Table: t.name, Index: ix.Name, Key: key}
			}
		}
	}
	return nil
}

func (t *Table[I, T, P]) addIndexes(tx *Tx, rec *T, id uint64) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		ib, _, err := t.index(tx, ix.Name)
		if err != nil {
			return err
		}
		for _, key := range ix.keysOf(rec) {
			if ix.Unique {
				if v := ib.Get([]byte(key)); v != nil && KeyID(v) != id {
					return &ConflictError{Table: t.name, Index: ix.Name, Key: key}
				}
				if err := ib.Put([]byte(key), Key(id)); err != nil {
					return err
				}
				continue
			}
			if err := ib.Put(compositeKey(key, id), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Table[I, T, P]) removeIndexes(tx *Tx, rec *T, id uint64) error {
	for i := range t.indexes {
		ix := &t.indexes[i]
		ib, _, err := t.index(tx, ix.Name)
		if err != nil {
			return err
		}
		for _, key := range ix.keysOf(rec) {
			k := []byte(key)
			if !ix.Unique {
				k = compositeKey(key, id)
			} else if v := ib.Get(k); v == nil || KeyID(v) != id {
				continue
			}
			if err := ib.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Table[I, T, P]) addCount(tx *Tx, delta int) error {
	n := t.Count(tx) + delta
	if n < 0 {
		n = 0
	}
	return tx.bucket(metaBucket).Put(t.count, Key(uint64(n)))
}

func compositeKey(key string, id uint64) []byte {
	k := make([]byte, 0, len(key)+9)
	k = append(k, key...)
	k = append(k, 0)
	return append(k, Key(id)...)
}

func uniqueKeys(keys []string) []string {
	out := keys[:0:0]
	for _, k := range keys {
		if k == "" {
			continue
		}
		dup := false
		for _, o := range out {
			if o == k {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, k)
		}
	}
	return out
}

// Fold is the usual normalisation for case-insensitive unique keys.
func Fold(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
