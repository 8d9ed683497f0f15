package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/format"
)

// Per pool in words: peak and final workers, GPU-hours weighed by each side's GPUs per worker
// with the change, and scale events where a side has an autoscaler; nothing unless both runs
// have pools.
func TestComparePoolVerdicts(t *testing.T) {
	pd := func(prefillWS, decodeWS float64, workers ...sim.WorkerRow) *sim.Report {
		r := &sim.Report{Workers: workers}
		r.Summary.Disaggregation = &sim.DisaggregationSummary{Landed: 10, Recomputed: 1, WorkerSeconds: sim.PoolWorkerSeconds{Prefill: prefillWS, Decode: decodeWS}}
		return r
	}
	ra := pd(3600, 7200, sim.WorkerRow{ID: 0, Role: sim.RolePrefill}, sim.WorkerRow{ID: 1, Role: sim.RolePrefill, RemovedAtMS: msPtr(5)},
		sim.WorkerRow{ID: 2, Role: sim.RoleDecode})
	ra.Autoscaler = &sim.AutoscalerReport{Decisions: []sim.Decision{{Role: sim.RolePrefill, Current: 2, Desired: 1, Reason: sim.ReasonScaleDown, Drained: []int{1}}}}
	rb := pd(7200, 7200, sim.WorkerRow{ID: 0, Role: sim.RolePrefill}, sim.WorkerRow{ID: 1, Role: sim.RolePrefill}, sim.WorkerRow{ID: 2, Role: sim.RoleDecode})
	rb.Summary.Disaggregation.Failed.LeaseExpired = 2
	scA := &sim.Scenario{Disaggregation: &sim.Disaggregation{Prefill: sim.Pool{GPUsPerWorker: 2}, Decode: sim.Pool{GPUsPerWorker: 1}},
		PoolAutoscalers: &sim.PoolAutoscalers{Prefill: &sim.Autoscaler{MinWorkers: 1, MaxWorkers: 2}}}
	scB := &sim.Scenario{Disaggregation: &sim.Disaggregation{Prefill: sim.Pool{GPUsPerWorker: 2}, Decode: sim.Pool{GPUsPerWorker: 1}}}

	lead, words := comparePoolVerdicts(ra, rb, scA, scB, "autoscaler", "fixed")
	assert.Equal(t, "Each pool, A (autoscaler) against B (fixed):", lead)
	assert.Equal(t, []string{
		"Prefill: peak 2 workers against 2, final 1 against 2; 2.00 GPU-h against 4.00 GPU-h (B − A: +2 GPU-h); scale events 0 up, 1 down in 1 decision against a fixed pool.",
		"Decode: peak 1 worker against 1, final 1 against 1; 2.00 GPU-h against 2.00 GPU-h (B − A: 0 GPU-h).",
		"Handoffs: 10 landed against 10; 0 failed against 2; 1 prompt recomputed against 1.",
	}, words)
	lead, _ = comparePoolVerdicts(ra, rb, scA, scB, "A", "B")
	assert.Equal(t, "Each pool, A against B:", lead)

	plain := &sim.Report{}
	lead, words = comparePoolVerdicts(ra, plain, scA, &sim.Scenario{}, "A", "B")
	assert.Empty(t, lead)
	assert.Empty(t, words, "an aggregated run has no pools to weigh")
}

// The autoscaler pair of pd-llmd-keda: its compare page says per pool what the autoscalers did
// against the pools held at their maximums, beside the pool columns.
func TestComparePageSaysWhatDiffersPerPool(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	p, ok := sim.PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	id := submitAPI(t, s, string(p.JSON))
	waitStatus(t, s, id, store.StatusDone)
	rec := postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {"autoscaler"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	a, b := loc.Query().Get("a"), loc.Query().Get("b")
	waitStatus(t, s, b, store.StatusDone)
	ra, rb := fetchReportOf(t, s, a), fetchReportOf(t, s, b)

	doc := parseHTML(t, get(t, s, "/compare?a="+a+"&b="+b).Body)
	sec := byTestID(doc, "compare-pool-verdicts")
	require.Equal(t, 1, sec.Length())
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	assert.Contains(t, flat(sec.Find("p").Text()), "Each pool, A (autoscaler) against B (fixed pools")
	var words []string
	sec.Find(`[data-testid="pool-verdict"]`).Each(func(_ int, li *goquery.Selection) { words = append(words, flat(li.Text())) })
	require.Len(t, words, 3)
	for i, role := range poolRoles {
		ca, cb := poolWorkerCounts(ra, role), poolWorkerCounts(rb, role)
		wsA, wsB := ra.Summary.Disaggregation.WorkerSeconds.Prefill, rb.Summary.Disaggregation.WorkerSeconds.Prefill
		if role == sim.RoleDecode {
			wsA, wsB = ra.Summary.Disaggregation.WorkerSeconds.Decode, rb.Summary.Disaggregation.WorkerSeconds.Decode
		}
		// One GPU per worker in the preset; B holds the pool at its autoscaler's maximum.
		want := flat(fmt.Sprintf("%s: peak %s against %d, final %d against %d; %s against %s", poolName(role),
			format.Count(int64(ca.Peak), "workers"), cb.Peak, ca.Final, cb.Final, format.GPUHours(wsA/3600), format.GPUHours(wsB/3600)))
		assert.True(t, strings.HasPrefix(words[i], want), "%q starts with %q", words[i], want)
		assert.Equal(t, cb.Peak, cb.Final, "a fixed pool keeps its size")
		assert.Contains(t, words[i], "against a fixed pool.")
	}
	assert.True(t, strings.HasPrefix(words[2], "Handoffs: "), words[2])
	// Beside the pool columns, under the pools heading.
	page := get(t, s, "/compare?a="+a+"&b="+b).Body.String()
	assert.Less(t, strings.Index(page, `id="pools"`), strings.Index(page, `data-testid="compare-pool-verdicts"`))
	assert.Less(t, strings.Index(page, `data-testid="compare-pool-verdicts"`), strings.Index(page, `data-testid="compare-pools"`))
}
