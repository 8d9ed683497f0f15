// Package store keeps runs, their scenarios and reports, and uploaded traces in SQLite.
//
// Every method is one transaction. Writes go through a single connection (SQLite allows one
// writer at a time; queueing in Go is cheaper than spinning on SQLITE_BUSY) and begin with
// BEGIN IMMEDIATE so a transaction never has to upgrade its lock halfway. Reads use a separate
// read-only pool so polling pages never wait behind a write in WAL mode.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	// Registers the "sqlite3" database/sql driver.
	_ "github.com/mattn/go-sqlite3"
	"github.com/pressly/goose/v3"

	"github.com/scalein-planner/scalein/migrations"
)

// Errors callers test with errors.Is; the returned errors wrap them with the operation and id.
var (
	// ErrNotFound: no run or trace has this id.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the record exists but is in a state where the operation does not apply
	// (starting a run that is not queued, finishing one that is not running, …).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: an argument is out of range (a progress above 1, an unknown status, a sha256
	// that is not 64 hex digits or does not match the content, …).
	ErrInvalid = errors.New("invalid argument")
)

// readPoolConns bounds concurrent readers; SQLite readers do not block each other in WAL mode.
const readPoolConns = 4

// Store is the SQLite database of one scalein server. It is safe for concurrent use.
type Store struct {
	path   string
	writer *sql.DB // exactly one connection
	reader *sql.DB // read-only pool
}

// Open opens (creating if needed) the database at path, creating its parent directory, and
// applies any pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("store: open: the database path is empty; pass -db PATH (for example ./data/scalein.db)")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("store: open %s: create directory %s: %w; check the -db path is writable", path, dir, err)
		}
	}

	writer, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("store: open %s: %w; check the -db path is writable and is a SQLite database", path, err)
	}
	if err := migrate(ctx, writer); err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}

	// The read pool opens after the writer so the file, its WAL mode and its -shm exist.
	reader, err := sql.Open("sqlite3", dsn(path, true))
	if err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
	}
	reader.SetMaxOpenConns(readPoolConns)
	reader.SetMaxIdleConns(readPoolConns)
	if err := reader.PingContext(ctx); err != nil {
		_ = reader.Close()
		_ = writer.Close()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
	}
	return &Store{path: path, writer: writer, reader: reader}, nil
}

// Close closes both pools. The writer closes last so SQLite can checkpoint the WAL.
func (s *Store) Close() error {
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// Path is the database file the store was opened on.
func (s *Store) Path() string { return s.path }

// dsn builds a go-sqlite3 URI with the pragmas set on every pooled connection. The path is
// escaped because SQLite decodes %XX in URIs and stops at '?' and '#'.
func dsn(path string, readOnly bool) string {
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	if readOnly {
		// WAL mode is persistent in the file; a read-only connection cannot set it anyway.
		return "file:" + escaped + "?mode=ro&_busy_timeout=5000&_txlock=deferred"
	}
	return "file:" + escaped + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_foreign_keys=on&_txlock=immediate"
}

// migrate applies the embedded migrations that are not yet applied.
func migrate(ctx context.Context, db *sql.DB) error {
	provider, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS,
		goose.WithDisableGlobalRegistry(true)) // only our SQL files, never Go migrations registered elsewhere
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// write runs fn in one write transaction (BEGIN IMMEDIATE) and commits it if fn succeeds.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// read runs fn in one read transaction on the read pool, so every query in fn sees one snapshot.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
