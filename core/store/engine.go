package store

import (
	"context"
	"errors"
	"io"
)

// The engine seam. A DB runs on an Engine: flat named buckets of ordered
// byte keys, read and written in transactions. Everything above it (typed
// tables, indexes, search, ordered keys, sequences, group commit,
// migrations, the transaction in the context) is the store's own and
// identical on every engine; core/store/storetest states that contract as
// tests every engine must pass. bbolt (this file's neighbour boltengine.go)
// is the default; core/store/postgres is the other.

// Engine is a transactional store of named buckets of ordered keys.
type Engine interface {
	// Name says which engine this is ("bbolt", "postgres"), for logs,
	// health reports and errors.
	Name() string
	// View runs fn in a read-only transaction over a consistent snapshot.
	// ctx bounds the engine's own waits (a network engine's queries).
	View(ctx context.Context, fn func(EngineTx) error) error
	// Update runs fn in a read-write transaction, committed durably when fn
	// returns nil and rolled back otherwise. An engine whose transactions
	// can fail to serialise against another node's runs fn again (the
	// store's write functions allow it) and returns an error wrapping
	// ErrConflictRetry only when it gives up.
	Update(ctx context.Context, fn func(EngineTx) error) error
	// Close releases the engine; it waits for open transactions.
	Close() error
}

// EngineTx is one transaction of an Engine. A read that fails (a lost
// connection, a conflict) answers as if nothing were there and makes Err
// non-nil; the store then fails the whole transaction with that error,
// whatever fn returned, so no decision made on a failed read is committed.
type EngineTx interface {
	Writable() bool
	// Bucket is the named bucket, or nil when it does not exist.
	Bucket(name []byte) Bucket
	// CreateBucketIfNotExists makes the bucket if needed.
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	// DeleteBucket removes a bucket with its keys and sequence; a missing
	// bucket is ErrBucketNotFound.
	DeleteBucket(name []byte) error
	// Buckets lists every bucket's name in byte order.
	Buckets() ([][]byte, error)
	// Err is the first failure of a read in this transaction.
	Err() error
	// WriteTo writes what this transaction sees of every bucket to w as a
	// bbolt file, the portable form of Fennec's data (backups, moving
	// between engines), and returns its size.
	WriteTo(w io.Writer) (int64, error)
}

// Bucket is one bucket of an EngineTx. The slices it returns are valid only
// until the transaction ends (and, for a cursor, until its next move).
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() Cursor
	// NextSequence increments the bucket's sequence and returns it.
	NextSequence() (uint64, error)
	Sequence() uint64
	SetSequence(n uint64) error
	// KeyN counts the keys.
	KeyN() int
}

// Cursor walks a bucket's keys in byte order. A move past either end
// returns nil keys. A cursor sees the writes its transaction made before
// the move.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	// Seek moves to the first key not less than seek.
	Seek(seek []byte) (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
}

// ErrBucketNotFound is DeleteBucket's answer for a bucket that is not there.
var ErrBucketNotFound = errors.New("store: bucket not found")

// ErrConflictRetry wraps the error of a write that kept failing to
// serialise against concurrent writers (of other nodes) after the engine's
// retries.
var ErrConflictRetry = errors.New("store: transaction conflicts persisted")

// ErrUnavailable wraps an engine's failure to reach its database (a
// database server down or unreachable): the API answers 503 and the
// client may try again.
var ErrUnavailable = errors.New("store: the database is unavailable")
