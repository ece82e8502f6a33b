package store

import (
	"context"
	"errors"
	"io"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// boltEngine is the default Engine: one bbolt file. Its transactions never
// conflict (one writer at a time), so Update runs fn once.
type boltEngine struct{ db *bolt.DB }

func (e boltEngine) Name() string { return "bbolt" }

func (e boltEngine) View(_ context.Context, fn func(EngineTx) error) error {
	return e.db.View(func(tx *bolt.Tx) error { return fn((*boltTx)(tx)) })
}

func (e boltEngine) Update(_ context.Context, fn func(EngineTx) error) error {
	return e.db.Update(func(tx *bolt.Tx) error { return fn((*boltTx)(tx)) })
}

func (e boltEngine) Close() error { return e.db.Close() }

// The wrappers are the bbolt types renamed, so that putting one in an
// interface costs no allocation.
type (
	boltTx     bolt.Tx
	boltBucket bolt.Bucket
	boltCursor bolt.Cursor
)

func (t *boltTx) raw() *bolt.Tx                      { return (*bolt.Tx)(t) }
func (t *boltTx) Writable() bool                     { return t.raw().Writable() }
func (t *boltTx) Err() error                         { return nil }
func (t *boltTx) WriteTo(w io.Writer) (int64, error) { return t.raw().WriteTo(w) }

func (t *boltTx) Bucket(name []byte) Bucket {
	if b := t.raw().Bucket(name); b != nil {
		return (*boltBucket)(b)
	}
	return nil
}

func (t *boltTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
	b, err := t.raw().CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return (*boltBucket)(b), nil
}

func (t *boltTx) DeleteBucket(name []byte) error {
	err := t.raw().DeleteBucket(name)
	if errors.Is(err, bolterrors.ErrBucketNotFound) {
		return ErrBucketNotFound
	}
	return err
}

func (t *boltTx) Buckets() ([][]byte, error) {
	var out [][]byte
	err := t.raw().ForEach(func(name []byte, _ *bolt.Bucket) error {
		out = append(out, append([]byte(nil), name...))
		return nil
	})
	return out, err
}

func (b *boltBucket) raw() *bolt.Bucket             { return (*bolt.Bucket)(b) }
func (b *boltBucket) Get(k []byte) []byte           { return b.raw().Get(k) }
func (b *boltBucket) Put(k, v []byte) error         { return b.raw().Put(k, v) }
func (b *boltBucket) Delete(k []byte) error         { return b.raw().Delete(k) }
func (b *boltBucket) Cursor() Cursor                { return (*boltCursor)(b.raw().Cursor()) }
func (b *boltBucket) NextSequence() (uint64, error) { return b.raw().NextSequence() }
func (b *boltBucket) Sequence() uint64              { return b.raw().Sequence() }
func (b *boltBucket) SetSequence(n uint64) error    { return b.raw().SetSequence(n) }

// KeyN counts with a cursor in a write transaction: bbolt's Stats reads
// the committed pages only, so it missed the transaction's own puts and
// deletes.
func (b *boltBucket) KeyN() int {
	if !b.raw().Writable() {
		return b.raw().Stats().KeyN
	}
	n := 0
	c := b.raw().Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

func (c *boltCursor) raw() *bolt.Cursor              { return (*bolt.Cursor)(c) }
func (c *boltCursor) First() ([]byte, []byte)        { return c.raw().First() }
func (c *boltCursor) Last() ([]byte, []byte)         { return c.raw().Last() }
func (c *boltCursor) Seek(k []byte) ([]byte, []byte) { return c.raw().Seek(k) }
func (c *boltCursor) Next() ([]byte, []byte)         { return c.raw().Next() }
func (c *boltCursor) Prev() ([]byte, []byte)         { return c.raw().Prev() }
