package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// Issue 35: a tune plan of a scenario with an slo plots its settings against SLO attainment,
// the recommended one and the scenario's own marked and linked to their runs, the least
// attainment as a line; the chart's table lists the same.
func TestTunePlanPageScatterAgainstAttainment(t *testing.T) {
	var sc map[string]any
	require.NoError(t, json.Unmarshal([]byte(lullScenario(t)), &sc))
	sc["slo"] = map[string]any{"ttft_ms": 200}
	scenario, err := json.Marshal(sc)
	require.NoError(t, err)
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	rec := postJSON(t, s, "/api/v1/plans", planBody(string(scenario), `"goal": {"tune": "autoscaler"}, "constraints": {"min_attainment": 0.9}, "search": {"max_runs": 6}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	p := waitPlan(t, s, createdID(t, rec, rec.Body.Bytes()), store.StatusDone)
	require.NotNil(t, p.Recommended, p.Reason)
	require.Len(t, p.Baselines, 2)

	doc := parseHTML(t, get(t, s, "/plans/"+p.ID).Body)
	block := byTestID(doc, "chart-tune-scatter")
	require.Equal(t, 1, block.Length())
	assert.Equal(t, "Settings: GPU-hours against SLO attainment", strings.TrimSpace(block.Find("figcaption").Text()))
	el := doc.Find("#tune-scatter")
	assert.Equal(t, "img", el.AttrOr("role", ""))
	assert.NotEmpty(t, el.AttrOr("aria-label", ""))
	var opt struct {
		YAxis  map[string]any `json:"yAxis"`
		Series []struct {
			Name     string         `json:"name"`
			Data     []any          `json:"data"`
			MarkLine map[string]any `json:"markLine"`
		} `json:"series"`
	}
	require.NoError(t, json.Unmarshal([]byte(el.AttrOr("data-echarts-option", "")), &opt))
	assert.Equal(t, "SLO attainment (%)", opt.YAxis["name"])
	urls := map[string][]string{}
	for _, se := range opt.Series {
		for _, item := range se.Data {
			d, _ := item.(map[string]any) // the Pareto front's points are plain pairs
			if u, ok := d["url"].(string); ok {
				urls[se.Name] = append(urls[se.Name], u)
				assert.Contains(t, d["tip"], d["name"], "a point's tooltip names its settings")
			}
		}
		if se.Name == "Pareto front" {
			require.NotNil(t, se.MarkLine, "the least attainment is drawn")
			assert.Equal(t, 90.0, se.MarkLine["data"].([]any)[0].(map[string]any)["yAxis"])
		}
	}
	assert.Equal(t, []string{"/runs/" + p.Recommended.RunID}, urls["Recommended"])
	assert.Equal(t, []string{"/runs/" + p.Baselines[1].RunID}, urls["Your settings"])
	assert.Equal(t, []string{"/runs/" + p.Baselines[0].RunID}, urls["Fixed fleet"])
	n := 0
	for _, u := range urls {
		n += len(u)
	}
	assert.Equal(t, len(p.Candidates)+2, n, "every setting that ran is a point")
	table := byTestID(doc, "chart-table-tune-scatter")
	assert.Contains(t, table.Find("thead").Text(), "SLO attainment (%)")
	assert.Contains(t, table.Find("tbody tr").First().Text(), "recommended")
}
