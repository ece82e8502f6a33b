package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fennec-forge/fennec/core/store"
)

// The schema: every bucket's keys in one table, ordered by (bucket, key)
// through its primary key, and a row per bucket for its existence and
// sequence. bytea compares bytewise, which is the order bbolt gives and
// the store relies on.
const schema = `
CREATE TABLE IF NOT EXISTS fennec_buckets (
	name bytea PRIMARY KEY,
	seq  bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS fennec_kv (
	bucket bytea NOT NULL,
	k      bytea NOT NULL,
	v      bytea NOT NULL,
	PRIMARY KEY (bucket, k)
);`

// Options tune the engine. The zero value is usable.
type Options struct {
	// MaxRetries bounds how often a write that fails to serialise is run
	// again (default 30).
	MaxRetries int
	// AttemptTimeout bounds one transaction attempt (default 60 s), so a
	// database that stops answering fails writes instead of hanging them.
	AttemptTimeout time.Duration
}

// Engine is a store.Engine on a PostgreSQL database.
type Engine struct {
	pool *pgxpool.Pool
	opts Options
	// known holds buckets seen to exist. Buckets are created at start-up
	// and dropped only by migrations, so a bucket's existence is asked of
	// the database once per node, not once per transaction.
	known sync.Map // string -> struct{}
}

var _ store.Engine = (*Engine)(nil)

// Open connects to the database at dsn (a postgres:// URL; pool_max_conns
// and the other pgx pool settings may be given in it) and creates the
// schema when it is missing.
func Open(ctx context.Context, dsn string, opts Options) (*Engine, error) {
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 30
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = time.Minute
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if cfg.MaxConns < 32 && !hasParam(dsn, "pool_max_conns") {
		cfg.MaxConns = 32
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	e := &Engine{pool: pool, opts: opts}
	// Several nodes starting together may race to create the schema; the
	// loser of CREATE TABLE IF NOT EXISTS gets a unique violation and tries
	// again.
	for attempt := 0; ; attempt++ {
		_, err = pool.Exec(ctx, schema)
		if err == nil || attempt == 5 || !isCode(err, "23505", "42P07") {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: create schema: %w", err)
	}
	return e, nil
}

func hasParam(dsn, name string) bool {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false
	}
	_, ok := cfg.RuntimeParams[name]
	return ok
}

// Shared says several processes may use the database at once.
func (e *Engine) Shared() bool { return true }

// Name is "postgres".
func (e *Engine) Name() string { return "postgres" }

// Pool is the engine's connection pool, for the node's own tables (leases,
// health) that live beside the store's.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool }

// Close closes the pool.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}

// View runs fn in a read-only REPEATABLE READ transaction: one snapshot
// of the database, as a bbolt read transaction is. (A read-only
// transaction has nothing to serialise against; REPEATABLE READ spares it
// the serialisable mode's rare read-only failures.)
func (e *Engine) View(ctx context.Context, fn func(store.EngineTx) error) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.AttemptTimeout)
	defer cancel()
	ptx, err := e.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return wrap("begin", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	t := &tx{e: e, ptx: ptx, ctx: ctx}
	if err := fn(t); err != nil {
		return err
	}
	return t.err
}

// Update runs fn in a SERIALIZABLE transaction and commits it. A
// transaction that fails to serialise against a concurrent one (another
// node's, or this node's next group) is rolled back and fn run again,
// after a short random pause, up to MaxRetries times.
func (e *Engine) Update(ctx context.Context, fn func(store.EngineTx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = e.updateOnce(ctx, fn)
		if err == nil || !retryable(err) {
			return err
		}
		if attempt == e.opts.MaxRetries {
			return fmt.Errorf("%w: %w", store.ErrConflictRetry, err)
		}
		backoff := time.Duration(1<<min(attempt, 7)) * time.Millisecond
		time.Sleep(backoff/2 + rand.N(backoff))
	}
}

func (e *Engine) updateOnce(ctx context.Context, fn func(store.EngineTx) error) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.AttemptTimeout)
	defer cancel()
	ptx, err := e.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return wrap("begin", err)
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	t := &tx{e: e, ptx: ptx, ctx: ctx, writable: true}
	if err := fn(t); err != nil {
		if t.err != nil {
			return t.err
		}
		return err
	}
	if t.flush(); t.err != nil {
		return t.err
	}
	if err := ptx.Commit(ctx); err != nil {
		return wrap("commit", err)
	}
	for name := range t.created {
		e.known.Store(name, struct{}{})
	}
	return nil
}

// retryable says whether err is a transaction's failure to serialise (or
// a deadlock), after which running it again may succeed.
func retryable(err error) bool { return isCode(err, "40001", "40P01") }

func isCode(err error, codes ...string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	for _, c := range codes {
		if pe.Code == c {
			return true
		}
	}
	return false
}

// tx is one transaction. Writes are queued and sent as one pipelined batch
// before the next read and at commit, so a row with its index entries
// costs one round trip, not one per key. A failure is kept in err: the
// transaction is then dead in PostgreSQL too, and the store fails it.
type tx struct {
	e        *Engine
	ptx      pgx.Tx
	ctx      context.Context
	writable bool
	pending  pgx.Batch
	// gen counts writes, so cursors know when what they fetched is stale.
	gen     uint64
	err     error
	created map[string]struct{}
}

func (t *tx) Writable() bool { return t.writable }
func (t *tx) Err() error     { return t.err }

func (t *tx) fail(err error) {
	if t.err == nil && err != nil {
		t.err = wrap("", err)
	}
}

// wrap names the engine in err, and marks a failure to reach the
// database as store.ErrUnavailable: the server's own connection errors
// (class 08) and shutdown (57P0x), or no answer at all (unreachable).
// Any other error (a bad value, a driver's misuse) is the caller's or
// ours, and stays what it is: a 500, not a 503 that invites a retry.
func wrap(what string, err error) error {
	if what != "" {
		what += ": "
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		if strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P0") {
			return fmt.Errorf("%w: postgres: %s%w", store.ErrUnavailable, what, err)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
	case unreachable(err):
		return fmt.Errorf("%w: postgres: %s%w", store.ErrUnavailable, what, err)
	}
	return fmt.Errorf("postgres: %s%w", what, err)
}

// unreachable tells the failures of the connection itself: no connection
// could be made, the socket failed or timed out, the server hung up, or
// the driver had closed the connection after such a failure.
func unreachable(err error) bool {
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// queue adds a write to the pending batch.
func (t *tx) queue(sql string, args ...any) {
	t.gen++
	t.pending.Queue(sql, args...)
}

// flush sends the pending writes.
func (t *tx) flush() {
	if t.pending.Len() == 0 || t.err != nil {
		return
	}
	b := t.pending
	t.pending = pgx.Batch{}
	t.fail(t.ptx.SendBatch(t.ctx, &b).Close())
}

// query flushes and runs a read; nil when the transaction has failed.
func (t *tx) query(sql string, args ...any) pgx.Rows {
	if t.flush(); t.err != nil {
		return nil
	}
	rows, err := t.ptx.Query(t.ctx, sql, args...)
	if err != nil {
		t.fail(err)
		return nil
	}
	return rows
}

// scalar reads one value into dst; false when there is no row or the read
// failed.
func (t *tx) scalar(dst any, sql string, args ...any) bool {
	if t.flush(); t.err != nil {
		return false
	}
	err := t.ptx.QueryRow(t.ctx, sql, args...).Scan(dst)
	if errors.Is(err, pgx.ErrNoRows) {
		return false
	}
	if err != nil {
		t.fail(err)
		return false
	}
	return true
}

func (t *tx) Bucket(name []byte) store.Bucket {
	key := string(name)
	if _, ok := t.e.known.Load(key); ok {
		return &bucket{t: t, name: bytesCopy(name)}
	}
	if _, ok := t.created[key]; ok {
		return &bucket{t: t, name: bytesCopy(name)}
	}
	var one int
	if !t.scalar(&one, `SELECT 1 FROM fennec_buckets WHERE name = $1`, name) {
		return nil
	}
	t.e.known.Store(key, struct{}{})
	return &bucket{t: t, name: bytesCopy(name)}
}

func (t *tx) CreateBucketIfNotExists(name []byte) (store.Bucket, error) {
	if b := t.Bucket(name); b != nil {
		return b, nil
	}
	if t.err != nil {
		return nil, t.err
	}
	t.queue(`INSERT INTO fennec_buckets (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, bytesCopy(name))
	if t.created == nil {
		t.created = map[string]struct{}{}
	}
	t.created[string(name)] = struct{}{}
	return &bucket{t: t, name: bytesCopy(name)}, nil
}

func (t *tx) DeleteBucket(name []byte) error {
	var one int
	if !t.scalar(&one, `DELETE FROM fennec_buckets WHERE name = $1 RETURNING 1`, name) {
		if t.err != nil {
			return t.err
		}
		return store.ErrBucketNotFound
	}
	t.e.known.Delete(string(name))
	delete(t.created, string(name))
	t.queue(`DELETE FROM fennec_kv WHERE bucket = $1`, bytesCopy(name))
	return nil
}

func (t *tx) Buckets() ([][]byte, error) {
	rows := t.query(`SELECT name FROM fennec_buckets ORDER BY name`)
	if rows == nil {
		return nil, t.err
	}
	var out [][]byte
	for rows.Next() {
		var n []byte
		if err := rows.Scan(&n); err != nil {
			t.fail(err)
			break
		}
		out = append(out, n)
	}
	rows.Close()
	t.fail(rows.Err())
	return out, t.err
}

func (t *tx) WriteTo(w io.Writer) (int64, error) { return store.WriteBoltFile(t, w) }

func bytesCopy(b []byte) []byte { return append([]byte(nil), b...) }

// bucket is one bucket in one transaction.
type bucket struct {
	t    *tx
	name []byte
}

func (b *bucket) Get(k []byte) []byte {
	var v []byte
	if !b.t.scalar(&v, `SELECT v FROM fennec_kv WHERE bucket = $1 AND k = $2`, b.name, k) {
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}

func (b *bucket) Put(k, v []byte) error {
	if !b.t.writable {
		return errors.New("postgres: write in a read-only transaction")
	}
	if len(k) == 0 {
		return errors.New("postgres: empty key")
	}
	// The batch keeps the slices until it is sent: copy them, since
	// callers may reuse theirs.
	b.t.queue(`INSERT INTO fennec_kv (bucket, k, v) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, k) DO UPDATE SET v = excluded.v`, b.name, bytesCopy(k), append([]byte{}, v...))
	return nil
}

func (b *bucket) Delete(k []byte) error {
	if !b.t.writable {
		return errors.New("postgres: write in a read-only transaction")
	}
	b.t.queue(`DELETE FROM fennec_kv WHERE bucket = $1 AND k = $2`, b.name, bytesCopy(k))
	return nil
}

func (b *bucket) NextSequence() (uint64, error) {
	var n int64
	if !b.t.scalar(&n, `UPDATE fennec_buckets SET seq = seq + 1 WHERE name = $1 RETURNING seq`, b.name) {
		if b.t.err != nil {
			return 0, b.t.err
		}
		return 0, fmt.Errorf("postgres: bucket %q is gone", b.name)
	}
	b.t.gen++
	return uint64(n), nil
}

func (b *bucket) Sequence() uint64 {
	var n int64
	b.t.scalar(&n, `SELECT seq FROM fennec_buckets WHERE name = $1`, b.name)
	return uint64(n)
}

func (b *bucket) SetSequence(n uint64) error {
	b.t.queue(`UPDATE fennec_buckets SET seq = $2 WHERE name = $1`, b.name, int64(n))
	return nil
}

func (b *bucket) KeyN() int {
	var n int64
	b.t.scalar(&n, `SELECT count(*) FROM fennec_kv WHERE bucket = $1`, b.name)
	return int(n)
}

func (b *bucket) Cursor() store.Cursor { return &cursor{b: b} }
