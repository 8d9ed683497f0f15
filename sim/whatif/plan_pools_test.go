package whatif_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// A drain plan on prefill and decode pools drains one pool: its count actions carry the role,
// its worker sets are that pool's ids, and every candidate ran.
func TestPlanDrainsOnePool(t *testing.T) {
	base := mustScenario(t, "testdata/pd-small.json")
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		t.Run(role, func(t *testing.T) {
			req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 5000, Role: role}, Search: whatif.Search{MaxRuns: 12, BisectGrace: new(bool)}}
			n, err := whatif.Normalize(base, req)
			require.NoError(t, err)
			want := []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached}
			if role == sim.RoleDecode {
				want = append(want, whatif.SelectLeastWork)
			}
			assert.Equal(t, want, n.Search.Selections)
			res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 2}, base, req)
			require.NoError(t, err)
			require.NotEmpty(t, res.Candidates)
			lo, hi := 0, 3 // prefill ids 0…2, decode 3…5
			if role == sim.RoleDecode {
				lo, hi = 3, 6
			}
			sets := 0
			for _, c := range res.Candidates {
				assert.Equal(t, whatif.StatusDone, c.Status, c.Label)
				assert.True(t, strings.HasPrefix(c.Label, role+" pool: "), c.Label)
				removed := 0
				for _, a := range c.ScaleIn {
					if a.Count > 0 {
						assert.Equal(t, role, a.Role, c.Label)
					}
					for _, id := range a.Workers {
						assert.True(t, id >= lo && id < hi, "%s drains worker %d outside the %s pool", c.Label, id, role)
						sets++
					}
					removed += a.Count + len(a.Workers)
				}
				assert.Equal(t, 2, removed, c.Label)
			}
			if role == sim.RoleDecode {
				assert.Positive(t, sets, "least_work picks decode workers from the baseline")
			}
			require.NotNil(t, res.Recommended, res.Reason)
		})
	}
}

// Each kind of plan says on a P/D scenario what works and what to do instead.
func TestNormalizePoolsPerKind(t *testing.T) {
	base := mustScenario(t, "testdata/pd-small.json")
	for _, tc := range []struct {
		goal       whatif.Goal
		search     whatif.Search
		path, want string
	}{
		{whatif.Goal{Remove: 1}, whatif.Search{}, "goal.role", `name the pool to drain, "prefill" or "decode"`},
		{whatif.Goal{Remove: 1, Role: "both"}, whatif.Search{}, "goal.role", `must be "prefill" or "decode"`},
		{whatif.Goal{Remove: 3, Role: sim.RolePrefill}, whatif.Search{}, "goal.remove", "at least one of the 3 prefill workers active"},
		{whatif.Goal{Remove: 1, Role: sim.RolePrefill}, whatif.Search{Selections: []string{whatif.SelectLeastWork}}, "search.selections[0]", "a prefill worker completes none"},
		{whatif.Goal{Remove: 1, Role: sim.RoleDecode}, whatif.Search{Selections: []string{whatif.SelectFewestPullsServed}}, "search.selections[0]", "there are none"},
		{whatif.Goal{Tune: "autoscaler"}, whatif.Search{}, "goal.role", "name the pool to tune the autoscaler of"},
		{whatif.Goal{Tune: "autoscaler", Role: sim.RoleDecode}, whatif.Search{}, "goal.role", "the decode pool has no autoscaler"},
		{whatif.Goal{Capacity: &whatif.CapacityGoal{}}, whatif.Search{}, "goal.capacity", "sweep disaggregation.prefill.workers"},
		{whatif.Goal{Diagnose: &whatif.DiagnoseGoal{}}, whatif.Search{}, "goal.diagnose", "not supported yet"},
	} {
		_, err := whatif.Normalize(base, whatif.Request{Goal: tc.goal, Search: tc.search})
		var ve *sim.ValidationError
		require.True(t, errors.As(err, &ve), "%+v: %v", tc.goal, err)
		require.NotEmpty(t, ve.Errors)
		assert.Equal(t, tc.path, ve.Errors[0].Path)
		assert.Contains(t, ve.Errors[0].Message, tc.want)
	}
	// goal.role on one fleet is refused.
	agg := mustScenario(t, "testdata/four-workers.json")
	_, err := whatif.Normalize(agg, whatif.Request{Goal: whatif.Goal{Remove: 1, Role: sim.RoleDecode}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one fleet")
}

// A tune plan on pools tunes one pool's autoscaler: every candidate keeps the other pool's
// autoscaler as the scenario has it, varies only the named pool's, and the fixed baseline is
// that pool at its max_workers without an autoscaler.
func TestTuneOnePool(t *testing.T) {
	base := mustScenario(t, "testdata/pd-small-autoscalers.json")
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		t.Run(role, func(t *testing.T) {
			other := *base.PoolAutoscalers.Prefill
			mine := *base.PoolAutoscalers.Decode
			if role == sim.RolePrefill {
				other, mine = mine, other
			}
			targets := []float64{mine.Target, mine.Target * 2}
			req := whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler, Role: role},
				Search: whatif.Search{Targets: targets, ScaleDownWindowsMS: []float64{30000}, MaxRuns: 8, RefineTop: 1}}
			res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 2}, base, req)
			require.NoError(t, err)
			require.NotEmpty(t, res.Candidates)
			seen := map[float64]bool{}
			for _, c := range res.Candidates {
				assert.Equal(t, whatif.StatusDone, c.Status, c.Label)
				assert.True(t, strings.HasPrefix(c.Label, role+" pool: "), c.Label)
				require.NotNil(t, c.Autoscaler)
				assert.Equal(t, mine.Metric, c.Autoscaler.Metric, "the pool's own autoscaler is varied")
				seen[c.Autoscaler.Target] = true
			}
			assert.True(t, seen[targets[1]], "the searched target ran: %v", seen)
			require.Len(t, res.Baselines, 2)
			assert.Contains(t, res.Baselines[0].Label, "fixed "+role+" pool of "+whatif.Workers(mine.MaxWorkers))
			_ = other
		})
	}
	// A pool without an autoscaler has nothing to tune.
	one := *base
	pa := *base.PoolAutoscalers
	pa.Prefill = nil
	one.PoolAutoscalers = &pa
	_, err := whatif.Normalize(&one, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler, Role: sim.RolePrefill}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the prefill pool has no autoscaler")
	_, err = whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "name the pool to tune the autoscaler of")
}
