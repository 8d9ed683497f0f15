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
	"github.com/scalein-planner/scalein/web/form"
)

func promAnswer(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../sim/load/testdata/" + name)
	require.NoError(t, err)
	return string(b)
}

// The scenario form's "Load from Prometheus" fills the rate stages from a pasted answer, divides
// requests by the form's turns, raises the count, and says so; a bad answer comes back with its
// message, the text kept.
func TestScenarioFormLoadsPrometheus(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	require.Equal(t, 1, byTestID(doc, "prom-load").Length(), "the panel is on the form")
	fields := formFields(doc)
	fields["workload.sessions.turns"] = "2"
	fields["workload.sessions.count"] = "10"
	fields["action"] = "load_prometheus"
	fields["prom_answer"] = promAnswer(t, "night_1m.json")
	fields["prom_tolerance"] = "0.05"

	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc = parseHTML(t, rec.Body)
	got := formFields(doc)
	assert.Equal(t, "180000, 3\n120000, 1.5\n60000, 4.65", got[form.RateStagesPath])
	assert.Equal(t, sim.WorkloadSessions, got[form.WorkloadTypePath])
	assert.Equal(t, "1126", got["workload.sessions.count"], "ceil(999 + 4 √999)")
	notice := byTestID(doc, "form-notice").Text()
	assert.Contains(t, notice, "3 stages from 6 samples starting 2024-05-01 02:00 UTC")
	assert.Contains(t, notice, "divided by 2 turns per session")
	assert.Contains(t, notice, "the sessions' count is now 1126")

	fields["prom_answer"] = promAnswer(t, "gap.json")
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "form-notice").Text(), "The Prometheus answer was not read: data.result[0].values[2]")
	assert.Contains(t, byTestID(doc, "prom-answer").Text(), `"resultType":"matrix"`, "the pasted answer is kept")
}

func TestAPILoadPrometheus(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(promAnswer(t, "scenario.json")),
		"answer": json.RawMessage(promAnswer(t, "night_1m.json")), "reading": "sessions"})
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/load/prometheus", string(body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out struct {
		Scenario json.RawMessage `json:"scenario"`
		Load     struct {
			Stages []sim.RateStage `json:"rate_stages"`
			Notes  []string        `json:"notes"`
		} `json:"load"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	sc, err := sim.Parse(out.Scenario, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, out.Load.Stages, sc.Workload.Sessions.RateStages)
	assert.Len(t, sc.Workload.Sessions.RateStages, 5)
	assert.Contains(t, out.Load.Notes[len(out.Load.Notes)-1], "workload.sessions.count 10 →")

	body, _ = json.Marshal(map[string]any{"answer": json.RawMessage(promAnswer(t, "vector.json"))})
	rec = postJSON(t, s, "/api/v1/load/prometheus", string(body))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "answer: data.resultType: vector")

	// replicas sets the fleet the night started with, under the transform's admission.
	body, _ = json.Marshal(map[string]any{"scenario": json.RawMessage(promAnswer(t, "scenario.json")),
		"answer": json.RawMessage(promAnswer(t, "night_1m.json")), "reading": "sessions", "replicas": 3})
	rec = postJSON(t, s, "/api/v1/load/prometheus", string(body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	sc, err = sim.Parse(out.Scenario, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 3, sc.Fleet.Workers)
	body, _ = json.Marshal(map[string]any{"answer": json.RawMessage(promAnswer(t, "night_1m.json")), "replicas": 0})
	rec = postJSON(t, s, "/api/v1/load/prometheus", string(body))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "replicas 0: at least 1")
}
