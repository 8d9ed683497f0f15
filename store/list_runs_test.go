package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 L6: the list of runs carries the same attempts and worker as the run's own record
// (it used to say 0 attempts for every run).
func TestListRunsAttemptsAndWorker(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	_, _, err := s.CreateRun(ctx, "r", "a run", []byte(`{}`), t0)
	require.NoError(t, err)
	_, err = s.ClaimRun(ctx, "r", "host-a:1", 0, t0)
	require.NoError(t, err)
	_, err = s.ClaimRun(ctx, "r", "host-b:2", 0, t0) // its first worker died
	require.NoError(t, err)
	one, err := s.GetRun(ctx, "r")
	require.NoError(t, err)
	list, _, err := s.ListRuns(ctx, 10, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 2, one.Attempts)
	assert.Equal(t, one.Attempts, list[0].Attempts)
	assert.Equal(t, "host-b:2", list[0].Worker)
	assert.Equal(t, one.Worker, list[0].Worker)
}
