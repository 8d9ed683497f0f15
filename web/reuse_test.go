package web

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// Issue 19: a sweep point equal to a stored run but for the name suffix the sweep gives it is
// not simulated again: its run (a permalink of its own) gets the stored report, relabelled.
func TestSweepPointReusesARunThatSimulatesTheSame(t *testing.T) {
	var simulated atomic.Int32
	count := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		simulated.Add(1)
		return sim.Run(ctx, sc, opt)
	}
	s := newTestServer(t, runs.Config{Workers: 1, Simulate: count}, true)

	scenario := fourWorkers(t, `[{"at_ms": 100, "count": 2}]`)
	direct := strings.Replace(scenario, `"bandwidth_gbps": 10`, `"bandwidth_gbps": 40`, 1)
	require.NotEqual(t, scenario, direct)
	first := submitAPI(t, s, direct)
	waitStatus(t, s, first, store.StatusDone)
	require.EqualValues(t, 1, simulated.Load())

	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(direct, `[{"path": "kvcr.bandwidth_gbps", "values": [40, 5]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sw := waitSweep(t, s, createdID(t, rec, rec.Body.Bytes()), store.StatusDone)
	require.Len(t, sw.Points, 2)
	point := sw.Points[0].RunID
	assert.NotEqual(t, first, point, "the sweep point keeps a permalink of its own")
	assert.EqualValues(t, 2, simulated.Load(), "only the new value (5) is simulated")

	a, err := s.runs.LoadReport(context.Background(), first)
	require.NoError(t, err)
	b, err := s.runs.LoadReport(context.Background(), point)
	require.NoError(t, err)
	assert.Contains(t, b.Name, "kvcr.bandwidth_gbps=40", "the point keeps its own name")
	assert.Equal(t, point, b.ScenarioID)
	assert.Equal(t, a.Summary, b.Summary)
	assert.Equal(t, a.Workers, b.Workers)
	a.Relabel(b.Name, b.ScenarioID)
	assert.Equal(t, a.Digest, b.Digest, "the relabelled report's digest is that of its own name")
}
