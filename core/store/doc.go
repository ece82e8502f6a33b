// Package store is Fennec's embedded database: one bbolt file shared by every
// module.
//
// It owns opening the file (with a lock timeout, so a second process fails fast
// instead of hanging), the buckets that modules declare, typed tables of JSON
// records keyed by big-endian uint64 ids, secondary indexes kept in the same
// transaction as the record (among them trigram indexes for case-insensitive
// substring search, search.go), time-ordered keys and per-scope sequences for
// a module's own lists and numbers (ordered.go), ordered schema migrations
// per module, group commit for concurrent writers, and consistent online
// backups.
//
// # Writes: group commit
//
// Update is the write path. Calls that arrive while a commit is in progress
// are gathered and run one after another in the next shared transaction,
// which is committed and fsynced once for all of them; a lone call runs at
// once, with no waiting timer. So writes scale with concurrency the way
// reads do, and the caller does not choose. The contract for the function
// passed to Update:
//
//   - Durability: Update returns nil only after the transaction holding fn's
//     writes is committed and fsynced. A 2xx built on that is durable.
//   - Isolation of failures: when fn returns an error (or panics) its
//     writes are rolled back and its caller alone gets the error (or the
//     panic, raised again in the caller's goroutine); the others in the
//     round commit without it.
//   - fn may run more than once: a round in which some call fails is
//     rolled back and run again without that call, and the failing call is
//     run again alone so that its outcome never depends on a rolled-back
//     transaction. So fn must be a function of the transaction: read from
//     tx, write to tx, and set (not accumulate into) the variables it
//     shares with its caller. Nothing with an effect outside the
//     transaction may happen inside it: no files, no network, no
//     publishing except through the outbox in tx (core/events), no reading
//     of ids it assigned until Update returns. tx.OnCommit callbacks run
//     only for the run that committed.
//   - Ordering: calls from one goroutine are applied in the order made
//     (each waits for its commit). Concurrent calls are applied in some
//     serial order; each fn sees every write of the calls before it in its
//     round, as in a transaction of its own.
//   - Read your writes: once Update returns, every View started afterwards
//     sees the write.
//   - Cancellation: ctx is checked before the call is queued; a queued call
//     runs even if ctx ends meanwhile, since its caller may not learn the
//     outcome otherwise.
//
// UpdateAlone is the serial path: one transaction per call, fn run exactly
// once. Use it only where a write must not share its transaction (a schema
// migration, a write large enough to hold the writer for long), and say why
// at the call.
//
// No write function may run long on input a user controls the size of:
// every other writer waits for it. UpdateInSteps runs large work (a
// deleted project's rows) as a series of bounded transactions, and
// SlowestWrite says how long the longest write function ran, for tests
// to bound.
//
// # Transactions in the context
//
// A transaction's Context() carries it. A View, Update or UpdateAlone
// called with such a context runs inside that transaction (a write inside a
// read is refused with ErrReadOnlyTx) instead of opening a second one: one
// goroutine holding two bbolt transactions deadlocks as soon as a writer
// remaps the file. Code inside a transaction passes tx.Context() to the
// services it calls. In race builds (make test) and with the build tag
// fennec_txguard, a guard panics on any second transaction opened by one
// goroutine, and records it for the tests (DB.Violations).
//
// It knows nothing about users, projects or any other domain, and must not
// import any other Fennec package.
package store
