package web

import (
	"context"
	"encoding/json"
	"fmt"
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

// traceJSON is the export as a client reads it.
type traceJSON struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		TS   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		PID  int            `json:"pid"`
		TID  int            `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	Metadata        map[string]any `json:"metadata"`
}

// The incident preset with the guard off: the export parses, and its drain spans are the
// report's times (µs = ms × 1000).
func TestTraceExportMatchesReport(t *testing.T) {
	on, _ := runPreset(t, "incident", func(s *sim.Scenario) { s.Report.PerRequest = true })
	off, err := sim.Counterpart(on, sim.CounterpartGuard)
	require.NoError(t, err)
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, string(off.CanonicalJSON()))
	waitStatus(t, s, id, store.StatusDone)
	rep := fetchReportOf(t, s, id)

	rec := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tr traceJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tr))
	assert.Equal(t, "ms", tr.DisplayTimeUnit)

	spans := map[string][2]float64{}
	tracks := map[string]bool{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.PID == tracePIDDrained {
			spans[e.Name] = [2]float64{e.TS, e.TS + e.Dur}
		}
		if e.Ph == "M" && e.Name == "thread_name" {
			tracks[e.Args["name"].(string)] = true
		}
	}
	var w sim.WorkerRow
	for _, row := range rep.Workers {
		if row.MarkedAtMS != nil {
			w = row
		}
	}
	require.NotNil(t, w.RemovedAtMS)
	near := func(wantMS, gotUS float64) { assert.InDelta(t, wantMS*1000, gotUS, 1e-6) }
	near(*w.MarkedAtMS, spans["drain → removal"][0])
	near(*w.RemovedAtMS, spans["drain → removal"][1])
	near(*w.LastWorkMS, spans["pin wait"][0])
	near(*w.RemovedAtMS, spans["pin wait"][1])
	near(*w.PinWaitMS, spans["pin wait"][1]-spans["pin wait"][0])
	assert.True(t, tracks["worker 1"], "a track for the drained worker: %v", tracks)

	// The peer that pulled from it has a track with the request that staged the pull.
	var peerSpans int
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.PID == tracePIDPeers {
			peerSpans++
		}
	}
	assert.Equal(t, int(rep.KVCR.Staged), peerSpans)
	assert.Equal(t, 0.0, tr.Metadata["request_spans_dropped"])

	// Passes: simulated again for the drained worker and the peer, inside the drain window,
	// each as long as the model's pass timing says (the same passes passes.jsonl exports).
	fromNS, toNS, tracked, ok := passWindow(rep)
	require.True(t, ok)
	passesByWorker := map[int]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph != "X" || e.PID != tracePIDPasses {
			continue
		}
		passesByWorker[e.TID]++
		assert.True(t, tracked[e.TID], "pass on an untracked worker %d", e.TID)
		assert.Positive(t, e.Dur)
		assert.LessOrEqual(t, e.TS, float64(toNS)/1e3)
		assert.GreaterOrEqual(t, e.TS+e.Dur, float64(fromNS)/1e3)
	}
	assert.Positive(t, passesByWorker[w.ID], "the drained worker's passes are drawn: %v", passesByWorker)
	assert.Equal(t, "", tr.Metadata["passes_note"])
	total := 0
	for _, n := range passesByWorker {
		total += n
	}
	assert.EqualValues(t, total, tr.Metadata["passes"])

	// Not done yet: no trace, and a message saying why.
	q := newFakeServer(t, runs.Config{}, false)
	queued := submitAPI(t, q, testScenario("queued"))
	assert.Equal(t, http.StatusConflict, get(t, q, "/runs/"+queued+"/trace.json").Code)
}

func TestTraceExportBounded(t *testing.T) {
	rep := &sim.Report{Summary: sim.Summary{DurationMS: 10}}
	out := "success"
	w := 0
	for i := range maxTraceRequestSpans + 5 {
		rep.Requests = append(rep.Requests, sim.RequestRow{ID: "r" + string(rune('a'+i%26)), Worker: &w, ArrivalMS: 1, PullOutcome: &out})
	}
	tr := chromeTrace("x", rep, tracePasses{})
	assert.Equal(t, 5, tr.Metadata["request_spans_dropped"])
	assert.LessOrEqual(t, len(tr.TraceEvents), maxTraceRequestSpans+10)
}

func fetchReportOf(t *testing.T, s *Server, id string) *sim.Report {
	t.Helper()
	rec := get(t, s, "/runs/"+id+"/report.json")
	require.Equal(t, http.StatusOK, rec.Code)
	var rep sim.Report
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &rep))
	return &rep
}

// A run stored by an earlier model version (its id is not its scenario's id under this model)
// is not simulated again: trace.json says why it has no passes, passes.jsonl answers 409.
func TestExportsOfAnEarlierModelsRun(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	ctx := context.Background()
	on, _ := runPreset(t, "incident", nil)
	off, err := sim.Counterpart(on, sim.CounterpartGuard)
	require.NoError(t, err)
	rep, err := sim.Run(ctx, off, sim.RunOptions{})
	require.NoError(t, err)
	rep.ModelVersion = "scalein-model/1"
	report, err := json.Marshal(rep)
	require.NoError(t, err)
	const id = "aaaaaaaaaaaaaaaa" // not off.ID(): as if hashed with an earlier model version
	require.NotEqual(t, id, off.ID())
	_, _, err = s.store.CreateRun(ctx, id, "old", off.CanonicalJSON(), time.Now())
	require.NoError(t, err)
	require.NoError(t, s.store.StartRun(ctx, id, time.Now()))
	require.NoError(t, s.store.FinishRun(ctx, id, report, nil, time.Now()))

	rec := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tr traceJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tr))
	assert.EqualValues(t, 0, tr.Metadata["passes"])
	assert.Contains(t, tr.Metadata["passes_note"], "earlier model version (scalein-model/1)")
	assert.Equal(t, http.StatusConflict, get(t, s, "/runs/"+id+"/passes.jsonl?worker=1").Code)
}

// An autoscaler run's export has its decisions as instants and each worker's lifecycle spans:
// E6's cold start (docs/model.md#model-3) shows worker 1 starting from 10 to 15 ms, then active.
func TestTraceExportOfAnAutoscalerRun(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "sim", "testdata", "examples", "autoscaler_cold_start.json"))
	require.NoError(t, err)
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, string(raw))
	waitStatus(t, s, id, store.StatusDone)
	rec := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var tr traceJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &tr))
	decisions := 0
	spans := map[string][2]float64{}
	for _, e := range tr.TraceEvents {
		if e.PID == tracePIDFleet && e.TID == 2 && e.Ph == "i" {
			decisions++
		}
		if e.PID == tracePIDLifecycle && e.Ph == "X" {
			spans[fmt.Sprintf("%d %s", e.TID, e.Name)] = [2]float64{e.TS, e.TS + e.Dur}
		}
	}
	assert.Equal(t, 4, decisions)
	assert.Equal(t, [2]float64{10_000, 15_000}, spans["1 starting"])
	assert.Equal(t, [2]float64{15_000, 42_000}, spans["1 active"])
	assert.Equal(t, [2]float64{0, 42_000}, spans["0 active"])
}
