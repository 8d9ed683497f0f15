// Package migrations holds the numbered SQL migrations of the scalein database, embedded so
// the binary applies them itself on start (store.Open runs them with goose).
package migrations

import "embed"

// FS holds every migration file. Files are named NNNNN_what.sql and carry goose's
// "-- +goose Up" / "-- +goose Down" annotations.
//
//go:embed *.sql
var FS embed.FS
