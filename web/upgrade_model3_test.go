package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// model2Scenario is a scenario's canonical JSON as model 2 stored it: without the members model
// 3 added (fleet.gpus_per_worker, router.migration_limit).
func model2Scenario(t *testing.T, sc *sim.Scenario) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(sc.CanonicalJSON(), &m))
	delete(m["fleet"].(map[string]any), "gpus_per_worker")
	delete(m["router"].(map[string]any), "migration_limit")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// Runs, a pair and a sweep stored under model 2 keep working as stored after model 3: their
// pages, report.json (byte for byte), trace.json and the compare page read the stored model-2
// reports (written by the model-2 build, testdata/model2), and a stored scenario still opens
// in the form.
func TestModel2ResultsKeepWorking(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	ctx := context.Background()
	on, _ := runPreset(t, "incident", nil)
	off, err := sim.Counterpart(on, sim.CounterpartGuard)
	require.NoError(t, err)
	stored := map[string][]byte{}
	for _, r := range []struct {
		id, file string
		sc       *sim.Scenario
	}{{"m2aaaaaaaaaaaaaa", "incident-report.json", on}, {"m2bbbbbbbbbbbbbb", "incident-guard-off-report.json", off}} {
		report, err := os.ReadFile(filepath.Join("testdata", "model2", r.file))
		require.NoError(t, err)
		var rep sim.Report
		require.NoError(t, json.Unmarshal(report, &rep))
		require.Equal(t, "scalein-model/2", rep.ModelVersion)
		headline, err := json.Marshal(sim.Headline(&rep))
		require.NoError(t, err)
		_, _, err = s.store.CreateRun(ctx, r.id, rep.Name, model2Scenario(t, r.sc), time.Now())
		require.NoError(t, err)
		require.NoError(t, s.store.StartRun(ctx, r.id, time.Now()))
		require.NoError(t, s.store.FinishRun(ctx, r.id, report, headline, time.Now()))
		stored[r.id] = report
	}
	for id, report := range stored {
		page := get(t, s, "/runs/"+id)
		require.Equal(t, http.StatusOK, page.Code, page.Body.String())
		doc := parseHTML(t, page.Body)
		assert.Equal(t, 0, byTestID(doc, "autoscaler-section").Length(), "a model-2 run has no autoscaler")
		assert.Positive(t, byTestID(doc, "workers-table").Length())
		rec := get(t, s, "/runs/"+id+"/report.json")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.JSONEq(t, string(report), rec.Body.String(), "report.json is the stored model-2 report")
		assert.Equal(t, http.StatusOK, get(t, s, "/runs/"+id+"/trace.json").Code)
		api := get(t, s, "/api/v1/runs/"+id)
		require.Equal(t, http.StatusOK, api.Code)
		assert.Contains(t, api.Body.String(), `"scalein-model/2"`)
	}
	cmp := get(t, s, "/compare?a=m2aaaaaaaaaaaaaa&b=m2bbbbbbbbbbbbbb")
	require.Equal(t, http.StatusOK, cmp.Code, cmp.Body.String())
	assert.Contains(t, cmp.Body.String(), "kvcr.reject_draining_sources")

	// A sweep over the guard whose two points are the stored runs.
	sw := storeSweep(t, s, "m2ssssssssssssss", model2Scenario(t, on),
		`[{"path": "kvcr.reject_draining_sources", "values": [true, false]}]`, []string{"m2aaaaaaaaaaaaaa", "m2bbbbbbbbbbbbbb"}, []string{"[true]", "[false]"})
	page := get(t, s, "/sweeps/"+sw)
	require.Equal(t, http.StatusOK, page.Code, page.Body.String())
	assert.Equal(t, http.StatusOK, get(t, s, "/sweeps/"+sw+"/sweep.csv").Code)
	assert.Equal(t, http.StatusOK, get(t, s, "/api/v1/sweeps/"+sw).Code)

	// The stored scenario opens in the form (Edit as new) with model 3's defaults filled in.
	form := get(t, s, "/?from=m2aaaaaaaaaaaaaa")
	require.Equal(t, http.StatusOK, form.Code, form.Body.String())
	doc := parseHTML(t, form.Body)
	assert.Equal(t, "1", doc.Find(`[name="fleet.gpus_per_worker"]`).AttrOr("value", ""))
}

// storeSweep stores a sweep whose points are existing runs, as an earlier build stored it.
func storeSweep(t *testing.T, s *Server, id string, scenario []byte, axes string, runIDs, values []string) string {
	t.Helper()
	points := make([]store.SweepPoint, len(runIDs))
	for i := range runIDs {
		points[i] = store.SweepPoint{Index: i, ValuesJSON: []byte(values[i]), RunID: runIDs[i]}
	}
	_, err := s.store.CreateSweep(context.Background(), store.Sweep{ID: id, Name: "guard sweep", ScenarioJSON: scenario, AxesJSON: []byte(axes)}, points, time.Now())
	require.NoError(t, err)
	return id
}
