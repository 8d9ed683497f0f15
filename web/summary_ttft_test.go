package web

import (
	"context"
	"encoding/json"
	"fmt"
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

// TestLegacySummaryStillRenders: a summary stored before the histogram (one TTFT per request
// under request_ttfts_ms) still draws the histogram, with the counts a new summary would hold,
// and is stored again as a new summary would be.
func TestLegacySummaryStillRenders(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	ctx := context.Background()
	sc, err := sim.Parse([]byte(runtest.PerRequestScenario("legacy", 300)), sim.ParseEnv{})
	require.NoError(t, err)
	rep, err := sim.Run(ctx, sc, sim.RunOptions{})
	require.NoError(t, err)
	report, err := json.Marshal(rep)
	require.NoError(t, err)

	// The summary as it was stored before: the report without rows, plus every TTFT.
	var ttfts []float64
	for _, q := range rep.Requests {
		if q.FirstTokenMS != nil {
			ttfts = append(ttfts, *q.FirstTokenMS-q.ArrivalMS)
		}
	}
	require.NotEmpty(t, ttfts)
	old := struct {
		sim.Report
		TTFTs []float64 `json:"request_ttfts_ms"`
	}{*rep, ttfts}
	old.Requests = nil
	legacy, err := json.Marshal(old)
	require.NoError(t, err)

	const id = "bbbbbbbbbbbbbbbb"
	_, _, err = s.store.CreateRun(ctx, id, "legacy", sc.CanonicalJSON(), time.Now())
	require.NoError(t, err)
	require.NoError(t, s.store.StartRun(ctx, id, time.Now()))
	require.NoError(t, s.store.FinishRun(ctx, id, report, nil, time.Now()))
	require.NoError(t, s.store.SetSummary(ctx, id, legacy))

	run, err := s.store.GetRun(ctx, id)
	require.NoError(t, err)
	sum, err := s.runs.LoadSummary(ctx, run)
	require.NoError(t, err)
	assert.Equal(t, runs.Summarize(rep).TTFTHistogram, sum.TTFTHistogram)
	assert.Nil(t, sum.LegacyTTFTsMS)

	// The summary was stored again without the TTFTs: what summarize writes today.
	run, err = s.store.GetRun(ctx, id)
	require.NoError(t, err)
	fresh, err := runs.EncodeSummary(rep)
	require.NoError(t, err)
	assert.JSONEq(t, string(fresh), string(run.SummaryJSON))
	assert.Less(t, len(run.SummaryJSON), len(legacy))

	before := s.store.ReportReads()
	rec := get(t, s, "/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "TTFT distribution (histogram of requests)")
	assert.Equal(t, before, s.store.ReportReads(), "the legacy summary is enough")
}

// TestSummarySizeDoesNotGrowWithRequests: runs of the same length with 1,000 and 50,000
// per-request rows store summaries of nearly the same size (the TTFT histogram has at most 101
// counts; only the digits of counters differ).
func TestSummarySizeDoesNotGrowWithRequests(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	ctx := context.Background()
	sizes := map[int]int{}
	for _, rows := range []int{1000, 50000} {
		sessions := rows / 2
		// Sessions arrive over the same 0.5 s, and the fleet is large enough to serve either
		// load before the scale-in at 2 s: both reports have the same time buckets.
		id := submitAPI(t, s, fmt.Sprintf(`{"name": "rows %d",
		  "fleet": {"workers": 4, "gpu_blocks": 65536, "host_blocks": 0, "block_size": 16, "max_num_seqs": 1024,
		    "max_batched_tokens": 65536, "timing": {"prefill_ms": 1, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
		  "kvcr": {"enabled": false},
		  "scale_in": [{"at_ms": 2000, "workers": [3]}],
		  "report": {"per_request": true},
		  "workload": {"type": "sessions", "sessions": {"count": %d, "turns": 2, "rate_per_s": %d,
		    "system_prompt_tokens": 32, "new_input_tokens": 32, "output_tokens": 4, "think_time_ms": 10}}}`, rows, sessions, sessions*2))
		waitStatus(t, s, id, store.StatusDone)
		run, err := s.store.GetRun(ctx, id)
		require.NoError(t, err)
		var sum runs.StoredSummary
		require.NoError(t, json.Unmarshal(run.SummaryJSON, &sum))
		require.NotNil(t, sum.TTFTHistogram)
		var n int64
		for _, c := range sum.TTFTHistogram.Counts {
			n += c
		}
		assert.EqualValues(t, rows, n, "every request with a first token is counted")
		sizes[rows] = len(run.SummaryJSON)
		t.Logf("%d per-request rows: summary %d bytes, %d buckets, duration %v, hist %d", rows, len(run.SummaryJSON), len(sum.Timeseries.Buckets), sum.Summary.DurationMS, len(sum.TTFTHistogram.Counts))
	}
	assert.InDelta(t, sizes[1000], sizes[50000], 2048, "the summary does not grow with the requests (one TTFT per request would add about 400 KB)")
}
