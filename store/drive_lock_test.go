package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two processes on one database (two stores): a drive lock is held by one at a time, counted
// within a process, and released by the last Unlock or by Reset (the connection closing, as when
// a process dies). On SQLite every lock is granted (one process owns the file).
func TestDriveLocks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "locks.db")
	a, b := mustOpenAt(t, path).DriveLocks(), mustOpenAt(t, path).DriveLocks()
	t.Cleanup(a.Reset)
	t.Cleanup(b.Reset)
	key := "plan:" + t.Name()

	h1, ok, err := a.TryLock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok)
	h2, ok, err := a.TryLock(ctx, key)
	require.NoError(t, err)
	require.True(t, ok, "a process may hold its own lock twice")
	_, ok, err = b.TryLock(ctx, key)
	require.NoError(t, err)
	if onPostgres == "" {
		assert.True(t, ok, "SQLite grants every lock")
		return
	}
	assert.False(t, ok, "another process holds it")

	require.NoError(t, a.Unlock(ctx, h1))
	_, ok, err = b.TryLock(ctx, key)
	require.NoError(t, err)
	assert.False(t, ok, "still held once")
	require.NoError(t, a.Unlock(ctx, h2))
	hb, ok, err := b.TryLock(ctx, key)
	require.NoError(t, err)
	assert.True(t, ok, "released by the last unlock")

	require.NoError(t, a.Check(ctx))
	b.Reset() // the holder's connection closes
	require.NoError(t, b.Unlock(ctx, hb), "a hold from before Reset releases nothing")
	// The server ends the closed session's backend, and so frees its locks, shortly after the
	// client hangs up, not before Reset returns: wait for it (a busy machine takes a while).
	assert.Eventually(t, func() bool {
		_, ok, err := a.TryLock(ctx, key)
		return err == nil && ok
	}, 10*time.Second, 20*time.Millisecond, "free again once the holder's connection is gone")
}
