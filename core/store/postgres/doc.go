// Package postgres is the store's PostgreSQL engine: Fennec's buckets of
// ordered keys as rows of one table, in serializable transactions that are
// run again when they fail to serialise, so several Fennec nodes can share
// one database.
//
// It uses only what distributed SQL databases that speak PostgreSQL's
// protocol also offer (CockroachDB, YugabyteDB): serializable
// transactions with retries, a primary key range scan, INSERT ... ON
// CONFLICT; no advisory locks, no LISTEN/NOTIFY in the store itself.
package postgres
