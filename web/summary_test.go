package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// TestPageViewsReadNoPerRequestRows: the run page (with its charts), the compare page and
// workers.csv of runs with many per-request rows read only the stored summary: the store
// counts every read of a full report, and none happens until report.json, which serves the
// stored report byte for byte.
func TestPageViewsReadNoPerRequestRows(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	ctx := context.Background()
	const n = 2000
	a := submitAPI(t, s, runtest.PerRequestScenario("rows a", n))
	b := submitAPI(t, s, runtest.PerRequestScenario("rows b", n+8))
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)

	run, err := s.store.GetRun(ctx, a)
	require.NoError(t, err)
	require.Nil(t, run.ReportJSON)
	var sum map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(run.SummaryJSON, &sum))
	assert.NotContains(t, sum, "requests", "the summary holds no per-request rows")
	assert.NotContains(t, sum, "request_ttfts_ms", "no TTFT per request either")
	var hist runs.TTFTCounts
	require.NoError(t, json.Unmarshal(sum["ttft_histogram"], &hist))
	var counted int64
	for _, c := range hist.Counts {
		counted += c
	}
	assert.EqualValues(t, n, counted, "the histogram counts every request")

	before := s.store.ReportReads()
	for _, path := range []string{"/runs/" + a, "/runs/" + a + "?workers=all", "/runs/" + a + "/workers.csv",
		"/compare?a=" + a + "&b=" + b, "/runs/" + b} {
		rec := get(t, s, path)
		require.Equal(t, http.StatusOK, rec.Code, path)
		if path == "/runs/"+a {
			assert.Contains(t, rec.Body.String(), "TTFT distribution (histogram of requests)", "the histogram is drawn from the summary")
		}
	}
	assert.Equal(t, before, s.store.ReportReads(), "no page view read a full report")

	// report.json is the stored report with every per-request row, byte for byte.
	rec := get(t, s, "/runs/"+a+"/report.json")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, before+1, s.store.ReportReads())
	stored, err := s.store.GetReportJSON(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, stored, rec.Body.Bytes())
	var rep sim.Report
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &rep))
	assert.Len(t, rep.Requests, n)
}

// TestSummaryBackfill: a run finished before summaries were stored (FinishRun stores none) gets
// its summary computed from the report on its first view, the same as a fresh run's; later
// views read only the summary.
func TestSummaryBackfill(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	ctx := context.Background()
	sc, err := sim.Parse([]byte(runtest.PerRequestScenario("old", 200)), sim.ParseEnv{})
	require.NoError(t, err)
	rep, err := sim.Run(ctx, sc, sim.RunOptions{})
	require.NoError(t, err)
	report, err := json.Marshal(rep)
	require.NoError(t, err)
	canon := sc.CanonicalJSON()
	const id = "aaaaaaaaaaaaaaaa"
	_, _, err = s.store.CreateRun(ctx, id, "old", canon, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.store.StartRun(ctx, id, time.Now()))
	require.NoError(t, s.store.FinishRun(ctx, id, report, nil, time.Now()))

	before := s.store.ReportReads()
	require.Equal(t, http.StatusOK, get(t, s, "/runs/"+id+"/workers.csv").Code)
	assert.Equal(t, before+1, s.store.ReportReads(), "the first view computes the summary from the report")
	run, err := s.store.GetRun(ctx, id)
	require.NoError(t, err)
	want, err := runs.EncodeSummary(rep)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(run.SummaryJSON))
	require.Equal(t, http.StatusOK, get(t, s, "/runs/"+id).Code)
	assert.Equal(t, before+1, s.store.ReportReads(), "later views read the stored summary")
}
