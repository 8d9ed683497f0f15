package runs

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// fourWorkers is the planner's hand-checked fleet (sim/whatif/testdata), as a request carries it.
func fourWorkers(t *testing.T) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile("../sim/whatif/testdata/four-workers.json")
	require.NoError(t, err)
	return data
}

func axesOf(t *testing.T, doc string) []whatif.Axis {
	t.Helper()
	var axes []whatif.Axis // as the API decodes them, numbers kept as written
	require.NoError(t, decodeNumbers([]byte(doc), &axes))
	return axes
}

func runStatus(t *testing.T, s *Service, id string) string {
	t.Helper()
	run, err := s.store.GetRunStatus(context.Background(), id)
	require.NoError(t, err)
	return run.Status
}

// Runs are shared (the same scenario is the same run): cancelling a sweep cancels only the
// points nothing else waits on. A point another sweep lists and one a user submitted directly
// stay queued; the other sweep's cancel then cancels its own. (Moved from web's API test.)
func TestCancelSweepSparesSharedRuns(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{}, false) // never started: every run stays queued
	base := fourWorkers(t)
	points := func(id string) []store.SweepPoint {
		_, pts, err := s.store.GetSweep(ctx, id)
		require.NoError(t, err)
		return pts
	}
	a, err := s.CreateSweep(ctx, SweepRequest{Scenario: base, Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4]}]`)})
	require.NoError(t, err)
	b, err := s.CreateSweep(ctx, SweepRequest{Scenario: base, Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [2, 9]}]`)})
	require.NoError(t, err)
	pa, pb := points(a.ID), points(b.ID)
	require.Equal(t, pa[1].RunID, pb[0].RunID, "latency 2 is the same run in both sweeps")

	// A user submits A's point "latency 3" directly (the same scenario, so the same run).
	run, err := s.store.GetRun(ctx, pa[2].RunID)
	require.NoError(t, err)
	assert.Equal(t, pa[2].RunID, submit(t, s, string(run.ScenarioJSON)))

	require.NoError(t, s.CancelSweep(ctx, a.ID))
	assert.Equal(t, store.StatusCancelled, runStatus(t, s, pa[0].RunID), "only sweep A's")
	assert.Equal(t, store.StatusQueued, runStatus(t, s, pa[1].RunID), "sweep B still waits on it")
	assert.Equal(t, store.StatusQueued, runStatus(t, s, pa[2].RunID), "a user submitted it directly")
	assert.Equal(t, store.StatusCancelled, runStatus(t, s, pa[3].RunID), "only sweep A's")

	require.NoError(t, s.CancelSweep(ctx, b.ID))
	assert.Equal(t, store.StatusCancelled, runStatus(t, s, pb[0].RunID), "no sweep waits on it any more")
	assert.Equal(t, store.StatusCancelled, runStatus(t, s, pb[1].RunID))
	assert.Equal(t, store.StatusQueued, runStatus(t, s, pa[2].RunID), "the user's run is still theirs")

	var missing *NotFoundError
	assert.ErrorAs(t, s.CancelSweep(ctx, "aaaaaaaaaaaaaaaa"), &missing, "a domain error, not an HTTP one")
}

// Two plans asking for the same candidates share their runs: cancelling one leaves them queued
// for the other, and cancelling the other cancels them. (Moved from web's API test.)
func TestCancelPlanSparesSharedRuns(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{}, false) // never started: the plans wait on their runs
	submitted := func(id string, n int) []store.PlanPoint {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, points, err := s.store.GetPlan(ctx, id)
			require.NoError(t, err)
			if len(points) >= n {
				return points
			}
			require.False(t, time.Now().After(deadline), "plan %s submitted %d runs, want %d", id, len(points), n)
			time.Sleep(10 * time.Millisecond)
		}
	}
	goal := whatif.Goal{Remove: 2, StartMS: 100}
	first, err := s.CreatePlan(ctx, PlanRequest{Scenario: fourWorkers(t), Goal: goal})
	require.NoError(t, err)
	// The baseline and the policy candidates are asked for at once: 1 + 3 × 2 wave shapes.
	shared := submitted(first.ID, 7)
	second, err := s.CreatePlan(ctx, PlanRequest{Name: "again", Scenario: fourWorkers(t), Goal: goal, Search: whatif.Search{MaxRuns: 63}})
	require.NoError(t, err)
	require.NotEqual(t, first.ID, second.ID)
	submitted(second.ID, len(shared))

	require.NoError(t, s.CancelPlan(ctx, first.ID))
	status, err := s.store.PlanStatus(ctx, first.ID)
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, status)
	for _, r := range shared {
		assert.Equal(t, store.StatusQueued, runStatus(t, s, r.RunID), "the second plan still waits on %s", r.Label)
	}
	require.NoError(t, s.CancelPlan(ctx, second.ID))
	for _, r := range shared {
		assert.Equal(t, store.StatusCancelled, runStatus(t, s, r.RunID), r.Label)
	}
}
