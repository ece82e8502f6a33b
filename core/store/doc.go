// Package store is Fennec's embedded database: one bbolt file shared by every
// module.
//
// It owns opening the file (with a lock timeout, so a second process fails fast
// instead of hanging), the buckets that modules declare, typed tables of JSON
// records keyed by big-endian uint64 ids, secondary indexes kept in the same
// transaction as the record, ordered schema migrations per module, batched
// writes for concurrent writers, and consistent online backups.
//
// It knows nothing about users, projects or any other domain, and must not
// import any other Fennec package.
package store
