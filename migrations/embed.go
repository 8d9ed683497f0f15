// Package migrations holds the numbered SQL migrations of the scalein database, embedded so
// the binary applies them itself on start (store.Open runs them with goose).
//
// Two equivalent sets are kept: *.sql for SQLite (the default) and postgres/*.sql for
// PostgreSQL. Every migration has a twin with the same number and name in the other set (a
// test checks the versions match); the twins differ only where the dialects do (BLOB → BYTEA,
// REAL → DOUBLE PRECISION, INTEGER unix milliseconds → BIGINT, no STRICT).
package migrations

import "embed"

// FS holds every SQLite migration file. Files are named NNNNN_what.sql and carry goose's
// "-- +goose Up" / "-- +goose Down" annotations.
//
//go:embed *.sql
var FS embed.FS

// Postgres holds the PostgreSQL twins under postgres/ (use fs.Sub(Postgres, "postgres")).
//
//go:embed postgres/*.sql
var Postgres embed.FS
