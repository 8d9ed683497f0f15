package store_test

import (
	"context"
	"testing"
	"time"

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
		require.NoError(t, s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", t0))
		// The same pair again, in either order, is not a second comparison.
		require.NoError(t, s.RecordComparison(ctx, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa", t0.Add(1)))
		require.NoError(t, s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", t0.Add(2)))
		require.NoError(t, s.RecordComparison(ctx, "cccccccccccccccc", "aaaaaaaaaaaaaaaa", t0.Add(3*time.Second)))

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
		require.ErrorIs(t, s.RecordComparison(ctx, "aaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaa", t0), store.ErrInvalid)
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
