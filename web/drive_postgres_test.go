package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// drives says whether this server drives the plan or feeds the sweep with this id.
func drives(s *Server, id string) bool { return s.service().Drives(id) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting until %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}

// Several servers on one PostgreSQL database: a plan and a sweep are driven by exactly one of
// them, a cancel made through another server stops the driver, and when the driving server
// stops, another takes its plan over.
func TestDrivingOnPostgresBelongsToOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := pgtest.Require(t)
	dsn := cluster.NewDatabase(t)
	server := func(name string) *Server {
		st, err := store.Open(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		// No workers: every run stays queued, so the plan and the sweep stay unfinished.
		s := newTestServer(t, runs.Config{Store: st, NoWorkers: true, QueueSize: 10, WorkerName: name, DriveRescan: 100 * time.Millisecond}, false)
		require.NoError(t, s.startRuns(context.Background()))
		return s
	}
	a := server("a:1")
	rec := postJSON(t, a, "/api/v1/plans", planBody(fourWorkers(t, ""), `"goal": {"remove": 2, "start_ms": 100}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	plan := createdID(t, rec, rec.Body.Bytes())
	eventually(t, "the plan submitted its first runs", func() bool {
		p, err := a.loadPlan(context.Background(), plan)
		require.NoError(t, err)
		return len(p.Submitted) == 7 // the baseline and 3 policies × 2 wave shapes
	})
	// 3 of the sweep's 6 points fit in the queue; the rest wait, fed by a.
	rec = postJSON(t, a, "/api/v1/sweeps", sweepBody(fourWorkers(t, ""), `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5, 6]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sweep := createdID(t, rec, rec.Body.Bytes())
	recorded := func() int {
		_, pts, err := a.store.GetSweep(context.Background(), sweep)
		require.NoError(t, err)
		return len(pts)
	}
	require.Equal(t, 3, recorded())
	require.True(t, drives(a, plan) && drives(a, sweep))

	// b starts, resumes nothing and rescans many times: a drives both.
	b := server("b:1")
	time.Sleep(time.Second)
	assert.False(t, drives(b, plan), "b does not drive a's plan")
	assert.False(t, drives(b, sweep), "b does not feed a's sweep")
	assert.True(t, drives(a, plan) && drives(a, sweep))
	// Asked again through b, the sweep is still fed by a alone.
	rec = postJSON(t, b, "/api/v1/sweeps", sweepBody(fourWorkers(t, ""), `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5, 6]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	assert.False(t, drives(b, sweep))

	// Cancelled through b, the sweep stops being fed by a; the queue has room again, but no
	// point is added.
	rec = postJSON(t, b, "/api/v1/sweeps/"+sweep+"/cancel", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	eventually(t, "a stops feeding the cancelled sweep", func() bool { return !drives(a, sweep) })
	time.Sleep(runs.QueueFullRetry + 500*time.Millisecond)
	assert.Equal(t, 3, recorded())
	sw, err := b.loadSweep(context.Background(), sweep)
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, sw.Status)
	for _, p := range sw.Points[:3] {
		assert.Equal(t, store.StatusCancelled, runStatus(t, b, p.RunID))
	}

	// a stops: b takes the plan over at a rescan.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, a.stopRuns(ctx))
	eventually(t, "b takes the plan over", func() bool { return drives(b, plan) })

	// Cancelled through a third server, the plan stops on b, and its runs are cancelled.
	c := server("c:1")
	rec = postJSON(t, c, "/api/v1/plans/"+plan+"/cancel", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	eventually(t, "b stops the cancelled plan", func() bool { return !drives(b, plan) })
	assert.False(t, drives(c, plan))
	p, err := c.loadPlan(context.Background(), plan)
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, p.Status, "%+v %s", p.Submitted, p.Reason)
	for _, r := range p.Submitted {
		assert.Equal(t, store.StatusCancelled, runStatus(t, c, r.RunID), r.Label)
	}
}
