package web

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/format"
)

// lullScenario is the tune plan's hand-checked scenario (sim/whatif/testdata/lull.json).
func lullScenario(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../sim/whatif/testdata/lull.json")
	require.NoError(t, err)
	return string(data)
}

// A tune plan through the API: its candidates are ordinary runs whose stored summaries give
// the GPU-hours the ranking needs, and the recommendation carries the settings to deploy.
func TestAPITunePlan(t *testing.T) {
	s := newTestServer(t, runs.Config{Workers: 2}, true)
	body := planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "constraints": {"ttft_p99_ms": 200}, "search": {"max_runs": 8}`)
	rec := postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())

	p := waitPlan(t, s, id, store.StatusDone)
	require.NotNil(t, p.Recommended, p.Reason)
	require.NotNil(t, p.Recommended.Autoscaler)
	assert.Contains(t, p.Recommended.Reason, "fewer GPU-hours than a fixed fleet of 4 workers")
	assert.LessOrEqual(t, p.Runs, 8)
	assert.Len(t, p.Submitted, p.Runs)
	best := p.Candidates[0]
	assert.Equal(t, best.RunID, p.Recommended.RunID)
	require.NotNil(t, best.Fleet)
	assert.Positive(t, best.Fleet.GPUHours, "the stored summary gives the GPU-hours")
	require.NotNil(t, best.Fleet.SavedVsFixedPct)
	assert.Positive(t, *best.Fleet.SavedVsFixedPct)

	rec = get(t, s, "/api/v1/plans/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	var raw struct {
		Goal      map[string]any   `json:"goal"`
		Baselines []map[string]any `json:"baselines"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	assert.Equal(t, "autoscaler", raw.Goal["tune"])
	require.Len(t, raw.Baselines, 2)
	assert.Equal(t, "fixed fleet of 4 workers", raw.Baselines[0]["label"])

	// The same request is the same plan, answered at once.
	rec = postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, id, createdID(t, rec, rec.Body.Bytes()))

	// The page: the sentence, the actions, both charts, the ranked table and the money at the
	// price in the URL.
	rec = get(t, s, "/plans/"+id+"?price=4")
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, p.Recommended.Reason, strings.TrimSpace(byTestID(doc, "recommendation").Text()))
	assert.Equal(t, "/?from="+p.Recommended.RunID, byTestID(doc, "open-as-scenario").AttrOr("href", ""))
	yours := p.Baselines[1].RunID
	assert.Equal(t, "/compare?a="+yours+"&b="+p.Recommended.RunID+"&price=4", byTestID(doc, "compare-yours").AttrOr("href", ""))
	assert.Equal(t, "/plans/"+id+"/hpa.yaml", byTestID(doc, "download-hpa").AttrOr("href", ""))
	assert.Equal(t, "4", byTestID(doc, "price").AttrOr("value", ""))
	assert.NotEmpty(t, doc.Find("#tune-scatter").AttrOr("data-echarts-option", ""))
	assert.Contains(t, doc.Find("#tune-scatter").AttrOr("data-echarts-option", ""), `"yAxis":200`, "the TTFT limit is drawn")
	fleet := doc.Find("#tune-fleet").AttrOr("data-echarts-option", "")
	for _, name := range []string{"Recommended", "Your settings", "Fixed fleet", "Load: requests in flight"} {
		assert.Contains(t, fleet, name)
	}
	assert.Equal(t, len(p.Candidates), byTestID(doc, "plan-candidate").Length())
	assert.Equal(t, 2, byTestID(doc, "tune-baseline").Length())
	savings := byTestID(doc, "tune-savings").Text()
	saved := p.Baselines[0].Fleet.GPUHours - best.Fleet.GPUHours
	assert.Contains(t, savings, format.Money(saved*4), "money saved a run at 4 a GPU-hour")
	assert.Contains(t, byTestID(doc, "tune-settings").Text(), "autoscaler.target")

	// A bad price is named and the server's price is used.
	rec = get(t, s, "/plans/"+id+"?price=-1")
	require.Equal(t, http.StatusOK, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "price-error").Text(), "price: give a number above 0")

	// The manifest of the recommendation reads back into its settings.
	rec = get(t, s, "/plans/"+id+"/hpa.yaml")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "application/yaml; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Header().Get("Content-Disposition"), "attachment")
	assert.Contains(t, rec.Body.String(), "plan "+id)
	im, err := hpa.Import(rec.Body.Bytes(), *p.Recommended.Autoscaler)
	require.NoError(t, err)
	assert.Equal(t, *p.Recommended.Autoscaler, im.Autoscaler)
	// Any candidate's, by run id; an unknown run is a 404 naming it.
	other := p.Candidates[len(p.Candidates)-1]
	rec = get(t, s, "/plans/"+id+"/hpa.yaml?run="+other.RunID)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), other.Label)
	rec = get(t, s, "/plans/"+id+"/hpa.yaml?run=nope")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, rec.Body.String(), "no candidate of this plan has run nope")
}

func TestAPITunePlanErrors(t *testing.T) {
	s := newTestServer(t, runs.Config{MaxPlanRuns: 10}, false)
	cases := []struct {
		name, body, wantPath, wantText string
	}{
		{"no autoscaler", planBody(fourWorkers(t, ""), `"goal": {"tune": "autoscaler"}`), "goal.tune", "needs a scenario with an autoscaler"},
		{"unknown tune", planBody(lullScenario(t), `"goal": {"tune": "everything"}`), "goal.tune", `must be "autoscaler"`},
		{"drain field", planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "search": {"waves": [1]}`), "search.waves", "is for a drain plan"},
		{"bad target", planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "search": {"targets": [0]}`), "search.targets[0]", "positive"},
		{"runs above the server's limit", planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "search": {"max_runs": 11}`), "search.max_runs", "at most 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := postJSON(t, s, "/api/v1/plans", tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var out struct {
				Fields []sim.FieldError `json:"fields"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			require.NotEmpty(t, out.Fields, rec.Body.String())
			assert.Equal(t, tc.wantPath, out.Fields[0].Path)
			assert.Contains(t, out.Fields[0].Message, tc.wantText)
		})
	}
}
