package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// A run claimed maxAttempts times without finishing is failed by the next claim, and the
// failure is committed (the row says failed, "interrupted N times"), not rolled back with the
// error that reports it.
func TestClaimRunFailsARunInterruptedMaxAttemptsTimes(t *testing.T) {
	s := mustOpen(t)
	ctx := context.Background()
	_, _, err := s.CreateRun(ctx, "crashy", "crashes its worker", []byte(`{}`), time.Now())
	require.NoError(t, err)
	for range 3 {
		_, err := s.ClaimRun(ctx, "crashy", "w", 3, time.Now())
		require.NoError(t, err)
	}
	_, err = s.ClaimRun(ctx, "crashy", "w", 3, time.Now())
	require.True(t, errors.Is(err, store.ErrAttemptsExhausted), "fourth claim: %v", err)
	run, err := s.GetRunStatus(ctx, "crashy")
	require.NoError(t, err)
	require.Equal(t, store.StatusFailed, run.Status)
	require.Equal(t, 3, run.Attempts)
	require.Contains(t, run.Error, "interrupted 3 times")
}
