package web

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// A capacity plan over the API: one worker that runs a request alone in exactly 3 ms serves
// 1000 / 3 = 333.33 requests/s within TTFT ≤ 3 ms (sim/whatif's TestCapacityByHand), found
// within 12 runs, its curve and answer kept with the plan.
func TestAPICapacityPlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	scenario := `{"name": "one request mix",
	  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false}, "slo": {"ttft_ms": 3},
	  "workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 1}]}}`
	rec := postJSON(t, s, "/api/v1/plans", planBody(scenario, `"goal": {"capacity": {"workers": 1, "duration_ms": 1000}}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	p := waitPlan(t, s, id, store.StatusDone)
	require.NotNil(t, p.Capacity, p.Reason)
	c := p.Capacity
	require.NotNil(t, c.RatePerWorker, c.Answer)
	require.NotNil(t, c.AboveRate, c.Answer)
	assert.LessOrEqual(t, *c.RatePerWorker, 1000.0/3)
	assert.Greater(t, *c.AboveRate, 1000.0/3)
	assert.LessOrEqual(t, p.Runs, 12, "the capacity search's own budget, not the server's plan default")
	assert.Len(t, c.Curve, p.Runs)
	assert.Equal(t, c.Answer, p.Reason)
	assert.Contains(t, p.Name, "capacity")

	// The API's answer has the capacity and its curve (its shape checked against the OpenAPI
	// document by get).
	api := get(t, s, "/api/v1/plans/"+id)
	require.Equal(t, http.StatusOK, api.Code)
	var raw struct {
		Capacity struct {
			Curve []map[string]any `json:"curve"`
		} `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal(api.Body.Bytes(), &raw))
	assert.Len(t, raw.Capacity.Curve, p.Runs)

	// The plan page shows the answer.
	page := get(t, s, "/plans/"+id)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), "One worker serves ")

	// Without an slo the request is refused by path.
	rec = postJSON(t, s, "/api/v1/plans", planBody(`{"workload": {"type": "sessions"}}`, `"goal": {"capacity": {}}`))
	assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "goal.capacity")
}
