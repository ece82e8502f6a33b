package store

import "fmt"

// Keys is a module's own bucket of ordered keys, for what is not rows of a
// table: counters, per-user key lists, postings, queues. The module names
// it (its bucket is declared like a table's, by name) and reads and writes
// it through these methods alone, so the same code runs on every engine.
//
//	var votes = store.Keys("collab.award_votes")
//	n := votes.Get(tx, key)
//
// A Keys is a []byte, so it is also what the ordered-key helpers
// (PutTimeKey, WalkPrefix...) take. Slices that Get and cursors return are
// valid only until the transaction ends; copy what must outlive it.
type Keys []byte

// Name is the bucket's name, for the module's list of buckets.
func (k Keys) Name() string { return string(k) }

func (k Keys) b(tx *Tx) (Bucket, error) {
	b := tx.bucket(k)
	if b == nil {
		return nil, fmt.Errorf("store: keys %s have no bucket (not declared?)", string(k))
	}
	return b, nil
}

// Get is the value under key, nil when there is none (or no bucket).
func (k Keys) Get(tx *Tx, key []byte) []byte {
	if b := tx.bucket(k); b != nil {
		return b.Get(key)
	}
	return nil
}

// Has says whether key is there.
func (k Keys) Has(tx *Tx, key []byte) bool { return k.Get(tx, key) != nil }

// Put sets key to value (an empty value is stored as such).
func (k Keys) Put(tx *Tx, key, value []byte) error {
	b, err := k.b(tx)
	if err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	return b.Put(key, value)
}

// Delete removes key; a missing key is no error.
func (k Keys) Delete(tx *Tx, key []byte) error {
	b, err := k.b(tx)
	if err != nil {
		return err
	}
	return b.Delete(key)
}

// Cursor walks the keys in byte order; with no bucket it finds nothing.
func (k Keys) Cursor(tx *Tx) Cursor {
	if b := tx.bucket(k); b != nil {
		return b.Cursor()
	}
	return emptyCursor{}
}

// Walk visits the keys that start with prefix (every key when it is
// empty), backwards when desc, until fn returns false.
func (k Keys) Walk(tx *Tx, prefix []byte, desc bool, fn func(key, value []byte) bool) {
	WalkPrefix(tx, k, prefix, desc, fn)
}

// DeletePrefix removes every key that starts with prefix (every key when
// it is empty) and says how many there were.
func (k Keys) DeletePrefix(tx *Tx, prefix []byte) (int, error) {
	var keys [][]byte
	k.Walk(tx, prefix, false, func(key, _ []byte) bool {
		keys = append(keys, append([]byte(nil), key...))
		return true
	})
	for _, key := range keys {
		if err := k.Delete(tx, key); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// Count is the number of keys. It reads them all (bbolt keeps no count):
// not for hot paths.
func (k Keys) Count(tx *Tx) int {
	if b := tx.bucket(k); b != nil {
		return b.KeyN()
	}
	return 0
}

// NextSequence takes the next number (from 1) of the bucket's own
// sequence; taken in the transaction that uses it, numbers are never
// handed out twice.
func (k Keys) NextSequence(tx *Tx) (uint64, error) {
	b, err := k.b(tx)
	if err != nil {
		return 0, err
	}
	return b.NextSequence()
}

// Exists says whether the bucket is there (migrations that retire one).
func (k Keys) Exists(tx *Tx) bool { return tx.bucket(k) != nil }

// Ensure creates the bucket when it is missing (in a write transaction).
func (k Keys) Ensure(tx *Tx) error {
	_, err := tx.etx.CreateBucketIfNotExists(k)
	return err
}

// Drop removes the bucket with its keys; a missing one is no error
// (migrations that retire a bucket).
func (k Keys) Drop(tx *Tx) error {
	if err := tx.etx.DeleteBucket(k); err != nil && err != ErrBucketNotFound {
		return err
	}
	return nil
}

type emptyCursor struct{}

func (emptyCursor) First() ([]byte, []byte)      { return nil, nil }
func (emptyCursor) Last() ([]byte, []byte)       { return nil, nil }
func (emptyCursor) Seek([]byte) ([]byte, []byte) { return nil, nil }
func (emptyCursor) Next() ([]byte, []byte)       { return nil, nil }
func (emptyCursor) Prev() ([]byte, []byte)       { return nil, nil }

// ForEach calls fn for every key in order, stopping at its first error.
func (k Keys) ForEach(tx *Tx, fn func(key, value []byte) error) error {
	var err error
	k.Walk(tx, nil, false, func(key, value []byte) bool {
		err = fn(key, value)
		return err == nil
	})
	return err
}
