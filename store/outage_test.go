package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/store"
)

// Issue 19 M9: an attempt whose end was lost to a database outage is given back, so the run's
// next start counts the same attempt again; an attempt that is not the run's current one, or a
// run that has ended, is left alone.
func TestRefundAttempt(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	_, _, err := s.CreateRun(ctx, "r", "a run", []byte(`{}`), t0)
	require.NoError(t, err)
	run, err := s.ClaimRun(ctx, "r", "w:1", 3, t0)
	require.NoError(t, err)
	require.Equal(t, 1, run.Attempts)

	require.NoError(t, s.RefundAttempt(ctx, "r", 2)) // not the current attempt: no change
	got, err := s.GetRunStatus(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, 1, got.Attempts)

	require.NoError(t, s.RefundAttempt(ctx, "r", 1))
	run, err = s.ClaimRun(ctx, "r", "w:1", 3, t0)
	require.NoError(t, err)
	assert.Equal(t, 1, run.Attempts, "the refunded attempt is counted once")

	require.NoError(t, s.EndClaimed(ctx, "r", 1, store.StatusFailed, "boom", t0))
	require.NoError(t, s.RefundAttempt(ctx, "r", 1)) // ended: no change
	got, err = s.GetRunStatus(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, 1, got.Attempts)
}

// IsUnavailable tells an unreachable database from other errors.
func TestIsUnavailable(t *testing.T) {
	assert.False(t, store.IsUnavailable(nil))
	assert.False(t, store.IsUnavailable(store.ErrNotFound))
	assert.False(t, store.IsUnavailable(fmt.Errorf("wrapped: %w", context.Canceled)))
	assert.False(t, store.IsUnavailable(context.DeadlineExceeded))
	assert.False(t, store.IsUnavailable(errors.New("syntax error")))
	// Nothing listens on port 1.
	_, err := store.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	require.Error(t, err)
	assert.True(t, store.IsUnavailable(err), err.Error())
}

// A PostgreSQL server stopped under an open store: its queries fail as unavailable (not as a
// bug), and work again once the server is back, without reopening the store.
func TestPostgresOutageIsUnavailable(t *testing.T) {
	if onPostgres != "" || testing.Short() {
		t.Skip("starts a cluster of its own; runs once, in the SQLite pass")
	}
	cluster := pgtest.Require(t)
	ctx := context.Background()
	s, err := store.Open(ctx, cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, _, err = s.CreateRun(ctx, "r", "a run", []byte(`{}`), t0)
	require.NoError(t, err)

	require.NoError(t, cluster.Pause())
	_, err = s.GetRun(ctx, "r")
	require.Error(t, err)
	assert.True(t, store.IsUnavailable(err), err.Error())
	_, _, err = s.CreateRun(ctx, "q", "another", []byte(`{}`), t0)
	require.Error(t, err)
	assert.True(t, store.IsUnavailable(err), err.Error())

	require.NoError(t, cluster.Resume())
	run, err := s.GetRun(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, "a run", run.Name)
}
