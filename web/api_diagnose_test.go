package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// diagnoseScenario: requests every 20 ms for 2 s on 1 to 2 workers under an HPA with all three
// lags (a 100 ms metric delay, a 1 s window, a 500 ms cold start), judged by TTFT ≤ 50 ms.
func diagnoseScenario() string {
	var reqs []string
	for k := range 100 {
		reqs = append(reqs, `{"id": "r`+strconv.Itoa(k)+`", "at_ms": `+strconv.Itoa(20*k)+`, "blocks": ["A*4"], "output_tokens": 4}`)
	}
	return `{"name": "diagnose me",
	  "fleet": {"workers": 1, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false}, "slo": {"ttft_ms": 50},
	  "autoscaler": {"interval_ms": 400, "metric_delay_ms": 100, "target": 1, "min_workers": 1, "max_workers": 2,
	    "behavior": {"scale_down": {"window_ms": 1000}}, "startup_ms": 500, "grace_ms": 1000},
	  "workload": {"type": "requests", "requests": [` + strings.Join(reqs, ",") + `]}}`
}

// A diagnose plan over the API, then its page: the four fleets, the shares that sum to the gap,
// the 8 runs and the Shapley bars.
func TestAPIDiagnosePlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	rec := postJSON(t, s, "/api/v1/plans", planBody(diagnoseScenario(), `"goal": {"diagnose": {"rate_per_worker_per_s": 50}}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	p := waitPlan(t, s, id, store.StatusDone)
	d := p.Diagnose
	require.NotNil(t, d, p.Reason)
	assert.Len(t, d.Fleets, 4)
	require.Len(t, d.Subsets, 8)
	require.Len(t, d.Lags, 3, p.Reason)
	sum := 0.0
	for _, l := range d.Lags {
		sum += l.AttainmentPoints
	}
	assert.InDelta(t, (*d.Subsets[7].Attainment-*d.Subsets[0].Attainment)*100, sum, 1e-9)
	assert.Equal(t, 10, p.Runs, "8 subsets, the ideal and the static fleet")
	assert.Contains(t, p.Name, "How far from ideal")
	t.Log(d.Comparison, " ", d.Answer)

	api := get(t, s, "/api/v1/plans/"+id)
	require.Equal(t, http.StatusOK, api.Code)
	assert.Contains(t, api.Body.String(), `"diagnose":{"rate_per_worker_per_s":50,`)

	doc := parseHTML(t, get(t, s, "/plans/"+id).Body)
	assert.Equal(t, d.Comparison, strings.TrimSpace(byTestID(doc, "diagnose-comparison").Text()))
	assert.Equal(t, 4, byTestID(doc, "diagnose-fleets").Find("tbody tr").Length())
	assert.Equal(t, 8, byTestID(doc, "diagnose-subsets").Find("tbody tr").Length())
	assert.Equal(t, 1, doc.Find("#lag-shares").Length(), "the Shapley bars")
	assert.Equal(t, 1, doc.Find("#diagnose-fleet").Length(), "the fleets over time, the ideal fleet among them")
	opt, _ := doc.Find("#diagnose-fleet").Attr("data-echarts-option")
	assert.Contains(t, opt, `"name":"The ideal fleet"`)
	assert.Positive(t, byTestID(doc, "chart-table-diagnose-fleet").Find("tbody tr").Length())
	assert.Contains(t, byTestID(doc, "diagnose-ideal-note").Text(), "the metric offered_rate")
	// Every run is linked: the four fleets', the eight subsets', and the list of all 11.
	for _, table := range []string{"diagnose-fleets", "diagnose-subsets"} {
		byTestID(doc, table).Find("tbody tr").Each(func(i int, row *goquery.Selection) {
			href := row.Find(`a[data-testid="run-link"]`).AttrOr("href", "")
			assert.Regexp(t, `^/runs/[a-z2-7]{16}$`, href, "%s row %d", table, i)
		})
	}
	links := map[string]bool{}
	byTestID(doc, "plan-all-runs").Find(`a[data-testid="plan-run-link"]`).Each(func(_ int, a *goquery.Selection) { links[a.AttrOr("href", "")] = true })
	assert.Len(t, links, p.Runs, "every run of the plan")
	assert.Contains(t, byTestID(doc, "diagnose-fleets").Text(), "a fixed fleet of", "the static fleet is the baseline, named")

	// Without an autoscaler the request is refused by path.
	noAuto := strings.Replace(diagnoseScenario(), `"autoscaler"`, `"unused"`, 1)
	noAuto = noAuto[:strings.Index(noAuto, `"unused"`)] + noAuto[strings.Index(noAuto, `"workload"`):]
	rec = postJSON(t, s, "/api/v1/plans", planBody(noAuto, `"goal": {"diagnose": {}}`))
	assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "needs a scenario with an autoscaler")
}

// The plan form starts capacity and diagnose plans with their fields; a refusal sits beside
// the field it is about.
func TestPlanFormCapacityAndDiagnose(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	doc := parseHTML(t, get(t, s, "/plans/new?preset=autoscaler-day").Body)
	assert.Equal(t, 1, byTestID(doc, "plan-goal-diagnose").Length())
	assert.Equal(t, 1, byTestID(doc, "plan-goal-capacity").Length())
	assert.Equal(t, 1, byTestID(doc, "plan-min-attainment").Length())

	rec := postForm(t, s, "/plans", url.Values{"scenario": {diagnoseScenario()}, "goal": {"diagnose"}, "rate_per_worker": {"50"},
		"min_attainment": {"0.95"}, "remove": {""}, "start_ms": {""}, "max_killed": {"0"}, "max_runs": {""}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	p, err := s.runs.Plan(context.Background(), strings.TrimPrefix(rec.Header().Get("Location"), "/plans/"))
	require.NoError(t, err)
	require.NotNil(t, p.Goal.Diagnose)
	assert.Equal(t, 50.0, p.Goal.Diagnose.RatePerWorker)
	assert.Equal(t, 0.95, p.Goal.Diagnose.Capacity.MinAttainment)

	rec = postForm(t, s, "/plans", url.Values{"scenario": {diagnoseScenario()}, "goal": {"diagnose"}, "rate_per_worker": {"-3"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "error-rate_per_worker").Text(), "one worker's capacity")

	rec = postForm(t, s, "/plans", url.Values{"scenario": {diagnoseScenario()}, "goal": {"capacity"}, "min_attainment": {"0.9"}, "max_runs": {"4"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	p, err = s.runs.Plan(context.Background(), strings.TrimPrefix(rec.Header().Get("Location"), "/plans/"))
	require.NoError(t, err)
	require.NotNil(t, p.Goal.Capacity)
	assert.Equal(t, 0.9, p.Goal.Capacity.MinAttainment)

	// min_attainment is a tune plan's limit.
	rec = postForm(t, s, "/plans", url.Values{"scenario": {diagnoseScenario()}, "goal": {"tune"}, "min_attainment": {"0.97"}, "max_runs": {"3"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	p, err = s.runs.Plan(context.Background(), strings.TrimPrefix(rec.Header().Get("Location"), "/plans/"))
	require.NoError(t, err)
	require.NotNil(t, p.Constraints.MinAttainment)
	assert.Equal(t, 0.97, *p.Constraints.MinAttainment)
}
