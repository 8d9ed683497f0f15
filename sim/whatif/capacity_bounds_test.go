package whatif_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// TestCapacityProbesBounded replays finding L2 of the 2026-12c probe: a capacity plan at the
// documented maximum duration, with a goal every rate meets, probes scenarios of at most 20,000
// requests each (sessions × turns), which a server can run, up to the highest rate.
func TestCapacityProbesBounded(t *testing.T) {
	f := &countingRunner{}
	goal := &whatif.CapacityGoal{MinAttainment: 1e-300, DurationMS: 24 * 3600 * 1000}
	res, err := whatif.Plan(context.Background(), f, sessionsWithSLO(t), whatif.Request{Goal: whatif.Goal{Capacity: goal}, Search: whatif.Search{MaxRuns: 40}})
	require.NoError(t, err)
	require.NotEmpty(t, f.scenarios)
	highest := 0.0
	for rate, sc := range f.scenarios {
		ss := sc.Workload.Sessions
		assert.LessOrEqual(t, ss.Count*ss.Turns, 20000, "the probe at %v requests/s per worker", rate)
		_, err := sim.Parse(sc.CanonicalJSON(), sim.ParseEnv{})
		assert.NoError(t, err, "the probe at %v is a valid scenario", rate)
		highest = max(highest, rate)
	}
	assert.Equal(t, 1e6, highest, "the search climbed to its highest rate")
	assert.Contains(t, res.Notes[len(res.Notes)-1], "the search goes no higher")
}

// A diagnose plan's μ below the lowest rate a capacity search probes is refused by path, not
// raised without a word.
func TestDiagnoseRateBounded(t *testing.T) {
	base := sessionsWithSLO(t)
	base.Autoscaler = &sim.Autoscaler{}
	_, err := whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{RatePerWorker: 1e-300}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "goal.diagnose.rate_per_worker_per_s")
	assert.Contains(t, err.Error(), "from 0.001 to 1000000")
}
