// Package postgres is the store's PostgreSQL engine: Fennec's buckets of
// ordered keys as rows of one table, in serializable transactions that are
// run again when they fail to serialise, so several Fennec nodes can share
// one database.
package postgres

import _ "github.com/jackc/pgx/v5/pgxpool" // pinned while the engine is written
