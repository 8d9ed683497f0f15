package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// POST /api/v1/pairs with kind "autoscaler": A is the scenario with its autoscaler, B the same
// on a fixed fleet; both run, and the compare page compares them.
func TestAPIPairAutoscaler(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	raw, err := os.ReadFile(filepath.Join("..", "sim", "testdata", "examples", "autoscaler_window_holds_scale_down.json"))
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/pairs", `{"kind": "autoscaler", "scenario": `+string(raw)+`}`)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var out struct {
		A, B       struct{ ID string }
		CompareURL string `json:"compare_url"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	ra := waitStatus(t, s, out.A.ID, store.StatusDone)
	rb := waitStatus(t, s, out.B.ID, store.StatusDone)
	sa, err := sim.Parse(ra.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	sb, err := sim.Parse(rb.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	assert.NotNil(t, sa.Autoscaler, "A is the autoscaler run")
	assert.Nil(t, sb.Autoscaler, "B is the fixed fleet")
	assert.Contains(t, sb.Name, "fixed fleet")
	page := get(t, s, out.CompareURL)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), "GPU-hours")

	// Without an autoscaler there is nothing to compare: 422 with the fix.
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "autoscaler", "scenario": `+testScenario("no autoscaler")+`}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "no autoscaler")
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "fleet", "scenario": `+testScenario("bad kind")+`}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "hints, guard, autoscaler, or with prefill and decode pools load-failure, lease or prefill-drain")
}
