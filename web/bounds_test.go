package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 H1: a range that never advances, or is not finite, is refused before it is expanded
// (it used to loop forever and grow memory until the machine was gone).
func TestSweepFormRangeBounds(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	sc := fourWorkers(t, "")
	cases := []struct{ start, stop, step, want string }{
		{"1e300", "1e300", "1", "axes[0].values[0]: kvcr.bandwidth_gbps: must be ≤"}, // one value, then validated
		{"NaN", "NaN", "1", "finite"},
		{"Inf", "Inf", "1", "finite"},
		{"-Inf", "Inf", "1e300", "finite"},
		{"1", "2", "NaN", "finite"},
		{"1e400", "1e400", "1", "finite"},
		{"1", "5", "0", "step must be a positive number"},
	}
	for _, tc := range cases {
		t.Run(tc.start+".."+tc.stop+" by "+tc.step, func(t *testing.T) {
			done := make(chan int, 1)
			go func() {
				rec := postForm(t, s, "/sweeps", url.Values{"scenario": {sc}, "axis0.path": {"kvcr.bandwidth_gbps"},
					"axis0.start": {tc.start}, "axis0.stop": {tc.stop}, "axis0.step": {tc.step}})
				if tc.want != "" {
					assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-errors").Text(), tc.want)
				}
				done <- rec.Code
			}()
			select {
			case code := <-done:
				assert.Equal(t, http.StatusBadRequest, code)
			case <-time.After(10 * time.Second):
				t.Fatal("the range was not refused within 10 s")
			}
		})
	}
}

// Issue 19 M1: an infinite TTFT limit from the plan form is a message beside the field, not a
// 500 from json.Marshal.
func TestPlanFormInfiniteTTFT(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	sc := fourWorkers(t, "")
	for _, v := range []string{"Inf", "+Inf", "infinity", "-Inf", "NaN"} {
		rec := postForm(t, s, "/plans", url.Values{"scenario": {sc}, "remove": {"2"}, "start_ms": {"0"}, "ttft_p99_ms": {v}})
		require.Equal(t, http.StatusBadRequest, rec.Code, v)
		assert.Contains(t, byTestID(parseHTML(t, rec.Body), "whatif-errors").Text(), "ttft_p99_ms", v)
	}
}

// Issue 19 L1: sweep and plan names follow the scenario name rules, checked before anything
// costly is done.
func TestSweepAndPlanNames(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	sc := fourWorkers(t, "")
	long := strings.Repeat("N", sim.MaxNameChars+1)
	for _, name := range []string{long, "a\u0000b", "esc\u001b[31m"} {
		nameJSON, _ := json.Marshal(name)
		rec := postJSON(t, s, "/api/v1/sweeps", `{"name": `+string(nameJSON)+`, "scenario": `+sc+`, "axes": [{"path": "kvcr.latency_ms", "values": [1]}]}`)
		require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		assert.Contains(t, rec.Body.String(), `"path":"name"`)
		rec = postJSON(t, s, "/api/v1/plans", planBody(sc, `"name": `+string(nameJSON)+`, "goal": {"remove": 1}`))
		require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		assert.Contains(t, rec.Body.String(), `"path":"name"`)
	}
	ok := strings.Repeat("N", sim.MaxNameChars)
	rec := postJSON(t, s, "/api/v1/sweeps", `{"name": "`+ok+`", "scenario": `+sc+`, "axes": [{"path": "kvcr.latency_ms", "values": [1]}]}`)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
}

// Issue 19 L2: cancelling a sweep that has ended answers 200 with it as it ended, as for plans
// (that it stays so is the service's: runs' TestCancelDoneSweepIsANoOp).
func TestCancelDoneSweepIsANoOp(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(fourWorkers(t, ""), `[{"path": "kvcr.latency_ms", "values": [1, 2]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	waitSweep(t, s, id, store.StatusDone)
	rec = postJSON(t, s, "/api/v1/sweeps/"+id+"/cancel", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"status":"done"`)
	sw, err := s.runs.Sweep(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, sw.Status)
}

// Issue 19 L6: GET /api/v1/runs shows each run's attempts as GET /api/v1/runs/{id} does, and
// per_page is read (limit is refused with a pointer to per_page, not ignored).
func TestAPIListRunsAttemptsAndPerPage(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	first := submitAPI(t, s, testScenario("one"))
	waitStatus(t, s, first, store.StatusDone)
	submitAPI(t, s, testScenario("two"))
	submitAPI(t, s, testScenario("three"))

	var list struct {
		Runs    []apiRun `json:"runs"`
		PerPage int      `json:"per_page"`
		Total   int      `json:"total"`
	}
	rec := get(t, s, "/api/v1/runs?per_page=2")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	assert.Len(t, list.Runs, 2)
	assert.Equal(t, 2, list.PerPage)
	assert.Equal(t, 3, list.Total)

	rec = get(t, s, "/api/v1/runs?per_page=100")
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	var one apiRun
	require.NoError(t, json.Unmarshal(get(t, s, "/api/v1/runs/"+first).Body.Bytes(), &one))
	for _, r := range list.Runs {
		if r.ID == first {
			assert.Equal(t, 1, one.Attempts)
			assert.Equal(t, one.Attempts, r.Attempts)
			assert.Equal(t, one.Worker, r.Worker)
		}
	}
	for _, q := range []string{"per_page=0", "per_page=101", "per_page=x", "limit=5"} {
		rec := get(t, s, "/api/v1/runs?"+q)
		assert.Equal(t, http.StatusBadRequest, rec.Code, q)
		assert.Contains(t, rec.Body.String(), "per_page", q)
	}
}

// Issue 19 L7: an error that quotes a huge bad value quotes its beginning only.
func TestErrorsClipEchoedValues(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	huge := strings.Repeat("x", 1<<20)
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(fourWorkers(t, ""), `[{"path": "`+huge+`", "values": [1]}]`))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Less(t, rec.Body.Len(), 8<<10, "the answer must not echo the megabyte")
	assert.Contains(t, rec.Body.String(), "more bytes)")
	assert.Equal(t, "short", clip("short"))
}

// Issue 19 L9: opening a compare page records nothing; "Compare selected" records the pair once.
func TestComparePageIsAGetWithoutSideEffects(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	a := submitAPI(t, s, testScenario("cmp a"))
	b := submitAPI(t, s, testScenario("cmp b"))
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)
	gen := s.pages.gen.Load()
	for range 3 {
		require.Equal(t, http.StatusOK, get(t, s, "/compare?a="+a+"&b="+b).Code)
	}
	cmps, err := s.store.ComparisonsOf(context.Background(), a)
	require.NoError(t, err)
	assert.Empty(t, cmps)
	assert.Equal(t, gen, s.pages.gen.Load(), "cached run pages are not invalidated by viewing")

	require.Equal(t, http.StatusSeeOther, get(t, s, "/compare?run="+b+"&run="+a).Code)
	require.Equal(t, http.StatusSeeOther, get(t, s, "/compare?run="+b+"&run="+a).Code)
	cmps, err = s.store.ComparisonsOf(context.Background(), a)
	require.NoError(t, err)
	assert.Len(t, cmps, 1)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/compare?run=aaaaaaaaaaaaaaaa&run="+a).Code)
}
