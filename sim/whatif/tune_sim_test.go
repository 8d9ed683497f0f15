package whatif_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// testdata/lull.json: 4 workers of 16 slots (max_num_seqs); 60 s of 20 sessions a second (about
// 40 requests in flight), then a lull of 200 s at half that (about 20); the scenario's
// autoscaler has target 12 and HPA's 300 s scale-down window. By hand: a target above 16
// requests per worker overfills the slots of the fleet it asks for, so TTFT p99 breaks a
// 200 ms limit once it scales down (target 18 or 24 with no window); the highest target that
// keeps it, 12, with the shortest window, 0, scales down as soon as the lull starts and uses
// the fewest GPU-hours; a 300 s window is longer than the lull (the run ends at about 262 s),
// so it never scales down and saves nothing against the fixed fleet.
func TestTuneLullByHand(t *testing.T) {
	base := mustScenario(t, "testdata/lull.json")
	req := tuneRequest(200)
	res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 2}, base, req)
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	best := res.Candidates[0]
	assert.Equal(t, 12.0, best.Autoscaler.Target)
	assert.Equal(t, 0.0, best.Autoscaler.ScaleDownWindow())
	// Nothing is killed whatever the grace or migration limit: those stay as in the scenario
	// (the same outcome goes to the fewer settings changed). least_loaded saves 0.03 % of the
	// GPU-hours here, within the tie tolerance: the selection stays too.
	assert.Equal(t, 30000.0, *best.Autoscaler.GraceMS)
	assert.Equal(t, 0, *best.MigrationLimit)
	assert.Equal(t, sim.SelectHighestID, best.Autoscaler.Select)
	assert.Contains(t, res.Recommended.Reason, "Set target 12 requests per worker and no scale-down window")
	assert.Contains(t, res.Recommended.Reason, "fewer GPU-hours than a fixed fleet of 4 workers")
	t.Log(res.Recommended.Reason)

	fixed := res.Baselines[0].Fleet.GPUHours
	byLabel := map[string]whatif.Candidate{}
	for _, c := range res.Candidates {
		byLabel[c.Label] = c
		if c.Autoscaler.ScaleDownWindow() == 300000 {
			assert.InDelta(t, fixed, c.Fleet.GPUHours, 1e-12, "a window longer than the lull saves nothing: %s", c.Label)
			assert.Zero(t, c.Fleet.FleetChanges, c.Label)
		}
		if c.Feasible {
			assert.GreaterOrEqual(t, c.Fleet.GPUHours*(1+whatif.TuneTieTolerance), best.Fleet.GPUHours, c.Label)
		}
	}
	coarse := func(target, window string) whatif.Candidate {
		c, ok := byLabel["target "+target+", window "+window+", no step limit, highest_id, grace 30 s, migration limit 0"]
		require.True(t, ok, "target %s window %s", target, window)
		return c
	}
	for _, target := range []string{"18", "24"} {
		c := coarse(target, "0 s")
		assert.False(t, c.Feasible, "target %s overfills the slots", target)
		assert.Contains(t, c.Violations[0], "TTFT p99")
	}
	// At target 12 a longer window costs more: 0 < 60 s < 300 s.
	w0, w60, w300 := coarse("12", "0 s"), coarse("12", "60 s"), coarse("12", "300 s")
	assert.Less(t, w0.Fleet.GPUHours, w60.Fleet.GPUHours)
	assert.Less(t, w60.Fleet.GPUHours, w300.Fleet.GPUHours)
	assert.Greater(t, *best.Fleet.SavedVsFixedPct, 30.0)

	// The same plan on one slot is byte for byte the same.
	again, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 1}, base, req)
	require.NoError(t, err)
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(again)
	assert.JSONEq(t, string(a), string(b))
}
