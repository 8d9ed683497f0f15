package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/store"
)

// A tune plan of a scenario imported from the user's ScaledObject downloads its manifests as
// that ScaledObject (the user's names and query, the plan's settings), not as a made-up HPA.
func TestTunePlanDownloadWritesIntoTheImportedObject(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	manifest, err := os.ReadFile("../sim/hpa/testdata/charts/production-stack-keda.yaml")
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(lullScenario(t)), "manifest": string(manifest)})
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/hpa/import", string(body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var imported struct {
		Scenario json.RawMessage `json:"scenario"`
		Origin   json.RawMessage `json:"origin"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &imported))

	rest := `"goal": {"tune": "autoscaler"}, "search": {"max_runs": 4}, "origin": ` + string(imported.Origin)
	rec = postJSON(t, s, "/api/v1/plans", planBody(string(imported.Scenario), rest))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	p := waitPlan(t, s, id, store.StatusDone)
	require.NotEmpty(t, p.Candidates)

	rec = get(t, s, "/plans/"+id+"/hpa.yaml?run="+p.Candidates[0].RunID)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	out := rec.Body.String()
	assert.Contains(t, out, "kind: ScaledObject")
	assert.Contains(t, out, "name: vllm-llama3-8b-scaledobject")
	assert.Contains(t, out, "namespace: vllm")
	assert.Contains(t, out, `sum(vllm:num_requests_waiting{model="llama3-8b"})`, "the user's query is kept")
	assert.NotContains(t, out, hpa.DefaultWorkers, "no placeholder names")
	// The user's own file: its comment is kept and it gains one header, no workload document.
	assert.Contains(t, out, "# Source: vllm-stack/templates/keda-scaledobject.yaml (rendered)\n")
	assert.True(t, strings.HasPrefix(out, "# Scale-in Planner: plan "+id), out)
	for _, line := range strings.Split(string(manifest), "\n") {
		assert.Contains(t, out, line+"\n", "every line of the user's file is kept (only what changed is added)")
	}
	assert.NotContains(t, out, "kind: Deployment", "no workload document the file did not have")
	page := parseHTML(t, get(t, s, "/plans/"+id).Body)
	if byTestID(page, "download-hpa").Length() > 0 {
		assert.Equal(t, 0, byTestID(page, "hpa-placeholders").Length(), "an imported plan's names are the user's")
	}
	im, err := hpa.Import(rec.Body.Bytes(), sim.Autoscaler{IntervalMS: 15000})
	require.NoError(t, err)
	assert.Equal(t, p.Candidates[0].Autoscaler.Target, im.Autoscaler.Target)

	// The same scenario without the origin is another plan, whose download is a new HPA.
	rec = postJSON(t, s, "/api/v1/plans", planBody(string(imported.Scenario), `"goal": {"tune": "autoscaler"}, "search": {"max_runs": 4}`))
	require.Less(t, rec.Code, 300, rec.Body.String())
	other := createdID(t, rec, rec.Body.Bytes())
	assert.NotEqual(t, id, other)
	p = waitPlan(t, s, other, store.StatusDone)
	rec = get(t, s, "/plans/"+other+"/hpa.yaml?run="+p.Candidates[0].RunID)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "kind: HorizontalPodAutoscaler")
	page = parseHTML(t, get(t, s, "/plans/"+other).Body)
	if byTestID(page, "download-hpa").Length() > 0 {
		assert.Contains(t, byTestID(page, "hpa-placeholders").Text(), "placeholders", "without an import the page says the names are made up")
		href, _ := byTestID(page, "hpa-placeholders-import").Attr("href")
		assert.Equal(t, "/plans/new?plan="+other+"#hpa-import", href)
	}

	// A broken origin is refused, naming the field.
	for _, bad := range []string{`{"kind": "Deployment"}`, `{"kind": "ScaledObject", "document": {"spec": 1}}`, `{"nope": 1}`} {
		rec = postJSON(t, s, "/api/v1/plans", planBody(string(imported.Scenario), `"goal": {"tune": "autoscaler"}, "origin": `+bad))
		assert.Equal(t, http.StatusBadRequest, rec.Code, bad)
		assert.Contains(t, rec.Body.String(), "origin", bad)
		assert.Contains(t, rec.Body.String(), "import the manifest again", bad)
	}
}

// The plan form carries the imported object from the import to the plan in a hidden field.
func TestPlanFormCarriesTheOrigin(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	manifest, err := os.ReadFile("../sim/hpa/testdata/charts/llm-d-decode-keda.yaml")
	require.NoError(t, err)
	body, ctype := multipartForm(t, map[string]string{"scenario": lullScenario(t), "manifest": string(manifest)}, "")
	req := httptest.NewRequest(http.MethodPost, "/plans/import-hpa", body)
	req.Header.Set("Content-Type", ctype)
	rec := do(t, s.Handler(), req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	origin := byTestID(doc, "plan-origin").AttrOr("value", "")
	var o hpa.Origin
	require.NoError(t, json.Unmarshal([]byte(origin), &o))
	assert.Equal(t, "ScaledObject", o.Kind)
	require.NotNil(t, o.Grace)
	assert.Equal(t, "LeaderWorkerSet", o.Grace.Kind)
	assert.Contains(t, doc.Text(), "writes its settings into the imported ScaledObject")
}

// POST /api/v1/hpa/import takes "select" to choose among the autoscalers of a stream.
func TestAPIImportSelect(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	a, err := os.ReadFile("../sim/hpa/testdata/charts/gke-hpa-queue-size.yaml")
	require.NoError(t, err)
	b, err := os.ReadFile("../sim/hpa/testdata/charts/production-stack-keda.yaml")
	require.NoError(t, err)
	stream := string(a) + "---\n" + string(b)
	for _, tc := range []struct{ sel, kind string }{{"", "HorizontalPodAutoscaler"}, {"vllm-llama3-8b-scaledobject", "ScaledObject"}} {
		body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(lullScenario(t)), "manifest": stream, "select": tc.sel})
		require.NoError(t, err)
		rec := postJSON(t, s, "/api/v1/hpa/import", string(body))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var got struct {
			Origin hpa.Origin `json:"origin"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		assert.Equal(t, tc.kind, got.Origin.Kind)
	}
	body, _ := json.Marshal(map[string]any{"scenario": json.RawMessage(lullScenario(t)), "manifest": stream, "select": "nope"})
	rec := postJSON(t, s, "/api/v1/hpa/import", string(body))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), `select \"nope\"`)
}

// A scenario whose fleet.workers lies outside its autoscaler's bounds says so at the top of the
// run page, whatever the run's state.
func TestRunPageWarnsFleetOutsideBounds(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	var sc map[string]any
	require.NoError(t, json.Unmarshal([]byte(lullScenario(t)), &sc))
	sc["autoscaler"].(map[string]any)["max_workers"] = 3
	body, err := json.Marshal(sc)
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/runs", string(body))
	require.Less(t, rec.Code, 300, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	rec = get(t, s, "/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `data-testid="run-fleet-warning"`)
	assert.Contains(t, rec.Body.String(), "fleet.workers 4 lies outside the autoscaler&#39;s bounds [1, 3]")
}
