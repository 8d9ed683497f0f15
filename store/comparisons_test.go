package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestComparisons(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	for _, id := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"} {
		_, _, err := s.CreateRun(ctx, id, "run "+id[:1], []byte(`{}`), t0)
		require.NoError(t, err)
	}

	t.Run("OK", func(t *testing.T) {
		require.NoError(t, recordComparison(ctx, s, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", t0))
		// The same pair again, in either order, is not a second comparison.
		require.NoError(t, recordComparison(ctx, s, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa", t0.Add(1)))
		require.NoError(t, recordComparison(ctx, s, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", t0.Add(2)))
		require.NoError(t, recordComparison(ctx, s, "cccccccccccccccc", "aaaaaaaaaaaaaaaa", t0.Add(3*time.Second)))

		got, err := s.ComparisonsOf(ctx, "aaaaaaaaaaaaaaaa")
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, "cccccccccccccccc", got[0].A.ID, "newest first")
		require.Equal(t, "run c", got[0].A.Name)
		require.Equal(t, "aaaaaaaaaaaaaaaa", got[1].A.ID, "kept in the order first opened")
		require.Equal(t, "bbbbbbbbbbbbbbbb", got[1].B.ID)
		require.Equal(t, store.StatusQueued, got[1].B.Status)

		got, err = s.ComparisonsOf(ctx, "bbbbbbbbbbbbbbbb")
		require.NoError(t, err)
		require.Len(t, got, 1)
	})

	t.Run("ErrSameRun", func(t *testing.T) {
		_, err := s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa", t0)
		require.ErrorIs(t, err, store.ErrInvalid)
	})

	t.Run("RunsByID", func(t *testing.T) {
		got, err := s.RunsByID(ctx, "aaaaaaaaaaaaaaaa", "zzzzzzzzzzzzzzzz", "cccccccccccccccc")
		require.NoError(t, err)
		require.Len(t, got, 2)
	})

	t.Run("SearchRuns", func(t *testing.T) {
		got, total, err := s.SearchRuns(ctx, "RUN B", 10, 0)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, "bbbbbbbbbbbbbbbb", got[0].ID)
		// LIKE's wildcards in user text are literal.
		_, total, err = s.SearchRuns(ctx, "%", 10, 0)
		require.NoError(t, err)
		require.Equal(t, 0, total)
		_, total, err = s.SearchRuns(ctx, "", 10, 0)
		require.NoError(t, err)
		require.Equal(t, 3, total)
	})
}

// recordComparison is RecordComparison for tests that do not look at created.
func recordComparison(ctx context.Context, s *store.Store, a, b string, now time.Time) error {
	_, err := s.RecordComparison(ctx, a, b, now)
	return err
}

// Issue 19 L9: a comparison is recorded once per pair (created says whether it was new), and a
// run takes part in at most 50, so the table cannot grow with the square of the runs.
func TestRecordComparisonCreatedAndCapped(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	created, err := s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", t0)
	require.NoError(t, err)
	assert.True(t, created)
	created, err = s.RecordComparison(ctx, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa", t0)
	require.NoError(t, err)
	assert.False(t, created, "the same pair again")
	for i := range 60 {
		other := fmt.Sprintf("c%015d", i)
		created, err = s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", other, t0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
		assert.Equal(t, i < 49, created, "comparison %d", i)
	}
}
