// Package store keeps runs, their scenarios and reports, and uploaded traces in SQLite (the
// default, one file) or in PostgreSQL (a postgres:// URL, for several processes on several
// machines).
//
// Every method is one transaction. On SQLite, writes go through a single connection (SQLite
// allows one writer at a time; queueing in Go is cheaper than spinning on SQLITE_BUSY) and begin
// with BEGIN IMMEDIATE so a transaction never has to upgrade its lock halfway; reads use a
// separate read-only pool so polling pages never wait behind a write in WAL mode. On
// PostgreSQL, one pool serves both; write transactions are SERIALIZABLE and are run again when
// the server reports a serialization failure, so the same check-then-write code is correct with
// many writers, except those that bound a count many users add to at once (the run queue, the
// quotas), which take an advisory lock on the count and run at READ COMMITTED (write_lock.go).
//
// Queries are written once with '?' placeholders and portable SQL; on PostgreSQL a thin driver
// wrapper rewrites the placeholders (dialect.go).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

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

// pgPoolConns bounds the connections one process opens to PostgreSQL for its queries;
// pgLockConns more are for the drive locks' session (DriveLocks), which holds one for the life
// of the process, so queries keep all of theirs.
const (
	pgPoolConns = 8
	pgLockConns = 1
)

// Store is the database of one scalein process. It is safe for concurrent use.
type Store struct {
	path    string
	dialect string
	writer  *sql.DB // SQLite: exactly one connection; PostgreSQL: the pool
	reader  *sql.DB // SQLite: read-only pool; PostgreSQL: the same pool as writer
	// reportReads counts OpenReport calls (see ReportReads).
	reportReads atomic.Int64
}

// Open opens the database that target names and applies any pending migrations: a
// postgres:// (or postgresql://) URL opens that PostgreSQL database; anything else is a SQLite
// file path, created (with its parent directory) if missing.
func Open(ctx context.Context, target string) (*Store, error) {
	if strings.TrimSpace(target) == "" {
		return nil, fmt.Errorf("store: open: the database path is empty; pass -db PATH (for example ./data/scalein.db) or -db postgres://USER@HOST/DB")
	}
	if IsPostgresDSN(target) {
		return openPostgres(ctx, target)
	}
	return openSQLite(ctx, target)
}

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	shown := RedactDSN(dsn)
	db, err := sql.Open(pgDriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", shown, err)
	}
	db.SetMaxOpenConns(pgPoolConns + pgLockConns)
	db.SetMaxIdleConns(pgPoolConns + pgLockConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w; check the server is running and the URL's user, password, host and database", shown, err)
	}
	s := &Store{path: dsn, dialect: DialectPostgres, writer: db, reader: db}
	if err := s.WithLock(ctx, func() error { return s.migrate(ctx) }); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open %s: %w", shown, err)
	}
	return s, nil
}

func openSQLite(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("store: open %s: create directory %s: %w; check the -db path is writable", path, dir, err)
		}
	}
	if err := checkWritable(path); err != nil {
		return nil, err
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
	if err := (&Store{dialect: DialectSQLite, writer: writer}).migrate(ctx); err != nil {
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
	return &Store{path: path, dialect: DialectSQLite, writer: writer, reader: reader}, nil
}

// Close closes both pools. The writer closes last so SQLite can checkpoint the WAL.
func (s *Store) Close() error {
	if s.reader == s.writer {
		return s.writer.Close()
	}
	return errors.Join(s.reader.Close(), s.writer.Close())
}

// Path is the SQLite file or the PostgreSQL URL the store was opened on (it may hold a
// password: log RedactDSN(Path()) instead).
func (s *Store) Path() string { return s.path }

// Dialect is DialectSQLite or DialectPostgres.
func (s *Store) Dialect() string { return s.dialect }

// DB is the pool that write transactions use (on SQLite its single connection), for the job
// queue, which keeps its tables in the same database.
func (s *Store) DB() *sql.DB { return s.writer }

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

// migrate applies the embedded migrations of the store's dialect that are not yet applied.
func (s *Store) migrate(ctx context.Context) error {
	var (
		dialect = goose.DialectSQLite3
		files   fs.FS
		err     error
	)
	files = migrations.FS
	if s.dialect == DialectPostgres {
		dialect = goose.DialectPostgres
		if files, err = fs.Sub(migrations.Postgres, "postgres"); err != nil {
			return fmt.Errorf("prepare migrations: %w", err)
		}
	}
	provider, err := goose.NewProvider(dialect, s.writer, files,
		goose.WithDisableGlobalRegistry(true), // only our SQL files, never Go migrations registered elsewhere
		// Migrations are numbered by issue and land in any order; a database that has a later
		// one still gets an earlier one that landed after it.
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// writeAttempts bounds how often a PostgreSQL write transaction is run again after a
// serialization failure or a deadlock. SERIALIZABLE conflicts are frequent on small tables (a
// sequential scan locks the whole table for the conflict check), and a retry after a short
// random pause almost always goes through; the writes that many users make at once (the quota
// checks) take advisory locks instead (write_lock.go) and rarely need a retry.
const writeAttempts = 50

// write runs fn in one write transaction and commits it if fn succeeds: BEGIN IMMEDIATE on
// SQLite; SERIALIZABLE on PostgreSQL, where fn runs again (up to writeAttempts times) when the
// transaction conflicts with a concurrent one, so fn must only assign, never accumulate, the
// results it returns through its closure. A transaction that still conflicts after
// writeAttempts returns an error wrapping ErrBusy.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.writeLocked(ctx, nil, fn)
}

// writeLocked is write, except that on PostgreSQL with locks it runs at READ COMMITTED after
// taking locks (write_lock.go): the locks, not the isolation level, keep its checks true.
func (s *Store) writeLocked(ctx context.Context, locks []writeLock, fn func(tx *sql.Tx) error) error {
	if s.dialect != DialectPostgres {
		return s.writeOnce(ctx, nil, fn)
	}
	opts := &sql.TxOptions{Isolation: sql.LevelSerializable}
	if len(locks) > 0 {
		opts.Isolation = sql.LevelReadCommitted
		inner := fn
		fn = func(tx *sql.Tx) error {
			if err := takeWriteLocks(ctx, tx, locks); err != nil {
				return err
			}
			return inner(tx)
		}
	}
	var err error
	for attempt := range writeAttempts {
		if err = s.writeOnce(ctx, opts, fn); err == nil || !retryable(err) {
			return err
		}
		// A short random pause, growing with the attempts, lets the conflicting transaction
		// finish and spreads the retries of transactions that conflicted with each other.
		pause := time.Duration(rand.Int64N(int64(min(attempt+1, 20)) * int64(2*time.Millisecond)))
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(pause):
		}
	}
	if isConflict(err) {
		return fmt.Errorf("%w: %d attempts conflicted with concurrent writes: %w", ErrBusy, writeAttempts, err)
	}
	return err
}

// WriteTx runs fn in one write transaction of the store (see write), for a caller that adds
// its own statements to the store's, such as the job queue inserting a job beside a run.
func (s *Store) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.write(ctx, fn)
}

func (s *Store) writeOnce(ctx context.Context, opts *sql.TxOptions, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, opts)
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
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == DialectPostgres {
		opts.Isolation = sql.LevelRepeatableRead // one snapshot for every query in fn
	}
	tx, err := s.reader.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
