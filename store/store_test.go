package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// t0 is a fixed clock so times in tests are exact and do not depend on the wall clock.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

// mustOpen opens a fresh store in a temporary directory and closes it when the test ends.
func mustOpen(tb testing.TB) *store.Store {
	tb.Helper()
	return mustOpenAt(tb, filepath.Join(tb.TempDir(), "scalein.db"))
}

func mustOpenAt(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), dbTarget(tb, path))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpen(t *testing.T) {
	ctx := context.Background()

	t.Run("CreatesParentDirectories", func(t *testing.T) {
		sqliteOnly(t)
		path := filepath.Join(t.TempDir(), "a", "b", "scalein.db")
		s, err := store.Open(ctx, path)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = os.Stat(path)
		require.NoError(t, err)
	})

	t.Run("PathWithURICharacters", func(t *testing.T) {
		sqliteOnly(t)
		// '?', '#' and '%' mean something in a SQLite URI; the file must still land at path.
		path := filepath.Join(t.TempDir(), "odd?name#1%20.db")
		s, err := store.Open(ctx, path)
		require.NoError(t, err)
		_, _, err = s.CreateRun(ctx, "r1", "", []byte(`{}`), t0)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = os.Stat(path)
		require.NoError(t, err, "database file must be created at the literal path")
	})

	t.Run("ErrEmptyPath", func(t *testing.T) {
		_, err := store.Open(ctx, " ")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-db")
	})

	t.Run("ErrUnwritableDirectory", func(t *testing.T) {
		sqliteOnly(t)
		// A regular file where the parent directory should be cannot be created by anyone,
		// root included.
		blocker := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o600))
		path := filepath.Join(blocker, "scalein.db")
		_, err := store.Open(ctx, path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), "writable")
	})

	t.Run("ErrNotADatabase", func(t *testing.T) {
		sqliteOnly(t)
		path := filepath.Join(t.TempDir(), "junk.db")
		require.NoError(t, os.WriteFile(path, []byte("this is not a sqlite database, it is just text that is long enough"), 0o600))
		_, err := store.Open(ctx, path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path)
	})

	t.Run("MigrationsIdempotentOnReopen", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "scalein.db")
		s := mustOpenAt(t, path)
		_, _, err := s.CreateRun(ctx, "r1", "kept", []byte(`{"a":1}`), t0)
		require.NoError(t, err)
		require.NoError(t, s.Close())

		for range 2 {
			s = mustOpenAt(t, path)
			run, err := s.GetRun(ctx, "r1")
			require.NoError(t, err, "data survives a reopen")
			assert.Equal(t, "kept", run.Name)
			require.NoError(t, s.Close())
		}

		if onPostgres != "" {
			return // what follows reads the SQLite file
		}
		// goose records each applied version once; a reopen must not apply them again.
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		require.NoError(t, err)
		defer db.Close()
		var applied, distinct int
		require.NoError(t, db.QueryRow(`SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0`).Scan(&applied, &distinct))
		assert.Equal(t, distinct, applied)
		assert.GreaterOrEqual(t, applied, 1)

		var journal string
		require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&journal))
		assert.Equal(t, "wal", journal)
	})
}
