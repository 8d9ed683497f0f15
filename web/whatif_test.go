package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/format"
)

// fourWorkers is the planner's hand-checked fleet (sim/whatif/testdata): workers 2 and 3 are
// busy until 302 and 502 ms, 0 and 1 idle after 8 ms.
func fourWorkers(t *testing.T, scaleIn string) string {
	t.Helper()
	data, err := os.ReadFile("../sim/whatif/testdata/four-workers.json")
	require.NoError(t, err)
	if scaleIn == "" {
		return string(data)
	}
	return strings.Replace(string(data), `"workload"`, `"scale_in": `+scaleIn+`, "workload"`, 1)
}

func sweepBody(scenario, axes string) string {
	return `{"scenario": ` + scenario + `, "axes": ` + axes + `}`
}

func createdID(t *testing.T, rec interface{ Result() *http.Response }, body []byte) string {
	t.Helper()
	var out struct {
		ID     string `json:"id"`
		URL    string `json:"url"`
		Points int    `json:"points"`
	}
	require.NoError(t, json.Unmarshal(body, &out), string(body))
	require.Len(t, out.ID, 16)
	return out.ID
}

func waitSweep(t *testing.T, s *Server, id string, want ...string) runs.SweepView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sw, err := s.runs.Sweep(context.Background(), id)
		require.NoError(t, err)
		for _, w := range want {
			if sw.Status == w {
				return sw
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweep %s is %s, want %v: %+v", id, sw.Status, want, sw.Points)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitPlan(t *testing.T, s *Server, id string, want string) runs.PlanView {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := s.runs.Plan(context.Background(), id)
		require.NoError(t, err)
		if p.Status == want {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %s is %s (%s), want %s", id, p.Status, p.Error, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAPISweep(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	scenario := fourWorkers(t, `[{"at_ms": 100, "count": 2}]`)
	axes := `[{"path": "kvcr.bandwidth_gbps", "values": [5, 40]}, {"path": "scale_in[0].select", "values": ["highest_id", "least_loaded"]}]`
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(scenario, axes))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	assert.Contains(t, rec.Body.String(), `"points":4`)
	assert.Contains(t, rec.Body.String(), `"url":"/sweeps/`+id+`"`)

	sw := waitSweep(t, s, id, store.StatusDone)
	require.Len(t, sw.Points, 4)
	wantValues := [][]any{{json.Number("5"), "highest_id"}, {json.Number("5"), "least_loaded"}, {json.Number("40"), "highest_id"}, {json.Number("40"), "least_loaded"}}

	// The view lists the points in row-major order, each with its run and headline (that every
	// point's report is a direct run's is the service's: runs' TestSweepLargerThanQueue).
	base, err := sim.Parse([]byte(scenario), sim.ParseEnv{})
	require.NoError(t, err)
	var parsedAxes []whatif.Axis
	require.NoError(t, decodeNumbers([]byte(axes), &parsedAxes))
	points, err := whatif.Expand(base, parsedAxes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	for i, p := range sw.Points {
		assert.Equal(t, wantValues[i], p.Values, "point %d in row-major order", i)
		assert.Equal(t, points[i].Scenario.ID(), p.RunID, "point %d", i)
		assert.Equal(t, store.StatusDone, p.Status)
		var figs []sim.Figure
		require.NoError(t, json.Unmarshal(p.Headline, &figs))
		assert.NotEmpty(t, figs, "point %d", i)
	}

	// The same request is the same sweep, answered at once.
	rec = postJSON(t, s, "/api/v1/sweeps", sweepBody(scenario, axes))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, id, createdID(t, rec, rec.Body.Bytes()))

	rec = get(t, s, "/api/v1/sweeps/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"status":"done"`)
	assert.Contains(t, rec.Body.String(), `"values":[5,"highest_id"]`)

	rec = get(t, s, "/sweeps/"+id+"/sweep.csv")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	require.Len(t, lines, 5)
	assert.True(t, strings.HasPrefix(lines[0], "kvcr.bandwidth_gbps,scale_in[0].select,run_id,status,latest_removal_ms,"), lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "5,least_loaded,"+sw.Points[1].RunID+",done,100,"), lines[2])

	rec = get(t, s, "/sweeps/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, 4, byTestID(doc, "sweep-row").Length())
	// Issue 35: the figures read like every other page's (a unit by size, about three
	// significant digits), the exact value in the cell's title.
	var figs []sim.Figure
	require.NoError(t, json.Unmarshal(sw.Points[0].Headline, &figs))
	cells := byTestID(doc, "sweep-row").First().Find("td.num")
	require.Equal(t, len(sweepTableKeys), cells.Length())
	for i, k := range sweepTableKeys {
		var f sim.Figure
		for _, g := range figs {
			if g.Key == k {
				f = g
			}
		}
		shown, exact := format.CardValue(f.Value, f.Unit)
		assert.Equal(t, shown, strings.TrimSpace(cells.Eq(i).Text()), "%s", k)
		assert.Equal(t, exact, cells.Eq(i).AttrOr("title", ""), "title of %s", k)
	}
	assert.Equal(t, "TTFT p99", strings.TrimSpace(byTestID(doc, "sweep-table").Find("thead th").Eq(6).Text()), "the cells carry the units")
	assert.Equal(t, "/api/v1/sweeps/"+id, doc.Find("#sweep").AttrOr("data-sweep-api", ""))
	assert.Equal(t, 1, byTestID(doc, "sweep-chart").Length())
	assert.Equal(t, 0, byTestID(doc, "sweep-cancel").Length(), "a finished sweep has nothing to cancel")
}

func TestAPISweepErrors(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxSweepPoints: 3}, false)
	scenario := fourWorkers(t, `[{"at_ms": 100, "count": 2}]`)
	cases := []struct {
		name, body string
		wantPath   string
		wantText   string
	}{
		{"not JSON", `{`, "", "the body must be"},
		{"unknown member", `{"scenario": {}, "axes": [], "extra": 1}`, "", "unknown field"},
		{"no scenario", `{"axes": [{"path": "kvcr.latency_ms", "values": [1]}]}`, "scenario", "required"},
		{"invalid scenario", sweepBody(`{"fleet": {"workers": 0}}`, `[]`), "fleet.workers", ""},
		{"no axes", sweepBody(scenario, `[]`), "axes", "at least one axis"},
		{"unknown path", sweepBody(scenario, `[{"path": "kvcr.bandwith_gbps", "values": [1]}]`), "axes[0].path", `did you mean "bandwidth_gbps"`},
		{"unsweepable", sweepBody(scenario, `[{"path": "workload.requests", "values": [1]}]`), "axes[0].path", "is a list"},
		{"bad value", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [5, 0]}]`), "axes[0].values[1]", "kvcr.bandwidth_gbps: must be > 0"},
		{"too many points", sweepBody(scenario, `[{"path": "kvcr.bandwidth_gbps", "values": [1, 2]}, {"path": "router.hints", "values": [true, false]}]`), "axes", "the limit is 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := postJSON(t, s, "/api/v1/sweeps", tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var out struct {
				Error  string           `json:"error"`
				Fields []sim.FieldError `json:"fields"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			if tc.wantPath != "" {
				require.NotEmpty(t, out.Fields, rec.Body.String())
				assert.Equal(t, tc.wantPath, out.Fields[0].Path)
				assert.Contains(t, out.Fields[0].Message, tc.wantText)
			} else {
				assert.Contains(t, out.Error, tc.wantText)
			}
		})
	}
	for _, target := range []string{"/api/v1/sweeps/aaaaaaaaaaaaaaaa", "/api/v1/sweeps/not-an-id", "/sweeps/aaaaaaaaaaaaaaaa", "/sweeps/aaaaaaaaaaaaaaaa/sweep.csv"} {
		assert.Equal(t, http.StatusNotFound, get(t, s, target).Code, target)
	}
	assert.Equal(t, http.StatusNotFound, postJSON(t, s, "/api/v1/sweeps/aaaaaaaaaaaaaaaa/cancel", "").Code)
}

// Cancelling a sweep over the API answers its view, cancelled; asked for again it is queued
// again (202). What becomes of its runs is the service's (runs' TestSweepCancelAndResume,
// TestSweepFeedCancelAndRestart, TestSweepResumesAfterRestart).
func TestAPISweepCancelAndAskAgain(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false) // nothing works the queue: the points stay queued
	body := sweepBody(fourWorkers(t, ""), `[{"path": "kvcr.latency_ms", "values": [1, 2, 3]}]`)
	rec := postJSON(t, s, "/api/v1/sweeps", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	page := parseHTML(t, get(t, s, "/sweeps/"+id).Body)
	assert.Equal(t, 1, byTestID(page, "sweep-cancel").Length(), "an unfinished sweep can be cancelled")

	rec = postJSON(t, s, "/api/v1/sweeps/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"status":"cancelled"`)
	assert.Equal(t, store.StatusCancelled, waitSweep(t, s, id, store.StatusCancelled).Status)

	rec = postJSON(t, s, "/api/v1/sweeps", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	assert.Equal(t, id, createdID(t, rec, rec.Body.Bytes()))
	assert.Equal(t, store.StatusQueued, waitSweep(t, s, id, store.StatusQueued).Status)
}

func planBody(scenario, rest string) string {
	return `{"scenario": ` + scenario + `, ` + rest + `}`
}

func TestAPIPlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	body := planBody(fourWorkers(t, ""), `"goal": {"remove": 2, "start_ms": 100}, "constraints": {"ttft_p99_ms": 50, "max_killed": 0}`)
	rec := postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())

	p := waitPlan(t, s, id, store.StatusDone)
	require.NotNil(t, p.Recommended, p.Reason)
	best := p.Candidates[0]
	assert.Equal(t, best.RunID, p.Recommended.RunID)
	assert.Equal(t, 100.0, *sim.FigureValue(best.Headline, "latest_removal_ms"), "drain the two idle workers at once (by hand)")
	assert.Equal(t, 0.0, *sim.FigureValue(best.Headline, "requests_killed"))
	assert.Len(t, p.Submitted, p.Runs, "every run the planner asked for is listed")
	assert.Zero(t, p.Reused)

	// The recommended run is an ordinary run whose report drains workers 0 and 1.
	run, err := s.store.GetRun(context.Background(), p.Recommended.RunID)
	require.NoError(t, err)
	var rep sim.Report
	require.NoError(t, json.Unmarshal(run.SummaryJSON, &rep))
	require.Len(t, rep.ScaleIn, 1)
	assert.ElementsMatch(t, []int{0, 1}, rep.ScaleIn[0].Drained)

	// The same request is the same plan, answered at once.
	rec = postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, id, createdID(t, rec, rec.Body.Bytes()))

	rec = get(t, s, "/api/v1/plans/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	for _, member := range []string{`"goal":{"remove":2,"start_ms":100}`, `"constraints":{"ttft_p99_ms":50,"max_killed":0}`, `"recommended":{`, `"candidates":[`, `"feasible":true`, `"violations":[]`} {
		assert.Contains(t, rec.Body.String(), member)
	}

	rec = get(t, s, "/plans/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "recommendation").Text(), "gone at 100 ms")
	assert.Equal(t, "/?from="+p.Recommended.RunID, byTestID(doc, "open-as-scenario").AttrOr("href", ""))
	assert.Equal(t, "/compare?a="+p.Recommended.RunID+"&b="+p.Candidates[1].RunID, byTestID(doc, "compare-runner-up").AttrOr("href", ""))
	assert.Equal(t, len(p.Candidates), byTestID(doc, "plan-candidate").Length())
	assert.NotEmpty(t, doc.Find("#plan-scatter").AttrOr("data-echarts-option", ""))
	assert.Equal(t, 1, byTestID(doc, "plan-schedule").Length())
}

func TestAPIPlanErrors(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxPlanRuns: 10}, false)
	sc := fourWorkers(t, "")
	cases := []struct {
		name, body, wantPath, wantText string
	}{
		{"not JSON", `[`, "", "the body must be"},
		{"unknown member", planBody(sc, `"goal": {"remove": 1}, "goals": 1`), "", "unknown field"},
		{"no scenario", `{"goal": {"remove": 1}}`, "scenario", "required"},
		{"invalid scenario", planBody(`{"workload": {"type": "x"}}`, `"goal": {"remove": 1}`), "workload.type", ""},
		{"remove too many", planBody(sc, `"goal": {"remove": 4, "start_ms": 0}`), "goal.remove", "at most 3"},
		{"negative start", planBody(sc, `"goal": {"remove": 1, "start_ms": -5}`), "goal.start_ms", ""},
		{"bad ttft", planBody(sc, `"goal": {"remove": 1}, "constraints": {"ttft_p99_ms": 0}`), "constraints.ttft_p99_ms", ""},
		{"bad selection", planBody(sc, `"goal": {"remove": 1}, "search": {"selections": ["random"]}`), "search.selections[0]", ""},
		{"runs above the server's limit", planBody(sc, `"goal": {"remove": 1}, "search": {"max_runs": 11}`), "search.max_runs", "at most 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := postJSON(t, s, "/api/v1/plans", tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var out struct {
				Error  string           `json:"error"`
				Fields []sim.FieldError `json:"fields"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			if tc.wantPath != "" {
				require.NotEmpty(t, out.Fields, rec.Body.String())
				assert.Equal(t, tc.wantPath, out.Fields[0].Path)
				assert.Contains(t, out.Fields[0].Message, tc.wantText)
			} else {
				assert.Contains(t, out.Error, tc.wantText)
			}
		})
	}
	for _, target := range []string{"/api/v1/plans/aaaaaaaaaaaaaaaa", "/api/v1/plans/x", "/plans/aaaaaaaaaaaaaaaa"} {
		assert.Equal(t, http.StatusNotFound, get(t, s, target).Code, target)
	}
	assert.Equal(t, http.StatusNotFound, postJSON(t, s, "/api/v1/plans/aaaaaaaaaaaaaaaa/cancel", "").Code)
}

// An unfinished plan's page offers to cancel it; the form's cancel redirects to the plan, the
// API's answers its view, cancelled; asked for again it is queued again (202). What becomes of
// its runs is the service's (runs' TestPlanCancelAndRestart).
func TestPlanCancelOverHTTP(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false) // no planner runs: the plan stays queued
	body := planBody(fourWorkers(t, ""), `"goal": {"remove": 2, "start_ms": 100}`)
	rec := postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	rec = get(t, s, "/plans/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, 1, byTestID(parseHTML(t, rec.Body), "plan-cancel").Length())

	rec = postForm(t, s, "/plans/"+id+"/cancel", url.Values{})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Equal(t, "/plans/"+id, rec.Header().Get("Location"))
	assert.Equal(t, store.StatusCancelled, waitPlan(t, s, id, store.StatusCancelled).Status)
	rec = get(t, s, "/plans/"+id)
	assert.Zero(t, byTestID(parseHTML(t, rec.Body), "plan-cancel").Length(), "a cancelled plan has nothing to cancel")

	rec = postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	waitPlan(t, s, id, store.StatusQueued)
	rec = postJSON(t, s, "/api/v1/plans/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"status":"cancelled"`)
}

func TestWhatIfForms(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for _, target := range []string{"/sweeps/new", "/plans/new", "/sweeps/new?preset=e2"} {
		rec := get(t, s, target)
		require.Equal(t, http.StatusOK, rec.Code, target)
		assert.NotEmpty(t, byTestID(parseHTML(t, rec.Body), "whatif-scenario").Text(), target)
	}
	assert.Equal(t, http.StatusNotFound, get(t, s, "/sweeps/new?preset=nope").Code)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/plans/new?from=aaaaaaaaaaaaaaaa").Code)

	// From a stored run: its scenario, and the plan goal from its schedule.
	id := submitAPI(t, s, testScenario("for a plan"))
	rec := get(t, s, "/plans/new?from="+id)
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "whatif-scenario").Text(), `"name":"for a plan"`)
	assert.Equal(t, "1", byTestID(doc, "plan-remove").AttrOr("value", ""))

	sc := fourWorkers(t, "")
	rec = postForm(t, s, "/sweeps", url.Values{"scenario": {sc}, "axis0.path": {"kvcr.bandwidth_gbps"}, "axis0.start": {"5"}, "axis0.stop": {"15"}, "axis0.step": {"5"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	sweepID := strings.TrimPrefix(rec.Header().Get("Location"), "/sweeps/")
	sw, err := s.runs.Sweep(context.Background(), sweepID)
	require.NoError(t, err)
	assert.Equal(t, []any{json.Number("5"), json.Number("10"), json.Number("15")}, sw.Axes[0].Values)

	rec = postForm(t, s, "/sweeps", url.Values{"scenario": {sc}, "axis0.path": {"kvcr.bandwith_gbps"}, "axis0.values": {"5, 10"},
		"axis1.path": {"router.hints"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	errs := byTestID(parseHTML(t, rec.Body), "whatif-errors").Text()
	assert.Contains(t, errs, "field 2 (router.hints): give a list of values, or a start, stop and step")
	rec = postForm(t, s, "/sweeps", url.Values{"scenario": {sc}, "axis0.path": {"kvcr.bandwith_gbps"}, "axis0.values": {"5, 10"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "whatif-errors").Text(), `axes[0].path: kvcr.bandwith_gbps: kvcr has no field "bandwith_gbps"`)
	// Each problem is also beside its field, as on the scenario form.
	assert.Contains(t, byTestID(doc, "error-axis0.path").Text(), `kvcr has no field "bandwith_gbps"`)
	assert.Equal(t, "true", doc.Find(`input[name="axis0.path"]`).AttrOr("aria-invalid", ""))
	rec = postForm(t, s, "/sweeps", url.Values{"scenario": {sc}, "axis0.path": {"kvcr.latency_ms"}, "axis0.start": {"5"}, "axis0.stop": {"1"}, "axis0.step": {"1"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-errors").Text(), "stop must not be below start")

	rec = postForm(t, s, "/plans", url.Values{"scenario": {sc}, "remove": {"2"}, "start_ms": {"100"}, "ttft_p99_ms": {""}, "max_killed": {"0"}, "max_runs": {"20"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.True(t, strings.HasPrefix(rec.Header().Get("Location"), "/plans/"))
	rec = postForm(t, s, "/plans", url.Values{"scenario": {sc}, "remove": {"x"}, "start_ms": {"100"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-errors").Text(), "Remove how many workers must be a whole number")
	rec = postForm(t, s, "/plans", url.Values{"scenario": {sc}, "remove": {"9"}, "start_ms": {"100"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "whatif-errors").Text(), "goal.remove: must leave at least one")
	assert.Contains(t, byTestID(doc, "error-remove").Text(), "must leave at least one")
	assert.Equal(t, "9", byTestID(doc, "plan-remove").AttrOr("value", ""), "the form comes back as posted")

	// The scenario form's fields, posted to "Sweep a field".
	rec = postForm(t, s, "/sweeps/new", url.Values{"fleet.workers": {"3"}, "workload.type": {"sessions"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-scenario").Text(), `"workers":3`)
}
