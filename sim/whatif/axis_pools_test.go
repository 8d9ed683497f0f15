package whatif_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// Model 5's fields are sweep axes: the pools' sizes and overrides, the link, the lease, the
// load-failure policy, the prefill drain, a scale-in action's role, and each pool's autoscaler.
func TestExpandPoolAxes(t *testing.T) {
	p, ok := sim.PresetByKey("pd-night")
	require.True(t, ok)
	base, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	axes := []whatif.Axis{
		{Path: "disaggregation.prefill.workers", Values: []any{num("3"), num("6")}},
		{Path: "disaggregation.transfer.bandwidth_gbps", Values: []any{num("25"), num("100")}},
		{Path: "disaggregation.prefill_drain.mode", Values: []any{"wait", "fixed", "skip"}},
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 12)
	last := points[11].Scenario.Disaggregation
	assert.Equal(t, 6, last.Prefill.Workers)
	assert.Equal(t, 100.0, last.Transfer.BandwidthGBps)
	assert.Equal(t, sim.DrainSkip, last.PrefillDrain.Mode)
	assert.Equal(t, sim.DrainFixed, points[1].Scenario.Disaggregation.PrefillDrain.Mode)

	// The base's lease is heartbeat: sweeping ttl_ms sweeps fixed leases of those lengths.
	require.Equal(t, sim.LeaseHeartbeat, base.Disaggregation.Lease.Mode)
	axes = []whatif.Axis{
		{Path: "disaggregation.lease.ttl_ms", Values: []any{num("30000"), num("480000")}},
		{Path: "disaggregation.load_failure_policy", Values: []any{"fail", "recompute"}},
	}
	points, err = whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 4)
	assert.Equal(t, sim.Lease{Mode: sim.LeaseFixed, TTLMS: 480000}, points[3].Scenario.Disaggregation.Lease)
	assert.Equal(t, sim.Lease{Mode: sim.LeaseFixed, TTLMS: 30000}, points[0].Scenario.Disaggregation.Lease)
	assert.Equal(t, sim.LoadFailureRecompute, points[3].Scenario.Disaggregation.LoadFailurePolicy)
	// The mode itself (vLLM before 0.22 against 0.22+): heartbeat drops a fixed lease's ttl_ms.
	fixed := *base
	d := *base.Disaggregation
	d.Lease = sim.Lease{Mode: sim.LeaseFixed, TTLMS: 480000}
	fixed.Disaggregation = &d
	points, err = whatif.Expand(&fixed, []whatif.Axis{{Path: "disaggregation.lease.mode", Values: []any{"heartbeat", "fixed"}}}, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	assert.Equal(t, sim.Lease{Mode: sim.LeaseHeartbeat}, points[0].Scenario.Disaggregation.Lease)
	assert.Equal(t, sim.Lease{Mode: sim.LeaseFixed, TTLMS: 480000}, points[1].Scenario.Disaggregation.Lease)

	axes = []whatif.Axis{
		{Path: "disaggregation.decode.max_num_seqs", Values: []any{num("4"), num("8")}},
		{Path: "disaggregation.prefill_drain.fixed_ms", Values: []any{num("0"), num("30000")}},
		{Path: "disaggregation.transfer.latency_ms", Values: []any{num("0"), num("5")}},
	}
	points, err = whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 8)
	assert.Equal(t, 8, points[7].Scenario.Disaggregation.Decode.MaxNumSeqs)
	assert.Equal(t, 30000.0, points[7].Scenario.Disaggregation.PrefillDrain.FixedMS)
	assert.Equal(t, 5.0, points[7].Scenario.Disaggregation.Transfer.LatencyMS)

	// A scale-in action's role, and values the pool rules refuse, named by axis.
	points, err = whatif.Expand(base, []whatif.Axis{{Path: "scale_in[0].role", Values: []any{"prefill", "decode"}}}, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	assert.Equal(t, sim.RoleDecode, points[1].Scenario.ScaleIn[0].Role)
	_, err = whatif.Expand(base, []whatif.Axis{{Path: "disaggregation.prefill_drain.mode", Values: []any{"sleep"}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `must be one of ["wait" "fixed" "skip"], not "sleep"`)
	_, err = whatif.Expand(base, []whatif.Axis{{Path: "disaggregation.prefill.workers", Values: []any{num("0")}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disaggregation.prefill.workers")
}

// Each pool's autoscaler is swept by its own path, and handoffs_held only on the prefill pool.
func TestExpandPoolAutoscalerAxes(t *testing.T) {
	base := mustScenario(t, "../testdata/examples/pd_autoscaler_per_role.json")
	require.NotNil(t, base.PoolAutoscalers)
	axes := []whatif.Axis{
		{Path: "autoscaler.prefill.metric", Values: []any{"handoffs_held", "requests_waiting"}},
		{Path: "autoscaler.decode.target", Values: []any{num("0.5"), num("0.9")}},
	}
	if base.PoolAutoscalers.Prefill == nil || base.PoolAutoscalers.Decode == nil {
		t.Fatalf("the example must have both pools' autoscalers")
	}
	if base.PoolAutoscalers.Decode.Metric != sim.MetricKVUsage {
		axes[1] = whatif.Axis{Path: "autoscaler.decode.target", Values: []any{num("2"), num("4")}}
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 4)
	assert.Equal(t, sim.MetricHandoffsHeld, points[0].Scenario.PoolAutoscalers.Prefill.Metric)
	assert.Equal(t, sim.MetricRequestsWaiting, points[3].Scenario.PoolAutoscalers.Prefill.Metric)
	assert.NotEqual(t, points[0].Scenario.PoolAutoscalers.Decode.Target, points[1].Scenario.PoolAutoscalers.Decode.Target)

	_, err = whatif.Expand(base, []whatif.Axis{{Path: "autoscaler.decode.metric", Values: []any{"handoffs_held"}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"offered_rate"], not "handoffs_held"`, "the decode pool's metrics do not list handoffs_held")
}
