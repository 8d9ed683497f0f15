package sim

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDisaggregationFillsPoolsFromFleet(t *testing.T) {
	s := mustParse(t, `{"fleet": {"gpu_blocks": 100, "max_num_seqs": 8, "timing": {"decode_ms": 3}},
		"disaggregation": {"prefill": {"workers": 2, "timing": {"prefill_ms": 5}}, "decode": {"workers": 3, "gpu_blocks": 200},
		"lease": {"mode": "fixed"}},
		"autoscaler": {"decode": {"metric": "kv_usage", "target": 0.8}},
		"workload": {"type": "sessions"}}`)
	d := s.Disaggregation
	require.NotNil(t, d)
	assert.Equal(t, 0, s.Fleet.Workers, "fleet.workers is absent with disaggregation")
	assert.Equal(t, 5, s.InitialWorkers())
	assert.Equal(t, 100, d.Prefill.GPUBlocks)
	assert.Equal(t, 200, d.Decode.GPUBlocks)
	assert.Equal(t, 8, d.Decode.MaxNumSeqs)
	assert.Equal(t, 5.0, d.Prefill.Timing.PrefillMS)
	assert.Equal(t, 3.0, d.Prefill.Timing.DecodeMS, "timing is filled field by field")
	assert.Equal(t, Link{LatencyMS: 1, BandwidthGBps: 50}, d.Transfer)
	assert.Equal(t, Lease{Mode: LeaseFixed, TTLMS: 480000}, d.Lease)
	assert.Equal(t, LoadFailureFail, d.LoadFailurePolicy)
	assert.Equal(t, PrefillDrain{Mode: DrainWait, FixedMS: 30000}, d.PrefillDrain)
	assert.False(t, s.KVCR.Enabled, "kvcr.enabled defaults to false with disaggregation")
	require.NotNil(t, s.PoolAutoscalers)
	assert.Nil(t, s.PoolAutoscalers.Prefill)
	assert.Equal(t, 3, s.PoolAutoscalers.Decode.MaxWorkers, "max_workers defaults to the pool's workers")

	// The canonical JSON parses again to the same scenario and the same id.
	again := mustParse(t, string(s.CanonicalJSON()))
	assert.Equal(t, s.ID(), again.ID())
	assert.Equal(t, string(s.CanonicalJSON()), string(again.CanonicalJSON()))
	var back Scenario
	require.NoError(t, json.Unmarshal(s.CanonicalJSON(), &back))
	assert.Equal(t, s.PoolAutoscalers, back.PoolAutoscalers)
	assert.Nil(t, back.Autoscaler)
}

func TestAggregatedScenarioJSONUnchangedByModel5Fields(t *testing.T) {
	s := mustParse(t, `{"autoscaler": {}, "workload": {"type": "sessions"}}`)
	var back Scenario
	require.NoError(t, json.Unmarshal(s.CanonicalJSON(), &back))
	require.NotNil(t, back.Autoscaler)
	assert.Nil(t, back.PoolAutoscalers)
	assert.NotContains(t, string(s.CanonicalJSON()), "disaggregation")
	assert.Contains(t, string(s.CanonicalJSON()), `"fleet":{"workers":16,`)
}

// A prefill worker the autoscaler starts and cancels, or that is still starting at the end,
// has a row with zero held block-seconds.
func TestPoolAutoscalerStartingPrefillWorkersReport(t *testing.T) {
	s := mustParse(t, `{"name": "pd starts", "fleet": {"gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4, "max_batched_tokens": 64,
		"timing": {"prefill_ms": 2, "prefill_ms_per_1k_tokens": 0, "decode_ms": 1, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
		"disaggregation": {"prefill": {"workers": 1}, "decode": {"workers": 1}},
		"autoscaler": {"prefill": {"interval_ms": 5, "metric": "requests_per_worker", "target": 1, "tolerance": 0, "max_workers": 4,
			"startup_ms": 1000, "behavior": {"scale_down": {"window_ms": 0}}}},
		"workload": {"type": "requests", "requests": [
			{"id": "a", "at_ms": 0, "blocks": ["A*3"], "output_tokens": 40},
			{"id": "b", "at_ms": 0, "blocks": ["B*3"], "output_tokens": 40},
			{"id": "c", "at_ms": 0, "blocks": ["C*3"], "output_tokens": 40},
			{"id": "d", "at_ms": 0, "blocks": ["D*3"], "output_tokens": 40}]},
		"report": {"per_request": true}}`)
	rep := mustRun(t, s)
	require.Greater(t, len(rep.Workers), 2, "the prefill autoscaler started workers")
	for _, w := range rep.Workers[2:] {
		assert.Equal(t, RolePrefill, w.Role)
		v, ok := w.HeldBlockSeconds.Value()
		assert.True(t, ok)
		assert.Zero(t, v)
	}
	assert.Equal(t, int64(4), rep.Summary.Requests.Completed)
}
