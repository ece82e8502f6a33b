package store

import (
	"bytes"
	"encoding/binary"
	"time"
)

// Time-ordered keys and per-scope sequences: what a module needs for a
// scope's (a project's) list ordered by a time and for numbers allocated
// within a scope (an iid), kept in buckets of its own in the same
// transactions as its table.
//
// A time key is scope ++ unix nanoseconds ++ row id, each 8 bytes
// big-endian, so byte order is time order within a scope; its value is one
// byte of flags (open, closed, confidential...) a list can filter on
// without decoding the row. A page of a scope's list is then a cursor walk
// over keys alone.

// TimeKey is the key of row id at time t in scope.
func TimeKey[S, N ID](scope S, t time.Time, id N) []byte {
	k := make([]byte, 24)
	binary.BigEndian.PutUint64(k, uint64(scope))
	binary.BigEndian.PutUint64(k[8:], uint64(t.UnixNano()))
	binary.BigEndian.PutUint64(k[16:], uint64(id))
	return k
}

// PutTimeKey records row id at time t in scope, with its flags.
func PutTimeKey[S, N ID](tx *Tx, bucket []byte, scope S, t time.Time, id N, flags byte) error {
	return tx.bucket(bucket).Put(TimeKey(scope, t, id), []byte{flags})
}

// DeleteTimeKey removes what PutTimeKey recorded.
func DeleteTimeKey[S, N ID](tx *Tx, bucket []byte, scope S, t time.Time, id N) error {
	return tx.bucket(bucket).Delete(TimeKey(scope, t, id))
}

// WalkTimeKeys visits scope's rows in time order (newest first when desc)
// until fn returns false, reading keys only.
func WalkTimeKeys[S, N ID](tx *Tx, bucket []byte, scope S, desc bool, fn func(id N, flags byte) bool) {
	WalkPrefix(tx, bucket, Key(scope), desc, func(k, v []byte) bool {
		var f byte
		if len(v) > 0 {
			f = v[0]
		}
		return len(k) != 24 || fn(N(binary.BigEndian.Uint64(k[16:])), f)
	})
}

// DueTimeKeys lists, soonest first, up to limit of scope's rows whose time
// is not after now, with their times (what DeleteTimeKey needs), and says
// when the first row after them is due (zero: none). It is the read of a
// loop that acts on rows when their time comes (schedules, delayed jobs).
func DueTimeKeys[S, N ID](tx *Tx, bucket []byte, scope S, now time.Time, limit int) (ids []N, times []time.Time, next time.Time) {
	WalkPrefix(tx, bucket, Key(scope), false, func(k, _ []byte) bool {
		if len(k) != 24 {
			return true
		}
		at := time.Unix(0, int64(binary.BigEndian.Uint64(k[8:16]))).UTC()
		if at.After(now) || len(ids) == limit {
			next = at
			return false
		}
		ids = append(ids, N(binary.BigEndian.Uint64(k[16:])))
		times = append(times, at)
		return true
	})
	return ids, times, next
}

// WalkPrefix visits the keys of bucket that start with prefix, in byte
// order (backwards when desc), until fn returns false. The slices are
// valid only during the call. It is the walk under every ordered list: a
// scope's time keys, a user's keys in a module's own layout.
func WalkPrefix(tx *Tx, bucket, prefix []byte, desc bool, fn func(k, v []byte) bool) {
	c := Keys(bucket).Cursor(tx)
	var k, v []byte
	if desc {
		// From the first key past the prefix's range, one step back.
		if end := prefixEnd(prefix); end == nil {
			k, v = c.Last()
		} else if k, v = c.Seek(end); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	} else {
		k, v = c.Seek(prefix)
	}
	for k != nil && bytes.HasPrefix(k, prefix) {
		if !fn(k, v) {
			return
		}
		if desc {
			k, v = c.Prev()
		} else {
			k, v = c.Next()
		}
	}
}

// prefixEnd is the least key greater than every key starting with prefix,
// or nil when there is none (a prefix of 0xff bytes only, or empty).
func prefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := append([]byte(nil), prefix[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// NextInSequence takes the next number (from 1) of the sequence stored
// under key in bucket. Taken in the transaction that uses it, numbers have
// neither gaps nor duplicates, whatever the concurrency.
func NextInSequence[N ID](tx *Tx, bucket, key []byte) (N, error) {
	b := tx.bucket(bucket)
	var n uint64
	if v := b.Get(key); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	return N(n), b.Put(key, Key(n))
}

// Window is list[offset:offset+limit], clipped to the list: one page of
// ids or rows a query read, for the offset and limit a service was given.
// It is empty, never nil, past the end; a negative offset or limit counts
// as zero.
func Window[T any](list []T, offset, limit int) []T {
	from := min(max(offset, 0), len(list))
	return list[from:min(from+max(limit, 0), len(list))]
}
