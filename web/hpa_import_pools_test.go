package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
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

// A drain plan of one pool through the API runs and its page renders.
func TestPlanAPIPoolDrain(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	scenario, err := os.ReadFile("../sim/whatif/testdata/pd-small.json")
	require.NoError(t, err)
	rest := `"goal": {"remove": 1, "start_ms": 5000, "role": "decode"}, "search": {"max_runs": 4, "bisect_grace": false, "selections": ["highest_id", "least_work"], "waves": [1]}`
	rec := postJSON(t, s, "/api/v1/plans", planBody(string(scenario), rest))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	p := waitPlan(t, s, id, "done")
	require.NotEmpty(t, p.Candidates)
	for _, c := range p.Candidates {
		assert.Contains(t, c.Label, "decode pool: ")
	}
	page := get(t, s, "/plans/"+id)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), "decode pool: ")

	// Without a role the API names the field.
	rec = postJSON(t, s, "/api/v1/plans", planBody(string(scenario), `"goal": {"remove": 1}`))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "goal.role")
}

// The plan form asks which pool a plan works on when the scenario has pools, and posts it as
// goal.role: a drain of the decode pool from the form is accepted; without the field it is
// refused beside it.
func TestPlanFormPool(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	scenario, err := os.ReadFile("../sim/whatif/testdata/pd-small.json")
	require.NoError(t, err)
	doc := parseHTML(t, get(t, s, "/plans/new?preset=pd-night").Body)
	require.Equal(t, 1, byTestID(doc, "plan-role").Length(), "a pool choice for a scenario with pools")
	assert.Equal(t, "prefill", byTestID(doc, "plan-role").Find("option[selected]").AttrOr("value", ""))
	doc = parseHTML(t, get(t, s, "/plans/new?preset=mooncake-16to12").Body)
	assert.Zero(t, byTestID(doc, "plan-role").Length(), "no pool choice for one fleet")

	form := url.Values{"scenario": {string(scenario)}, "goal": {"drain"}, "remove": {"1"}, "start_ms": {"5000"}, "max_runs": {"4"}}
	rec := postForm(t, s, "/plans", form)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, doc.Text(), "goal.role")
	form.Set("role", "decode")
	rec = postForm(t, s, "/plans", form)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/plans/")
	p := waitPlan(t, s, id, "done")
	require.NotEmpty(t, p.Candidates)
	assert.Contains(t, p.Candidates[0].Label, "decode pool: ")
}
