package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("database is locked by another process")

// Options tune how the database is opened. The zero value is usable.
type Options struct {
	// LockTimeout bounds the wait for the file lock; default 1s.
	LockTimeout time.Duration
	// MaxBatchSize caps how many Update calls share one transaction
	// (default 256).
	MaxBatchSize int
	// NoSync skips fsync; only for benchmarks and throwaway data.
	NoSync bool
}

// DB is an open Fennec database.
type DB struct {
	engine Engine
	path   string
	batch  groupCommit
	guard  txGuard
	// signals are the handlers of Signal and the poll's state.
	signals signals
	// probing is set while a readiness probe waits for the store.
	probing atomic.Bool
	// slowest is the longest a write function has run, in nanoseconds
	// (SlowestWrite).
	slowest atomic.Int64
}

// Tx is a read or read-write transaction of a DB.
type Tx struct {
	etx EngineTx
	db  *DB
	ctx context.Context
	// read remembers rows a write transaction has read (see rowMemo).
	read rowMemo
	// onCommit are the callbacks to run once this transaction's writes
	// are committed (OnCommit).
	onCommit []func()
	// signalled are the topics Signal sent without a payload.
	signalled map[string]bool
}

type txKey struct{}

// Context is the caller's context carrying this transaction. Code running
// inside a transaction passes it (not the outer context) to the services it
// calls, so that their View or Update joins this transaction instead of
// opening a second one: bbolt deadlocks when one goroutine holds a read
// transaction and waits for another while a writer remaps the file.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Writable says whether this is a read-write transaction.
func (tx *Tx) Writable() bool { return tx.etx.Writable() }

// OnCommit registers fn to run after this transaction's writes are
// committed (never for a run that was rolled back or run again), in the
// committing goroutine: it must be quick (a cache's Invalidate).
func (tx *Tx) OnCommit(fn func()) { tx.onCommit = append(tx.onCommit, fn) }

// WriteTo writes what this transaction sees of the whole database to w as
// a bbolt file (a backup's point in time).
func (tx *Tx) WriteTo(w io.Writer) (int64, error) { return tx.etx.WriteTo(w) }

// bucket is the named bucket, nil when missing.
func (tx *Tx) bucket(name []byte) Bucket { return tx.etx.Bucket(name) }

func (db *DB) newTx(ctx context.Context, etx EngineTx) *Tx {
	t := &Tx{etx: etx, db: db}
	t.ctx = context.WithValue(ctx, txKey{}, t)
	return t
}

// committed runs the transaction's OnCommit callbacks.
func (tx *Tx) committed() {
	for _, fn := range tx.onCommit {
		fn()
	}
}

// txFrom returns the open transaction of db that ctx carries, if any.
func (db *DB) txFrom(ctx context.Context) *Tx {
	t, _ := ctx.Value(txKey{}).(*Tx)
	if t != nil && t.db == db {
		return t
	}
	return nil
}

// ErrReadOnlyTx is returned by Update and Batch called with the context of a
// read-only transaction: a write cannot join a read, and opening a second
// transaction from inside the first could deadlock.
var ErrReadOnlyTx = errors.New("store: write inside a read-only transaction")

// Open opens (creating if needed) the database file at path.
func Open(path string, opts Options) (*DB, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create data directory: %w", err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync, FreelistType: bolt.FreelistMapType})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w (%s)", ErrLocked, path)
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db, err := OpenEngine(boltEngine{b}, opts)
	if err != nil {
		return nil, err
	}
	db.path = path
	return db, nil
}

// OpenEngine opens a DB on an engine (Open is the bbolt file's). The DB
// owns the engine: Close closes it.
func OpenEngine(e Engine, opts Options) (*DB, error) {
	db := &DB{engine: e}
	db.signals.init()
	db.batch.max = 256
	if opts.MaxBatchSize > 0 {
		db.batch.max = opts.MaxBatchSize
	}
	if err := db.UpdateAlone(context.Background(), func(tx *Tx) error {
		for _, b := range [][]byte{metaBucket, signalBucket, leaseBucket} {
			if _, err := tx.etx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		e.Close()
		return nil, err
	}
	return db, nil
}

// Engine is the engine the DB runs on.
func (db *DB) Engine() Engine { return db.engine }

// Path is the file the database lives in; empty for an engine that is
// not a file.
func (db *DB) Path() string { return db.path }

// Close closes the engine; it waits for open transactions.
func (db *DB) Close() error { return db.engine.Close() }

// View runs fn in a read-only transaction. When ctx carries an open
// transaction of this database (tx.Context()), fn runs in that one.
func (db *DB) View(ctx context.Context, fn func(*Tx) error) error {
	if t := db.txFrom(ctx); t != nil {
		return fn(t)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer db.guard.enter("View")()
	return db.engine.View(ctx, func(etx EngineTx) error {
		err := fn(db.newTx(ctx, etx))
		if eerr := etx.Err(); eerr != nil {
			return eerr
		}
		return err
	})
}

// Update runs fn in a read-write transaction shared with concurrent callers
// (group commit) and returns once that transaction is committed and fsynced.
// fn may run more than once: the package documentation gives the contract.
// When ctx carries an open read-write transaction of this database, fn runs
// in it and commits with it.
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
	if t := db.txFrom(ctx); t != nil {
		if !t.Writable() {
			return ErrReadOnlyTx
		}
		return fn(t)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The caller waits for the leader goroutine's commit: it must hold no
	// transaction of its own meanwhile.
	db.guard.check("Update")
	return db.batch.do(ctx, db, fence(ctx, fn))
}

// UpdateAlone runs fn exactly once, in a read-write transaction of its own,
// committed when fn returns nil. It is the serial path, for the few writes
// that must not share a transaction; callers say why.
func (db *DB) UpdateAlone(ctx context.Context, fn func(*Tx) error) error {
	if t := db.txFrom(ctx); t != nil {
		if !t.Writable() {
			return ErrReadOnlyTx
		}
		return fn(t)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer db.guard.enter("UpdateAlone")()
	return db.update(ctx, fence(ctx, fn))
}

// update is one read-write transaction, without the checks.
func (db *DB) update(ctx context.Context, fn func(*Tx) error) error {
	var tx *Tx
	err := db.engine.Update(context.WithoutCancel(ctx), func(etx EngineTx) error {
		tx = db.newTx(ctx, etx)
		err := db.timed(fn, tx)
		if eerr := etx.Err(); eerr != nil {
			return eerr
		}
		return err
	})
	if err == nil {
		tx.committed()
	}
	return err
}

// timed runs a write function and records how long it took (SlowestWrite).
func (db *DB) timed(fn func(*Tx) error, tx *Tx) error {
	start := time.Now()
	defer func() {
		d := int64(time.Since(start))
		for {
			old := db.slowest.Load()
			if d <= old || db.slowest.CompareAndSwap(old, d) {
				return
			}
		}
	}()
	return fn(tx)
}

// SlowestWrite is the longest one write function (of Update, UpdateAlone
// or a step of UpdateInSteps) has run since the database was opened or
// ResetSlowestWrite was called: the longest it kept every other writer
// waiting, the commit apart. Tests bound it for work a user controls the
// size of.
func (db *DB) SlowestWrite() time.Duration { return time.Duration(db.slowest.Load()) }

// ResetSlowestWrite starts SlowestWrite afresh.
func (db *DB) ResetSlowestWrite() { db.slowest.Store(0) }

// UpdateInSteps runs step in write transactions of its own (Update), one
// after the other, until it reports done. It is for work too large for
// one transaction, such as removing a deleted project's thousands of
// rows: done in one, it kept every other writer of the server waiting for
// seconds. Each step does a bounded part (a few hundred rows) and leaves
// the store consistent, and the work must be able to start again from
// what the store holds, since an error or a crash between two steps
// leaves the rest undone: an outbox handler, which is called again until
// it returns nil, completes it then. With a transaction in ctx every step
// runs in that one.
func (db *DB) UpdateInSteps(ctx context.Context, step func(tx *Tx) (done bool, err error)) error {
	for {
		done := false
		err := db.Update(ctx, func(tx *Tx) error {
			var err error
			done, err = step(tx)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// EnsureBuckets creates the named top-level buckets that do not exist yet.
func (db *DB) EnsureBuckets(names []string) error {
	return db.Update(context.Background(), func(tx *Tx) error {
		for _, n := range names {
			if _, err := tx.etx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return fmt.Errorf("store: create bucket %q: %w", n, err)
			}
		}
		return nil
	})
}

// Backup writes a consistent snapshot of the whole database to w while
// readers and writers carry on (bbolt serves it from one read transaction).
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	defer db.guard.enter("Backup")()
	err := db.engine.View(context.Background(), func(etx EngineTx) error {
		var err error
		n, err = etx.WriteTo(w)
		return err
	})
	return n, err
}

// BackupFile writes a snapshot to path atomically (temp file, fsync, rename)
// and checks that the copy opens as a database.
func (db *DB) BackupFile(path string) (int64, error) {
	return WriteSnapshot(path, db.Backup)
}

// WriteSnapshot writes what fill produces to path through a temp file, syncs
// it, verifies it is a readable bbolt file and renames it into place.
func WriteSnapshot(path string, fill func(io.Writer) (int64, error)) (int64, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".fennec-backup-*")
	if err != nil {
		return 0, fmt.Errorf("store: backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := fill(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("store: backup: %w", err)
	}
	if err := Verify(tmp.Name()); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, fmt.Errorf("store: backup: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return n, nil
}

// Verify opens a database file read-only and checks its page structure. A
// file shorter than its own meta page says is refused before any page is
// read (bbolt would otherwise fault on the unmapped tail, killing the process).
func Verify(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("store: verify: %w", err)
	}
	if fi.Size() == 0 {
		return fmt.Errorf("store: verify %s: the file is empty", path)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("store: verify %s: %w", path, err)
	}
	defer b.Close()
	return b.View(func(tx *bolt.Tx) error {
		if want := tx.Size(); fi.Size() < want {
			return fmt.Errorf("store: verify %s: truncated: %d bytes, its meta page needs %d", path, fi.Size(), want)
		}
		var errs []error
		for err := range tx.Check() { // drain: the checker goroutine must finish
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("store: verify %s: %w", path, errors.Join(errs...))
		}
		return nil
	})
}

// ErrStuck is returned by Probe when the store does not answer in time.
var ErrStuck = errors.New("store: no answer in time")

// Probe checks that the store serves a read and a durable write before ctx
// ends (readiness probes call it, so an orchestrator restarts an instance
// whose store hangs). Only one probe runs at a time: while an earlier one is
// still waiting, Probe fails at once instead of piling up goroutines.
func (db *DB) Probe(ctx context.Context) error {
	if !db.probing.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: the previous probe has not returned", ErrStuck)
	}
	done := make(chan error, 1)
	go func() {
		defer db.probing.Store(false)
		err := db.View(context.Background(), func(tx *Tx) error {
			tx.bucket(metaBucket).Get(probeKey)
			return nil
		})
		if err == nil {
			err = db.Update(context.Background(), func(tx *Tx) error {
				return tx.bucket(metaBucket).Put(probeKey, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
			})
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrStuck, ctx.Err())
	}
}

var probeKey = []byte("readiness-probe")
