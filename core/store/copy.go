package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// WriteBoltFile writes what etx sees of every bucket (keys, values and
// sequences) to w as a bbolt file: how an engine that is not a bbolt file
// produces the portable snapshot (EngineTx.WriteTo). It builds the file in
// the temporary directory and streams it.
func WriteBoltFile(etx EngineTx, w io.Writer) (int64, error) {
	f, err := os.CreateTemp("", "fennec-snapshot-*.db")
	if err != nil {
		return 0, err
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)
	b, err := bolt.Open(name, 0o600, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return 0, err
	}
	dst := boltEngine{b}
	if err := copyBuckets(context.Background(), etx, dst); err != nil {
		b.Close()
		return 0, err
	}
	if err := b.Close(); err != nil {
		return 0, err
	}
	src, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	return io.Copy(w, src)
}

// Copy copies every bucket of from into to, which must hold none of them
// yet: moving an instance from one engine to another. It reads one
// consistent snapshot of from and writes to in transactions of bounded size.
func Copy(ctx context.Context, from, to Engine) error {
	return from.View(ctx, func(etx EngineTx) error { return copyBuckets(ctx, etx, to) })
}

// copyBatch bounds the keys written per transaction of a copy.
const copyBatch = 2000

func copyBuckets(ctx context.Context, src EngineTx, dst Engine) error {
	names, err := src.Buckets()
	if err != nil {
		return err
	}
	for _, name := range names {
		b := src.Bucket(name)
		if b == nil {
			continue
		}
		seq := b.Sequence()
		c := b.Cursor()
		k, v := c.First()
		for first := true; first || k != nil; first = false {
			// The batch is read first, so that a write function run
			// again (an engine's retry) writes the same keys.
			var keys, values [][]byte
			for ; k != nil && len(keys) < copyBatch; k, v = c.Next() {
				keys = append(keys, append([]byte(nil), k...))
				values = append(values, append([]byte{}, v...))
			}
			err := dst.Update(ctx, func(dtx EngineTx) error {
				db, err := dtx.CreateBucketIfNotExists(name)
				if err != nil {
					return err
				}
				if err := db.SetSequence(seq); err != nil {
					return err
				}
				for i := range keys {
					if err := db.Put(keys[i], values[i]); err != nil {
						return err
					}
				}
				return dtx.Err()
			})
			if err != nil {
				return fmt.Errorf("store: copy bucket %q: %w", name, err)
			}
		}
		if err := src.Err(); err != nil {
			return err
		}
	}
	return src.Err()
}

// BucketSummary is what Summarize reads of one bucket: enough to tell two
// copies of a store apart without holding either in memory.
type BucketSummary struct {
	Keys     int
	Sequence uint64
	// Digest is a SHA-256 of every key and value in order, each
	// length-prefixed, so that two buckets with the same keys but a value
	// moved from one key to the next differ.
	Digest [sha256.Size]byte
}

// Summarize reads one consistent snapshot of e and returns every bucket's
// summary by name. Copy's callers compare the summaries of both sides to
// prove the copy whole.
func Summarize(ctx context.Context, e Engine) (map[string]BucketSummary, error) {
	out := map[string]BucketSummary{}
	err := e.View(ctx, func(etx EngineTx) error {
		names, err := etx.Buckets()
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := ctx.Err(); err != nil {
				return err
			}
			b := etx.Bucket(name)
			if b == nil {
				continue
			}
			s := BucketSummary{Sequence: b.Sequence()}
			h := sha256.New()
			var size [8]byte
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				s.Keys++
				binary.BigEndian.PutUint64(size[:], uint64(len(k)))
				h.Write(size[:])
				h.Write(k)
				binary.BigEndian.PutUint64(size[:], uint64(len(v)))
				h.Write(size[:])
				h.Write(v)
			}
			h.Sum(s.Digest[:0])
			out[string(name)] = s
			if err := etx.Err(); err != nil {
				return err
			}
		}
		return etx.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// HoldsData says whether any bucket of e has a key or a sequence: empty
// buckets (those every open creates) are no data, so a database a Fennec
// server only ever opened counts as empty.
func HoldsData(ctx context.Context, e Engine) (bool, error) {
	held := false
	err := e.View(ctx, func(etx EngineTx) error {
		names, err := etx.Buckets()
		if err != nil {
			return err
		}
		for _, name := range names {
			b := etx.Bucket(name)
			if b == nil {
				continue
			}
			if k, _ := b.Cursor().First(); k != nil || b.Sequence() != 0 {
				held = true
				break
			}
		}
		return etx.Err()
	})
	return held, err
}

// Empty removes every bucket of e, with its keys and sequence, in one
// transaction: a restore or a copy over a database that held data.
func Empty(ctx context.Context, e Engine) error {
	return e.Update(ctx, func(etx EngineTx) error {
		names, err := etx.Buckets()
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := etx.DeleteBucket(name); err != nil && !errors.Is(err, ErrBucketNotFound) {
				return err
			}
		}
		return etx.Err()
	})
}
