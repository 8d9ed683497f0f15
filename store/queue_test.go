package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func newRun(id string) store.NewRun {
	return store.NewRun{ID: id, Name: "n-" + id, ScenarioJSON: []byte(`{"id":"` + id + `"}`)}
}

// countingEnqueue records the runs queued and hands out job ids.
type countingEnqueue struct {
	ids  []string
	fail string // a run id whose enqueue fails
}

func (c *countingEnqueue) enqueue(_ context.Context, tx *sql.Tx, id string) (int64, error) {
	if tx == nil {
		return 0, errors.New("no transaction")
	}
	if id == c.fail {
		return 0, errors.New("queue down")
	}
	c.ids = append(c.ids, id)
	return int64(100 + len(c.ids)), nil
}

func TestSubmitRuns(t *testing.T) {
	ctx := context.Background()

	t.Run("QueuesNewRunsWithTheirJobs", func(t *testing.T) {
		s := mustOpen(t)
		q := &countingEnqueue{}
		subs, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a"), newRun("b")}, 0, t0, q.enqueue)
		require.NoError(t, err)
		require.Len(t, subs, 2)
		assert.True(t, subs[0].Created)
		assert.Equal(t, []string{"a", "b"}, q.ids)
		run, err := s.GetRun(ctx, "b")
		require.NoError(t, err)
		assert.Equal(t, int64(102), run.JobID)
		assert.Equal(t, store.StatusQueued, run.Status)

		// Again: reused, no new job.
		subs, err = s.SubmitRuns(ctx, []store.NewRun{newRun("a")}, 0, t0, q.enqueue)
		require.NoError(t, err)
		assert.False(t, subs[0].Created)
		assert.Len(t, q.ids, 2)
	})

	t.Run("AllOrNoneWhenTheQueueFails", func(t *testing.T) {
		s := mustOpen(t)
		q := &countingEnqueue{fail: "b"}
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a"), newRun("b")}, 0, t0, q.enqueue)
		require.Error(t, err)
		_, err = s.GetRun(ctx, "a")
		assert.ErrorIs(t, err, store.ErrNotFound, "the run's row is rolled back with its job")
	})

	t.Run("BoundedQueue", func(t *testing.T) {
		s := mustOpen(t)
		q := &countingEnqueue{}
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a"), newRun("b")}, 2, t0, q.enqueue)
		require.NoError(t, err)
		_, err = s.SubmitRuns(ctx, []store.NewRun{newRun("c")}, 2, t0, q.enqueue)
		assert.ErrorIs(t, err, store.ErrQueueFull)
		_, err = s.GetRun(ctx, "c")
		assert.ErrorIs(t, err, store.ErrNotFound)
		// An identical scenario is not new work.
		_, err = s.SubmitRuns(ctx, []store.NewRun{newRun("a")}, 2, t0, q.enqueue)
		assert.NoError(t, err)
		// A started run no longer counts as queued.
		_, err = s.ClaimRun(ctx, "a", "h:1", 3, t0)
		require.NoError(t, err)
		_, err = s.SubmitRuns(ctx, []store.NewRun{newRun("c")}, 2, t0, q.enqueue)
		assert.NoError(t, err)
	})

	t.Run("CancelledRunIsQueuedAgain", func(t *testing.T) {
		s := mustOpen(t)
		q := &countingEnqueue{}
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a")}, 0, t0, q.enqueue)
		require.NoError(t, err)
		require.NoError(t, s.EndRun(ctx, "a", store.StatusCancelled, "by a user", t0))
		subs, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a")}, 0, t0, q.enqueue)
		require.NoError(t, err)
		assert.True(t, subs[0].Created)
		assert.Equal(t, store.StatusQueued, subs[0].Run.Status)
		assert.Equal(t, int64(102), subs[0].Run.JobID)
	})
}

func TestClaims(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("a")}, 0, t0, nil)
	require.NoError(t, err)

	first, err := s.ClaimRun(ctx, "a", "host-1:10", 3, t0)
	require.NoError(t, err)
	assert.Equal(t, 1, first.Attempts)
	assert.Equal(t, "host-1:10", first.Worker)
	assert.Equal(t, []byte(`{"id":"a"}`), first.ScenarioJSON)
	require.NoError(t, s.SetProgressClaimed(ctx, "a", 1, 0.5))

	// Its worker dies; the run is claimed again by another worker.
	second, err := s.ClaimRun(ctx, "a", "host-2:20", 3, t0)
	require.NoError(t, err)
	assert.Equal(t, 2, second.Attempts)

	// The first attempt, still alive after all, can record nothing.
	assert.ErrorIs(t, s.SetProgressClaimed(ctx, "a", 1, 0.9), store.ErrConflict)
	assert.ErrorIs(t, s.FinishClaimed(ctx, "a", 1, []byte(`{"r":1}`), []byte(`{}`), nil, t0), store.ErrConflict)
	assert.ErrorIs(t, s.EndClaimed(ctx, "a", 1, store.StatusFailed, "x", t0), store.ErrConflict)
	assert.ErrorIs(t, s.RequeueClaimed(ctx, "a", 1), store.ErrConflict)

	require.NoError(t, s.FinishClaimed(ctx, "a", 2, []byte(`{"r":2}`), []byte(`{"s":2}`), []byte(`{}`), t0))
	run, err := s.GetRun(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, run.Status)
	assert.Equal(t, "host-2:20", run.Worker)
	assert.Nil(t, run.ReportJSON, "GetRun never reads the full report")
	assert.Equal(t, []byte(`{"s":2}`), run.SummaryJSON)
	rep, err := s.GetReportJSON(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"r":2}`), rep)
	// Stored once: a finished run cannot be claimed or finished again.
	_, err = s.ClaimRun(ctx, "a", "host-3:30", 3, t0)
	assert.ErrorIs(t, err, store.ErrConflict)
	assert.ErrorIs(t, s.FinishClaimed(ctx, "a", 2, []byte(`{"r":3}`), []byte(`{}`), nil, t0), store.ErrConflict)

	t.Run("AttemptsBounded", func(t *testing.T) {
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("b")}, 0, t0, nil)
		require.NoError(t, err)
		for range 2 {
			_, err := s.ClaimRun(ctx, "b", "h:1", 2, t0)
			require.NoError(t, err)
		}
		_, err = s.ClaimRun(ctx, "b", "h:1", 2, t0)
		assert.ErrorIs(t, err, store.ErrAttemptsExhausted)
		run, err := s.GetRun(ctx, "b")
		require.NoError(t, err)
		assert.Equal(t, store.StatusFailed, run.Status)
		assert.Contains(t, run.Error, "started 2 times")
	})

	t.Run("ShutdownRequeues", func(t *testing.T) {
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("c")}, 0, t0, nil)
		require.NoError(t, err)
		run, err := s.ClaimRun(ctx, "c", "h:1", 3, t0)
		require.NoError(t, err)
		require.NoError(t, s.RequeueClaimed(ctx, "c", run.Attempts))
		st, err := s.QueueState(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, st.ByStatus[store.StatusQueued])
		assert.Equal(t, 1, st.ByStatus[store.StatusDone])
		assert.Equal(t, 1, st.ByStatus[store.StatusFailed])
	})
}
