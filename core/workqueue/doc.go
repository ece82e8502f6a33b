// Package workqueue is Fennec's durable work queue: per-key ordered,
// at-least-once, stored through core/store, with attempts, retries paced by
// core/backoff and a dead-letter state. Webhook deliveries, mail and the
// other loops that retry work after a commit use it instead of a queue of
// their own.
//
// # Enqueue with the change
//
// Enqueue writes a job inside the caller's transaction, so the job exists
// exactly when the change that caused it (or the event acknowledgement
// that handed it over) is committed: a rolled-back transaction enqueues
// nothing, and a committed one cannot lose its job. The queue's workers
// are woken after the commit (tx.OnCommit), never before.
//
// # Order, attempts, dead letters
//
// Jobs of one key run one at a time in enqueue order; different keys run
// concurrently, one goroutine per key that has work. A job whose handler
// fails is tried again after Policy.Delay(attempts), and the jobs behind it
// on its key wait for it, so a key's consumer sees its jobs in order. After
// MaxAttempts failed attempts (or at once when the handler returns
// Permanent(err)) the job becomes a dead letter: it leaves its key's line,
// so the next job runs, and is kept, listable (Dead) and retryable (Retry,
// which puts it back in its place by id with a fresh count of attempts).
//
// A handler may add writes to the transaction that records the job's
// outcome (Job.Record): what it learned (a delivery log entry) commits
// together with the job's removal or rescheduling.
//
// # At least once: leases
//
// Taking a job is a committed write: the job's attempt count goes up and
// it records a lease, an owner and a lease-until time. Only the holder of
// the lease settles the job; an outcome from a lost lease is dropped. A
// job whose process died between taking and settling it therefore runs
// again (its crashed attempt counts, so a job that kills its process ends
// as a dead letter instead of killing every start), and a handler must
// tolerate a repeat. A handler interrupted by the end of Run (its context
// cancelled, and it returned an error wrapping context.Canceled) is put
// back as it was taken, its attempt not counted.
//
// bbolt admits one process per file, so today every lease that Run finds
// when it starts belongs to an earlier run of this process, which is gone:
// Run frees them at once instead of waiting for them to expire. Several
// processes working one queue (the scale-out issue, with a store they can
// share) need only drop that step (WithSharedStore): taking already skips a job leased by
// another owner until its lease-until time, so the job of a dead worker
// becomes available again when its lease expires, and a worker that
// overran its lease loses its outcome to the next taker instead of
// settling a job twice. While a handler runs on a shared store, its
// lease is renewed every third of the lease (WithLease), so a handler
// may run longer than the lease and a dead node's job is free a lease
// after its last renewal; with one process nothing expires while the
// process lives.
//
// # Storage
//
// A queue named N keeps four buckets: "workqueue.N.items" (each job's
// state as JSON, by id), "workqueue.N.payloads" (its payload, written once),
// "workqueue.N.order" (key ++ 0 ++ id for each live job: a key's next job
// is one cursor seek away) and "workqueue.N.dead" (the ids of dead
// letters). Ids grow in enqueue order. A module declares the buckets with
// its tables (Queue.Buckets); the first write creates any that are missing.
//
// It imports core/store and core/backoff, and knows no domain.
package workqueue
