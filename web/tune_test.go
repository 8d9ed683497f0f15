package web

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
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
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
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
	assert.Equal(t, "fixed fleet of 4 workers, the autoscaler's maximum", raw.Baselines[0]["label"])

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
	// Which pods go first is not among the settings to apply: an HPA cannot carry it.
	assert.NotContains(t, byTestID(doc, "tune-settings").Text(), "autoscaler.select")
	assert.Contains(t, byTestID(doc, "tune-settings").Text(), "Apply these")
	apart := byTestID(doc, "tune-settings-apart").Text()
	assert.Contains(t, apart, "autoscaler.select")
	assert.Contains(t, apart, "Not in the manifests")
	assert.Contains(t, apart, best.Autoscaler.Select)

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
	// The same controller: the recommendation's shorthand comes back as its behavior.
	ws, gs := p.Recommended.Autoscaler.ControllerSettings(), im.Autoscaler.ControllerSettings()
	ws.Tolerance, gs.Tolerance = 0, 0 // per direction inside the behavior
	assert.Equal(t, ws, gs)
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
	s := newFakeServer(t, runs.Config{MaxPlanRuns: 10}, false)
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

// cpuHPA is a hand-written HPA on CPU with a Pods metric beside it.
const cpuHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: vllm
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 2
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Pods
    pods:
      metric: {name: vllm_num_requests_running_and_waiting}
      target: {type: AverageValue, averageValue: "8"}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 120
      policies: [{type: Pods, value: 1, periodSeconds: 15}]
    scaleUp:
      policies: [{type: Pods, value: 4, periodSeconds: 15}]
`

func multipartForm(t *testing.T, fields map[string]string, file string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	if file != "" {
		part, err := mw.CreateFormFile("file", "hpa.yaml")
		require.NoError(t, err)
		_, err = part.Write([]byte(file))
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return &b, mw.FormDataContentType()
}

// The plan form imports an HPA (pasted or uploaded) into the scenario's autoscaler, names what
// the model cannot represent, and offers to tune it.
func TestPlanFormImportsHPA(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for name, fields := range map[string]struct {
		paste, file, scenario string
	}{
		"pasted into an autoscaled scenario":   {cpuHPA, "", lullScenario(t)},
		"uploaded into a scenario without one": {"", cpuHPA, fourWorkers(t, `[{"at_ms": 100, "count": 1}]`)},
	} {
		t.Run(name, func(t *testing.T) {
			body, ctype := multipartForm(t, map[string]string{"scenario": fields.scenario, "manifest": fields.paste}, fields.file)
			req := httptest.NewRequest(http.MethodPost, "/plans/import-hpa", body)
			req.Header.Set("Content-Type", ctype)
			rec := do(t, s.Handler(), req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			doc := parseHTML(t, rec.Body)
			var sc struct {
				Autoscaler sim.Autoscaler  `json:"autoscaler"`
				ScaleIn    []any           `json:"scale_in"`
				Name       json.RawMessage `json:"name"`
			}
			require.NoError(t, json.Unmarshal([]byte(byTestID(doc, "whatif-scenario").Text()), &sc))
			assert.Equal(t, 8.0, sc.Autoscaler.Target)
			assert.Equal(t, 2, sc.Autoscaler.MinWorkers)
			assert.Equal(t, 4, sc.Autoscaler.MaxWorkers)
			assert.Equal(t, 120000.0, sc.Autoscaler.ScaleDownWindow())
			assert.Equal(t, 1, *sc.Autoscaler.ScaleDownStep())
			assert.Empty(t, sc.ScaleIn)
			assert.Contains(t, byTestID(doc, "hpa-imported").Text(), "Target per worker")
			assert.Contains(t, byTestID(doc, "hpa-problems").Text(), "spec.metrics[0]: a Resource (cpu) metric")
			_, checked := byTestID(doc, "plan-goal-tune").Attr("checked")
			assert.True(t, checked, "the form offers to tune the imported autoscaler")
		})
	}

	// A manifest with no usable metric is refused with the reason, the form kept.
	onlyCPU := strings.Split(cpuHPA, "  - type: Pods")[0]
	body, ctype := multipartForm(t, map[string]string{"scenario": lullScenario(t), "manifest": onlyCPU}, "")
	req := httptest.NewRequest(http.MethodPost, "/plans/import-hpa", body)
	req.Header.Set("Content-Type", ctype)
	rec := do(t, s.Handler(), req)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "whatif-errors").Text(), "spec.metrics: no Pods or External metric")
	assert.Contains(t, byTestID(doc, "hpa-manifest").Text(), "averageUtilization: 70")

	// The same through the API.
	apiBody, err := json.Marshal(map[string]any{"scenario": json.RawMessage(lullScenario(t)), "manifest": cpuHPA})
	require.NoError(t, err)
	rec = postJSON(t, s, "/api/v1/hpa/import", string(apiBody))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out struct {
		Autoscaler sim.Autoscaler `json:"autoscaler"`
		Filled     []string       `json:"filled"`
		Problems   []hpa.Problem  `json:"problems"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, 8.0, out.Autoscaler.Target)
	assert.Contains(t, out.Filled, "autoscaler.max_workers")
	require.NotEmpty(t, out.Problems)
	assert.Equal(t, "spec.metrics[0]", out.Problems[0].Path)
	rec = postJSON(t, s, "/api/v1/hpa/import", `{"manifest": ""}`)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "manifest: required")
	// The scenario is optional, as the OpenAPI document says: left out, the default scenario.
	apiBody, err = json.Marshal(map[string]any{"manifest": cpuHPA})
	require.NoError(t, err)
	rec = postJSON(t, s, "/api/v1/hpa/import", string(apiBody))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, 8.0, out.Autoscaler.Target)
}

// The plan form offers the tune goal for a scenario with an autoscaler and starts a tune plan.
func TestPlanFormTuneGoal(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/plans/new?preset=autoscaler-day")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	_, checked := byTestID(doc, "plan-goal-tune").Attr("checked")
	assert.True(t, checked)
	// Without an autoscaler the choice is not offered.
	assert.Zero(t, byTestID(parseHTML(t, get(t, s, "/plans/new").Body), "plan-goal").Length())

	rec = postForm(t, s, "/plans", url.Values{"scenario": {lullScenario(t)}, "goal": {"tune"}, "remove": {""}, "start_ms": {""},
		"ttft_p99_ms": {"200"}, "e2e_p99_ms": {"5000"}, "max_killed": {"0"}, "max_runs": {"5"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/plans/")
	p, err := s.runs.Plan(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, "autoscaler", p.Goal.Tune)
	assert.Equal(t, 5000.0, *p.Constraints.E2EP99MS)

	// A tune goal on a scenario without an autoscaler is named on the form.
	rec = postForm(t, s, "/plans", url.Values{"scenario": {fourWorkers(t, "")}, "goal": {"tune"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-errors").Text(), "goal.tune: needs a scenario with an autoscaler")
}

// The run and compare pages price GPU-hours at the page's price, kept in the URL; a different
// price is a different cached page.
func TestRunAndComparePagesShowCost(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	a := submitAPI(t, s, lullScenario(t))
	fixed := strings.Replace(lullScenario(t), `"name": "load halves for a long lull"`, `"name": "fixed"`, 1)
	b := submitAPI(t, s, fixed)
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)
	run, err := s.store.GetRun(context.Background(), a)
	require.NoError(t, err)
	var rep sim.Report
	require.NoError(t, json.Unmarshal(run.SummaryJSON, &rep))
	require.Positive(t, rep.Summary.GPUHours)

	for _, price := range []float64{3, 7} {
		ps := strconv.FormatFloat(price, 'f', -1, 64)
		doc := parseHTML(t, get(t, s, "/runs/"+a+"?price="+ps).Body)
		cost := byTestID(doc, "cost-table").Text()
		assert.Contains(t, cost, format.Money(rep.Summary.GPUHours*price), "price %v", price)
		day := rep.Summary.GPUHours * price * 86_400_000 / rep.Summary.DurationMS
		assert.Contains(t, cost, format.Money(day))
		assert.Equal(t, ps, byTestID(doc, "price").AttrOr("value", ""))
	}
	doc := parseHTML(t, get(t, s, "/runs/"+a).Body)
	assert.Contains(t, byTestID(doc, "cost-table").Text(), format.Money(rep.Summary.GPUHours*DefaultGPUHourPrice), "the server's price by default")

	doc = parseHTML(t, get(t, s, "/compare?a="+a+"&b="+b+"&price=5").Body)
	assert.Contains(t, byTestID(doc, "cost-table").Text(), format.Money(rep.Summary.GPUHours*5))
	var keep []string
	byTestID(doc, "price-form").Find(`input[type="hidden"]`).Each(func(_ int, sel *goquery.Selection) {
		keep = append(keep, sel.AttrOr("name", "")+"="+sel.AttrOr("value", ""))
	})
	assert.ElementsMatch(t, []string{"a=" + a, "b=" + b}, keep, "the price form keeps the two runs")
	doc = parseHTML(t, get(t, s, "/compare?a="+a+"&b="+b+"&price=abc").Body)
	assert.Contains(t, byTestID(doc, "price-error").Text(), "give a number above 0", "every invalid spelling shares one cached page, which says how to fix it")
}

// A sweep over autoscaler settings offers GPU-hours as its outcome, which its runs store.
func TestSweepOverAutoscalerChartsGPUHours(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(lullScenario(t),
		`[{"path": "autoscaler.target", "values": [6, 12, 24]}, {"path": "autoscaler.scale_down_window_ms", "values": [0, 300000]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	sw := waitSweep(t, s, id, store.StatusDone)
	require.Len(t, sw.Points, 6)
	for _, p := range sw.Points {
		var figs []sim.Figure
		require.NoError(t, json.Unmarshal(p.Headline, &figs))
		v := sim.FigureValue(figs, sim.HeadlineGPUHours)
		require.NotNil(t, v, "point %v stores its GPU-hours", p.Values)
		assert.Positive(t, *v)
	}
	doc := parseHTML(t, get(t, s, "/sweeps/"+id).Body)
	assert.Equal(t, 1, doc.Find(`option[value="gpu_hours"]`).Length(), "GPU-hours is an outcome to chart")
	// A sweep of other fields does not offer it.
	rec = postJSON(t, s, "/api/v1/sweeps", sweepBody(fourWorkers(t, ""), `[{"path": "kvcr.bandwidth_gbps", "values": [5, 10]}]`))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	doc = parseHTML(t, get(t, s, "/sweeps/"+createdID(t, rec, rec.Body.Bytes())).Body)
	assert.Zero(t, doc.Find(`option[value="gpu_hours"]`).Length())
}

// Finding L5 of 2026-12b: a tune plan's body with a value of the wrong kind got the drain
// plan's template and no field; a null in a list of values was read as 0; 0 for max_runs and
// refine_top silently meant the default while 1 and −1 were refused.
func TestAPITunePlanRequestMessages(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	tune := func(rest string) string {
		return planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}`+rest)
	}
	cases := []struct {
		name, body string
		wantPaths  []string
		wantText   string
	}{
		{"huge per-tick limit", tune(`, "search": {"max_remove_per_tick": [1e308]}`), []string{"search.max_remove_per_tick"}, "must be a whole number in range (got number 1e308)"},
		{"huge max_killed", tune(`, "constraints": {"max_killed": 1e20}`), []string{"constraints.max_killed"}, "must be a whole number in range"},
		{"number as selection", tune(`, "search": {"selections": [1]}`), []string{"search.selections"}, "must be a string"},
		{"null window", tune(`, "search": {"scale_down_windows_ms": [0, null]}`), []string{"search.scale_down_windows_ms[1]"}, "null is not a value here"},
		{"null target and selection", tune(`, "search": {"targets": [null], "selections": [null]}`), []string{"search.selections[0]", "search.targets[0]"}, "null is not a value here"},
		{"null migration limit", tune(`, "search": {"migration_limits": [null, 2]}`), []string{"search.migration_limits[0]"}, "null is not a value here"},
		{"max_runs 1", tune(`, "search": {"max_runs": 1}`), []string{"search.max_runs"}, "0 or leaving it out takes the default 64"},
		{"refine_top -1", tune(`, "search": {"refine_top": -1}`), []string{"search.refine_top"}, "0 or leaving it out takes the default 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := postJSON(t, s, "/api/v1/plans", tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var out struct {
				Message string           `json:"error"`
				Fields  []sim.FieldError `json:"fields"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			var paths []string
			for _, f := range out.Fields {
				paths = append(paths, f.Path)
				assert.Contains(t, f.Message+out.Message, tc.wantText)
			}
			assert.ElementsMatch(t, tc.wantPaths, paths, rec.Body.String())
			if len(out.Fields) > 0 && strings.HasPrefix(out.Fields[0].Message, "must be a") || strings.Contains(rec.Body.String(), "null is not") {
				assert.Contains(t, out.Message, `"goal": {"tune": "autoscaler"}`, "the tune plan's template")
				assert.NotContains(t, out.Message, `"remove": 4`, "not the drain plan's")
			}
		})
	}
	// A null stays "no limit" and "no grace" where the docs say so.
	rec := postJSON(t, s, "/api/v1/plans", tune(`, "search": {"max_remove_per_tick": [null, 2], "grace_ms": [null]}`))
	assert.Less(t, rec.Code, 300, rec.Body.String())
	// A drain plan's wrong kind gets the drain plan's template.
	rec = postJSON(t, s, "/api/v1/plans", planBody(fourWorkers(t, ""), `"goal": {"remove": "two"}`))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "goal.remove")
	assert.Contains(t, rec.Body.String(), `\"remove\": 4`)
}
