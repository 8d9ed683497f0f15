package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/calibrate"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The OpenAPI document (openapi/openapi.yaml) cannot drift from the server: do, the helper the
// API tests send their requests through, validates every /api/v1 answer against it, and every
// request the server accepted (a test's deliberately bad requests are refused by the server and
// need not match).

// openAPIDoc is the document loaded and validated once.
var openAPIDoc = sync.OnceValues(func() (*openapi3.T, error) {
	data, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

// openAPI is the document's router.
var openAPI = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPIDoc()
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// checkAPIExchange validates a request to /api/v1 (body: its body as sent) and its answer
// against the document; it does nothing for other paths.
func checkAPIExchange(t *testing.T, req *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") || req.Method == http.MethodHead || req.Method == http.MethodOptions {
		return
	}
	router, err := openAPI()
	require.NoError(t, err, "the OpenAPI document is valid OpenAPI 3")
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(body))
	check.ContentLength = int64(len(body))
	if check.Header.Get("Content-Type") == "" && len(body) > 0 {
		check.Header.Set("Content-Type", "application/json") // the server reads a body without one as JSON
	}
	route, params, err := router.FindRoute(check)
	if err != nil {
		// A path or method the API lacks is answered 404 or 405, and is in no document.
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("OpenAPI: %s %s answered %d but is not in the document: %v", req.Method, req.URL.Path, rec.Code, err)
		}
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	// A calibration's body is JSON lines, which a JSON schema cannot describe: its media types
	// and parameters are checked, not its lines.
	opts.ExcludeRequestBody = route.Operation.OperationID == "createCalibration"
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	if rec.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("OpenAPI: the server accepted %s %s (%d), which the document refuses: %v", req.Method, req.URL.Path, rec.Code, clipBody(err.Error()))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Options: opts}
	answer := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(answer))
		require.NoError(t, err)
		answer, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	out.SetBodyBytes(answer)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("OpenAPI: the answer %d to %s %s does not match the document: %v\nbody: %s", rec.Code, req.Method, req.URL.Path, clipBody(err.Error()), clipBody(string(answer)))
	}
}

// TestOpenAPIDocument: the document is OpenAPI 3, served as JSON at /api/v1/openapi.json, and
// every route of the API group is in it with its method.
func TestOpenAPIDocument(t *testing.T) {
	router, err := openAPI()
	require.NoError(t, err)
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/api/v1/openapi.json")
	require.Equal(t, http.StatusOK, rec.Code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, "3.0.3", doc["openapi"])

	root, ok := s.Handler().(chi.Routes)
	require.True(t, ok)
	var seen []string
	require.NoError(t, chi.Walk(root, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(pattern, "/api/v1/") || method == http.MethodHead {
			return nil
		}
		seen = append(seen, method+" "+pattern)
		req := httptest.NewRequest(method, strings.ReplaceAll(strings.ReplaceAll(pattern, "{id}", "aaaaaaaaaaaaaaaa"), "{sha}", strings.Repeat("a", 64)), nil)
		_, _, err := router.FindRoute(req)
		assert.NoError(t, err, "%s %s is in the document", method, pattern)
		return nil
	}))
	assert.GreaterOrEqual(t, len(seen), 15, "the walk saw the API's routes: %v", seen)
	assert.True(t, slices.Contains(seen, "POST /api/v1/plans"), seen)
}

// TestOpenAPICatchesDrift: an answer that does not match the document is reported.
func TestOpenAPICatchesDrift(t *testing.T) {
	router, err := openAPI()
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/runs", nil)
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Options: opts}
	out.SetBodyBytes([]byte(`{"runs": [{"id": "x"}], "total": 1, "page": 1, "per_page": 20}`))
	assert.Error(t, openapi3filter.ValidateResponse(context.Background(), out), "a run without its status is not the documented shape")
	out.SetBodyBytes([]byte(`{"runs": [], "total": 0, "page": 1, "per_page": 20}`))
	assert.NoError(t, openapi3filter.ValidateResponse(context.Background(), out))

	// A request the document refuses, accepted by a server, is reported too.
	post := httptest.NewRequest(http.MethodPost, "/api/v1/pairs", strings.NewReader(`{"kind": "sideways", "scenario": {}}`))
	post.Header.Set("Content-Type", "application/json")
	route, params, err = router.FindRoute(post)
	require.NoError(t, err)
	assert.Error(t, openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: post, PathParams: params, Route: route, Options: opts}))
}

// validateAnswer validates a 200 answer to method path against the document.
func validateAnswer(t *testing.T, method, path string, body any) error {
	t.Helper()
	router, err := openAPI()
	require.NoError(t, err)
	req := httptest.NewRequest(method, path, nil)
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Options: opts}
	data, err := json.Marshal(body)
	require.NoError(t, err)
	out.SetBodyBytes(data)
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// asJSONMap is v as JSON decoded into maps and slices, to be changed by a test.
func asJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// jsonAt is the value at a path of keys and indexes in a decoded JSON value.
func jsonAt(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// TestOpenAPINestedShapes: the document describes the nested shapes of a plan, a sweep and a
// calibration, not bare objects. A plan answer built from the Go types that write it matches
// (with the shapes the API tests do not reach: a behavior's policies, a null per-tick limit,
// a diagnose plan's bound), and each change of a nested member's type or a required member
// left out is refused, while a member the document does not know is allowed (answers are open).
func TestOpenAPINestedShapes(t *testing.T) {
	grace := 30000.0
	auto := &sim.Autoscaler{IntervalMS: 15000, Metric: sim.MetricRequestsPerWorker, Source: sim.SourcePods, Target: 4, MinWorkers: 1, MaxWorkers: 4,
		Select: sim.SelectHighestID, GraceMS: &grace,
		Behavior: &sim.Behavior{ScaleDown: &sim.ScalingRules{Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 15000}}}}}
	// The model-3 shorthand instead of a behavior (the two are never together), its per-tick limit null.
	shorthand := *auto
	shorthand.Behavior, shorthand.ScaleDownWindowMS, shorthand.MaxRemovePerTick = nil, &grace, sim.PerTickNone()
	figures := []sim.Figure{{Key: sim.HeadlineRequestsKilled, Label: "Requests killed", Unit: "requests"}}
	candidate := whatif.Candidate{Label: "a", Selection: sim.SelectHighestID, Waves: 1, Stage: whatif.StageExplore, Status: whatif.StatusDone,
		ScaleIn: []sim.ScaleInAction{{AtMS: 100, Count: 2, Select: sim.SelectHighestID}}, Feasible: true, Rank: 1, Violations: []string{}, Headline: figures}
	tuned := candidate
	tuned.Autoscaler, tuned.Fleet = auto, &whatif.TuneFigures{SavedVsFixedPct: &grace}
	plan := runs.PlanView{ID: "x", Name: "n", Status: "done", URL: "/plans/x",
		Goal: whatif.Goal{Remove: 2}, Search: whatif.Search{MaxRemovePerTick: []*int{nil}, ScaleDownPolicies: [][]sim.ScalingPolicy{nil}},
		Candidates: []whatif.Candidate{candidate}, Baseline: &candidate, Baselines: []whatif.Candidate{tuned},
		Recommended: &whatif.Recommendation{Label: "a", Autoscaler: &shorthand},
		Capacity:    &whatif.CapacityResult{Curve: []whatif.CapacityPoint{{RatePerWorker: 4}}},
		Diagnose: &whatif.DiagnoseResult{Fleets: []whatif.FleetOutcome{{Kind: whatif.FleetIdeal}}, Subsets: []whatif.LagSubset{{Removed: []string{whatif.LagSignal}}},
			Lags: []whatif.LagShare{{Lag: whatif.LagSignal}}, Bound: &whatif.IdealBound{Stages: []whatif.BoundStage{{Workers: 2}}}},
		Submitted: []runs.PlanRun{}}
	const planPath = "/api/v1/plans/aaaaaaaaaaaaaaaa"
	require.NoError(t, validateAnswer(t, http.MethodGet, planPath, plan), "the Go types' plan is the documented shape")
	plan.Recommended = nil
	require.NoError(t, validateAnswer(t, http.MethodGet, planPath, plan), "a plan without a recommendation")

	for _, c := range []struct {
		what   string
		change func(m map[string]any)
	}{
		{"a candidate's rank as a string", func(m map[string]any) { jsonAt(m, "candidates", 0).(map[string]any)["rank"] = "1" }},
		{"a headline figure without its label", func(m map[string]any) { delete(jsonAt(m, "candidates", 0, "headline", 0).(map[string]any), "label") }},
		{"a headline figure's value as a string", func(m map[string]any) { jsonAt(m, "baseline", "headline", 0).(map[string]any)["value"] = "3" }},
		{"a scale-in action's at_ms as a string", func(m map[string]any) { jsonAt(m, "candidates", 0, "scale_in", 0).(map[string]any)["at_ms"] = "100" }},
		{"a baseline's fleet without its GPU-hours", func(m map[string]any) { delete(jsonAt(m, "baselines", 0, "fleet").(map[string]any), "gpu_hours") }},
		{"a policy's value not whole", func(m map[string]any) {
			jsonAt(m, "baselines", 0, "autoscaler", "behavior", "scale_down", "policies", 0).(map[string]any)["value"] = 1.5
		}},
		{"a capacity probe's feasible as a string", func(m map[string]any) { jsonAt(m, "capacity", "curve", 0).(map[string]any)["feasible"] = "yes" }},
		{"a capacity answer without its curve", func(m map[string]any) { delete(jsonAt(m, "capacity").(map[string]any), "curve") }},
		{"a lag subset's removed lags as a string", func(m map[string]any) { jsonAt(m, "diagnose", "subsets", 0).(map[string]any)["removed"] = "signal" }},
		{"a bound stage's workers as a string", func(m map[string]any) { jsonAt(m, "diagnose", "bound", "stages", 0).(map[string]any)["workers"] = "2" }},
		{"the goal's remove as a string", func(m map[string]any) { jsonAt(m, "goal").(map[string]any)["remove"] = "2" }},
		{"the search's waves as a number", func(m map[string]any) { jsonAt(m, "search").(map[string]any)["waves"] = 1 }},
		{"the constraints without max_killed", func(m map[string]any) { delete(jsonAt(m, "constraints").(map[string]any), "max_killed") }},
		{"a recommendation without its reason", func(m map[string]any) {
			m["recommended"] = map[string]any{"label": "a", "scenario_id": "x", "scale_in": nil}
		}},
	} {
		m := asJSONMap(t, plan)
		c.change(m)
		assert.Error(t, validateAnswer(t, http.MethodGet, planPath, m), c.what)
	}
	m := asJSONMap(t, plan)
	jsonAt(m, "candidates", 0).(map[string]any)["new_member"] = 1
	jsonAt(m, "diagnose").(map[string]any)["new_member"] = "x"
	assert.NoError(t, validateAnswer(t, http.MethodGet, planPath, m), "a member the document does not know yet")

	sweep := runs.SweepView{ID: "x", Status: "done", Axes: []whatif.Axis{{Path: "kvcr.bandwidth_gbps", Values: []any{5, 40}}}, Points: []runs.SweepPointView{}}
	const sweepPath = "/api/v1/sweeps/aaaaaaaaaaaaaaaa"
	require.NoError(t, validateAnswer(t, http.MethodGet, sweepPath, sweep))
	m = asJSONMap(t, sweep)
	delete(jsonAt(m, "axes", 0).(map[string]any), "path")
	assert.Error(t, validateAnswer(t, http.MethodGet, sweepPath, m), "an axis without its path")

	cal := calibrate.Result{Timing: sim.Timing{PrefillMS: 2, DecodeMS: 8}, Passes: 3, Warnings: []string{}}
	calPath := "/api/v1/calibrations/" + strings.Repeat("a", 64)
	require.NoError(t, validateAnswer(t, http.MethodGet, calPath, cal))
	m = asJSONMap(t, cal)
	delete(jsonAt(m, "timing").(map[string]any), "decode_ms")
	assert.Error(t, validateAnswer(t, http.MethodGet, calPath, m), "a timing without decode_ms")

	// A plan request's search is described too: a misspelt list or a list of the wrong type is
	// refused (the server refuses both).
	router, err := openAPI()
	require.NoError(t, err)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	for body, ok := range map[string]bool{
		`{"scenario": {"workload": {"type": "sessions"}}, "goal": {"tune": "autoscaler"}, "search": {"targets": [6, 12], "max_remove_per_tick": [1, null], "grace_ms": [null, 30000]}}`: true,
		`{"scenario": {"workload": {"type": "sessions"}}, "goal": {"remove": 2}, "search": {"wave": [1]}}`:                                                                              false,
		`{"scenario": {"workload": {"type": "sessions"}}, "goal": {"remove": 2}, "search": {"waves": ["1"]}}`:                                                                           false,
		`{"scenario": {"workload": {"type": "sessions"}}, "goal": {"capacity": {"workers": 1, "duration": 1000}}}`:                                                                      false,
	} {
		post := httptest.NewRequest(http.MethodPost, "/api/v1/plans", strings.NewReader(body))
		post.Header.Set("Content-Type", "application/json")
		route, params, err := router.FindRoute(post)
		require.NoError(t, err)
		err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: post, PathParams: params, Route: route, Options: opts})
		if ok {
			assert.NoError(t, err, body)
		} else {
			assert.Error(t, err, body)
		}
	}
}
