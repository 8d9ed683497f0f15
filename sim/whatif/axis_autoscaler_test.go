package whatif_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// Model 3's fields are sweep axes: the autoscaler's numbers, choices and null limits,
// router.migration_limit and a rate stage's rate.
func TestExpandModel3Axes(t *testing.T) {
	p, ok := sim.PresetByKey("autoscaler-grace")
	require.True(t, ok)
	base, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	base.Autoscaler.Behavior = nil                       // the model-3 shorthand instead of the preset's behavior
	base.Autoscaler.MaxRemovePerTick = sim.PerTickNone() // null in the base: the axis still sets it
	axes := []whatif.Axis{
		{Path: "autoscaler.grace_ms", Values: []any{num("2000"), num("30000")}},
		{Path: "autoscaler.metric", Values: []any{"requests_waiting"}},
		{Path: "autoscaler.max_remove_per_tick", Values: []any{num("1")}},
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 2)
	assert.Equal(t, 30000.0, *points[1].Scenario.Autoscaler.GraceMS)
	assert.Equal(t, sim.MetricRequestsWaiting, points[0].Scenario.Autoscaler.Metric)
	assert.Equal(t, 1, *points[0].Scenario.Autoscaler.MaxRemovePerTick.Ptr())

	axes = []whatif.Axis{
		{Path: "router.migration_limit", Values: []any{num("0"), num("3")}},
		{Path: "workload.sessions.rate_stages[1].rate_per_s", Values: []any{num("2"), num("20")}},
		{Path: "autoscaler.reuse_draining", Values: []any{true}},
	}
	points, err = whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 4)
	assert.Equal(t, 3, points[3].Scenario.Router.MigrationLimit)
	assert.Equal(t, 20.0, points[3].Scenario.Workload.Sessions.RateStages[1].RatePerS)
	assert.True(t, points[3].Scenario.Autoscaler.ReuseDraining)

	// A value the scenario's rules refuse names the axis and the rule.
	_, err = whatif.Expand(base, []whatif.Axis{{Path: "autoscaler.metric_delay_ms", Values: []any{num("1e9")}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "autoscaler.metric_delay_ms")
	_, err = whatif.Expand(base, []whatif.Axis{{Path: "autoscaler.metric", Values: []any{"qps"}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must be one of")
}
