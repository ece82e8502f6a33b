// Package storetest states the contract of core/store as a conformance
// suite that every engine under a store.DB must pass: Run takes a function
// that opens a fresh, empty database and checks, one subtest per clause,
// what the store promises its modules (keys and their byte order, tables
// and indexes, read-your-writes, snapshot isolation, the group-commit
// contract, transactions joined through the context, migrations, backups,
// the readiness probe).
//
// The suite uses only the store's public API, so it runs unchanged on every
// engine: bolt_test.go runs it on bbolt, postgres_test.go on
// core/store/postgres (a real server, core/fennectest/pgserver). Row counts
// are kept to hundreds: a PostgreSQL round trip costs about a hundred bbolt
// operations.
//
// What the suite observes of sequences in a rolled-back transaction is
// engine-dependent and not part of the contract: on bbolt and on the
// PostgreSQL engine alike the sequence rolls back with the transaction, so
// the number is handed out again. The contract is only that committed
// numbers never repeat and increase.
//
// It imports core/store alone (and the standard library's testing).
package storetest
