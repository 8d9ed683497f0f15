package runs

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting until %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}

// Several processes on one PostgreSQL database: a plan and a sweep are driven by exactly one
// of them, a cancel made through another process stops the driver, and when the driving
// process stops, another takes its plan over. (Moved from web, where it went through HTTP.)
func TestDrivingOnPostgresBelongsToOneProcess(t *testing.T) {
	t.Parallel() // its own cluster; it mostly waits for leases
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := pgtest.Require(t)
	dsn := cluster.NewDatabase(t)
	ctx := context.Background()
	service := func(name string) *Service {
		st, err := store.Open(ctx, dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		// No workers: every run stays queued, so the plan and the sweep stay unfinished.
		s := newTestService(t, Config{Store: st, NoWorkers: true, QueueSize: 10, WorkerName: name, DriveRescan: 100 * time.Millisecond}, false)
		require.NoError(t, s.Start(ctx))
		return s
	}
	data, err := os.ReadFile("../sim/whatif/testdata/four-workers.json")
	require.NoError(t, err)
	base := json.RawMessage(data)
	submitted := func(s *Service, plan string) []store.PlanPoint {
		_, points, err := s.store.GetPlan(ctx, plan)
		require.NoError(t, err)
		return points
	}
	recorded := func(s *Service, sweep string) int {
		_, pts, err := s.store.GetSweep(ctx, sweep)
		require.NoError(t, err)
		return len(pts)
	}
	runStatus := func(s *Service, id string) string {
		run, err := s.store.GetRunStatus(ctx, id)
		require.NoError(t, err)
		return run.Status
	}
	var axes []whatif.Axis // as the API decodes them, numbers kept as written
	require.NoError(t, decodeNumbers([]byte(`[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5, 6]}]`), &axes))

	a := service("a:1")
	p, err := a.CreatePlan(ctx, PlanRequest{Scenario: base, Goal: whatif.Goal{Remove: 2, StartMS: 100}})
	require.NoError(t, err)
	plan := p.ID
	eventually(t, "the plan submitted its first runs", func() bool {
		return len(submitted(a, plan)) == 7 // the baseline and 3 policies × 2 wave shapes
	})
	// 3 of the sweep's 6 points fit in the queue; the rest wait, fed by a.
	created, err := a.CreateSweep(ctx, SweepRequest{Scenario: base, Axes: axes})
	require.NoError(t, err)
	sweep := created.ID
	require.Equal(t, 3, recorded(a, sweep))
	require.True(t, a.Drives(plan) && a.Drives(sweep))

	// b starts, resumes nothing and rescans many times: a drives both.
	b := service("b:1")
	time.Sleep(time.Second)
	assert.False(t, b.Drives(plan), "b does not drive a's plan")
	assert.False(t, b.Drives(sweep), "b does not feed a's sweep")
	assert.True(t, a.Drives(plan) && a.Drives(sweep))
	// Asked again through b, the sweep is still fed by a alone.
	_, err = b.CreateSweep(ctx, SweepRequest{Scenario: base, Axes: axes})
	require.NoError(t, err)
	assert.False(t, b.Drives(sweep))

	// Cancelled through b, the sweep stops being fed by a; the queue has room again, but no
	// point is added.
	require.NoError(t, b.CancelSweep(ctx, sweep))
	eventually(t, "a stops feeding the cancelled sweep", func() bool { return !a.Drives(sweep) })
	time.Sleep(QueueFullRetry + 500*time.Millisecond)
	assert.Equal(t, 3, recorded(a, sweep))
	sw, pts, err := b.store.GetSweep(ctx, sweep)
	require.NoError(t, err)
	assert.True(t, sw.Cancelled)
	for _, pt := range pts {
		assert.Equal(t, store.StatusCancelled, runStatus(b, pt.RunID))
	}

	// a stops: b takes the plan over at a rescan.
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, a.Shutdown(stopCtx))
	eventually(t, "b takes the plan over", func() bool { return b.Drives(plan) })

	// Cancelled through a third process, the plan stops on b, and its runs are cancelled.
	c := service("c:1")
	require.NoError(t, c.CancelPlan(ctx, plan))
	eventually(t, "b stops the cancelled plan", func() bool { return !b.Drives(plan) })
	assert.False(t, c.Drives(plan))
	status, err := c.store.PlanStatus(ctx, plan)
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, status)
	for _, r := range submitted(c, plan) {
		assert.Equal(t, store.StatusCancelled, runStatus(c, r.RunID), r.Label)
	}
}
