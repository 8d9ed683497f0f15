package web

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
)

// POST /api/v1/hpa/import with llm-d's pair of ScaledObjects answers a scenario with pools and
// an autoscaler per pool, and each pool's own import under "pools".
func TestImportAPIPools(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	manifest, err := os.ReadFile("../sim/hpa/testdata/pd/llm-d-keda.yaml")
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(`{"workload": {"type": "sessions", "sessions": {}}}`), "manifest": string(manifest)})
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/hpa/import", string(body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var got struct {
		Scenario json.RawMessage `json:"scenario"`
		Filled   []string        `json:"filled"`
		Pools    struct {
			Prefill struct {
				Origin struct {
					Name string `json:"name"`
				} `json:"origin"`
			} `json:"prefill"`
			Decode struct {
				Autoscaler sim.Autoscaler `json:"autoscaler"`
			} `json:"decode"`
		} `json:"pools"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	sc, err := sim.Parse(got.Scenario, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.Disaggregation)
	assert.Equal(t, 12, sc.Disaggregation.Decode.Workers)
	assert.Equal(t, 0.8, sc.PoolAutoscalers.Decode.Target)
	assert.Equal(t, "ms-llama-prefill", got.Pools.Prefill.Origin.Name)
	assert.Equal(t, sim.MetricKVUsage, got.Pools.Decode.Autoscaler.Metric)
	assert.Contains(t, got.Filled, "autoscaler.decode.target")
}
