package whatif_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// The tune plan and the diagnose plan compare with one fixed fleet: the autoscaler's
// max_workers by default, the size goal.baseline_workers names otherwise, and say which.
func TestOneBaselineForTuneAndDiagnose(t *testing.T) {
	base := autoscaled(t)
	base.Fleet.Workers, base.Autoscaler.MaxWorkers = 2, 3 // the fleet starts below the maximum
	res, err := whatif.Plan(context.Background(), &fakeTuneRunner{}, base, tuneRequest(800))
	require.NoError(t, err)
	require.Len(t, res.Baselines, 2)
	assert.Equal(t, "fixed fleet of 3 workers, the autoscaler's maximum", res.Baselines[0].Label, "the maximum, not fleet.workers")

	req := tuneRequest(800)
	req.Goal.BaselineWorkers = 6
	res, err = whatif.Plan(context.Background(), &fakeTuneRunner{}, base, req)
	require.NoError(t, err)
	assert.Equal(t, "fixed fleet of 6 workers, the size you named", res.Baselines[0].Label)

	req.Goal.BaselineWorkers = -2
	_, err = whatif.Normalize(base, req)
	assert.ErrorContains(t, err, "goal.baseline_workers: must be a number of workers from 1")

	drain := whatif.Request{Goal: whatif.Goal{Remove: 1, BaselineWorkers: 3}}
	_, err = whatif.Normalize(base, drain)
	assert.ErrorContains(t, err, "goal.baseline_workers: is the fixed fleet a tune or diagnose plan compares")

	// Diagnose: the static fleet is the same baseline.
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) { return 0.9, 10 }}
	dbase := diagnoseBase(t)
	for _, c := range []struct {
		named, workers int
		label          string
	}{
		{0, dbase.Autoscaler.MaxWorkers, "the autoscaler's maximum"},
		{7, 7, "the size you named"},
	} {
		f.asked = nil
		res, err := whatif.Plan(context.Background(), f, dbase, whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{RatePerWorker: 5}, BaselineWorkers: c.named}})
		require.NoError(t, err)
		var static *whatif.FleetOutcome
		for i, fl := range res.Diagnose.Fleets {
			if fl.Kind == whatif.FleetStatic {
				static = &res.Diagnose.Fleets[i]
			}
		}
		require.NotNil(t, static)
		assert.Contains(t, static.Label, "a fixed fleet of "+plural(c.workers)+", "+c.label)
		var fixed *sim.Scenario
		for _, sc := range f.asked {
			if sc.Autoscaler == nil {
				fixed = sc
			}
		}
		require.NotNil(t, fixed)
		assert.Equal(t, c.workers, fixed.Fleet.Workers)
		assert.Contains(t, res.Diagnose.Comparison, static.Label)
	}
}

func plural(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return sim.FormatNumber(float64(n)) + " workers"
}
