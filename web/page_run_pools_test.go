package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// submitExample submits a conformance example (edited by edit when not nil) and waits for it.
func submitExample(t *testing.T, s *Server, name string, edit func(string) string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "sim", "testdata", "examples", name+".json"))
	require.NoError(t, err)
	body := string(raw)
	if edit != nil {
		body = edit(body)
	}
	rec := postJSON(t, s, "/api/v1/runs", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sc, err := sim.Parse([]byte(body), sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, sc.ID(), store.StatusDone)
	return sc.ID()
}

// A P/D run's page: handoff figures, the pools over time, the drained prefill worker with its
// removal deadline and pin wait, the role and held block-seconds in the worker table, the
// verdicts in words and the TTFT split from the request rows.
func TestRunPageShowsThePools(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitExample(t, s, "pd_lease_fail", nil)
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)

	sec := byTestID(doc, "pools-section")
	require.Equal(t, 1, sec.Length(), "a run with pools has the pools section")
	// summary.disaggregation: 2 handoffs, 1 landed, 1 failed (lease expired), 0.016 block-s
	// held, 0.01 on the draining worker, transfer 3 ms.
	assert.Contains(t, byTestID(doc, "card-handoffs").Text(), "2 handoffs")
	assert.Contains(t, byTestID(doc, "card-handoffs").Text(), "1 landed, 1 failed")
	failed := byTestID(doc, "card-handoffs-failed").Text()
	assert.Contains(t, failed, "1 handoff")
	assert.Contains(t, failed, "lease expired 1")
	assert.Contains(t, failed, "0 prompts recomputed")
	held := byTestID(doc, "card-held-block-seconds").Text()
	assert.Contains(t, held, "0.016 block-s")
	assert.Contains(t, held, "0.01 block-s on draining prefill workers")
	assert.Contains(t, byTestID(doc, "card-handoff-transfer").Text(), "3 ms")
	assert.Contains(t, byTestID(doc, "card-pool-worker-seconds").Text(), "prefill 0.017 s")

	// The chart of both pools, with its table of the six gauges.
	chart := sec.Find(`[data-testid="chart-pool-fleet"]`)
	require.Equal(t, 1, chart.Length(), "the per-pool fleet chart is drawn")
	head := sec.Find("table").First().Text()
	for _, col := range []string{"prefill active (workers)", "decode draining (workers)", "handoffs landed"} {
		assert.Contains(t, head, col)
	}

	// Worker 1 (prefill) was marked at 1 ms, removed at 7 ms after waiting 5 ms for its
	// handoffs, and held 0.01 block-s while draining: 1.667 blocks on average over 6 ms.
	rows := byTestID(doc, "drained-prefill-table").Find("tbody tr")
	require.Equal(t, 1, rows.Length())
	cells := rows.First().Find("td")
	assert.Equal(t, "prefill-1", strings.TrimSpace(cells.Eq(0).Text()))
	assert.Equal(t, "7 ms", strings.TrimSpace(cells.Eq(2).Text()))
	assert.Equal(t, "5 ms", strings.TrimSpace(cells.Eq(3).Text()))
	assert.Equal(t, "0.01", strings.TrimSpace(cells.Eq(5).Text()))

	// No KVCR pull is made with pools: no pulls card, no verdict of peers pulling, and the pin
	// wait is the wait for decode workers.
	assert.Equal(t, 0, byTestID(doc, "card-"+sim.HeadlinePullsStaged).Length())
	assert.Contains(t, byTestID(doc, "card-"+sim.HeadlineTotalPinWaitMS).Text(), "decode workers to read their handoffs")
	assert.NotContains(t, byTestID(doc, "verdicts").First().Text(), "peers pulling")
	words := byTestID(doc, "pool-verdicts").Text()
	assert.Contains(t, words, "Draining prefill-1 held 1.67 blocks on average over its 6 ms drain (0.01 block-seconds) until its removal at 7 ms.")
	// Its pin wait (5 ms) exceeds the longest transfer (3 ms): a handoff waited in a decode queue.
	assert.Contains(t, words, "at least one handoff waited 2 ms or more in a decode worker's queue because the decode pool was full")
	assert.Contains(t, words, "1 handoff of 2 failed (lease expired 1); under load_failure_policy fail (vLLM's default) 1 request failed.")

	// The worker table has each worker's role and held block-seconds, no pull columns.
	wt := byTestID(doc, "workers-table")
	wh := wt.Find("thead").Text()
	assert.Contains(t, wh, "Role")
	assert.Contains(t, wh, "Held while draining (block-s)")
	assert.NotContains(t, wh, "Pulls served")
	all := parseHTML(t, get(t, s, "/runs/"+id+"?workers=all").Body)
	wrows := byTestID(all, "workers-table").Find("tbody tr")
	require.Equal(t, 3, wrows.Length())
	assert.Equal(t, "decode", strings.TrimSpace(wrows.Eq(2).Find("td").Eq(1).Text()))
	assert.Equal(t, "—", strings.TrimSpace(wrows.Eq(2).Find("td").Last().Text()), "a decode worker holds no handoff")

	// per_request is on: the TTFT of the one request whose handoff landed, in its parts.
	split := byTestID(doc, "ttft-split-table").Find("tbody tr")
	require.Equal(t, 4, split.Length())
	assert.Contains(t, byTestID(doc, "ttft-split-note").Text(), "Over 1 request")
	assert.Contains(t, split.Eq(2).Text(), "3 ms", "its transfer")
	assert.Contains(t, split.Eq(3).Text(), "100 %")
}

// Without request rows the page says why TTFT is not split; an aggregated run has no pools.
func TestRunPagePoolsWithoutRequestRows(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitExample(t, s, "pd_drain_wait", func(b string) string {
		return strings.Replace(b, `"per_request": true`, `"per_request": false`, 1)
	})
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)
	assert.Equal(t, 0, byTestID(doc, "ttft-split-table").Length())
	assert.Contains(t, byTestID(doc, "ttft-split-note").Text(), "no request rows (report.per_request is off)")
	assert.Contains(t, byTestID(doc, "pool-verdicts").Text(), "The one handoff landed on decode workers; none failed.")

	rec := postJSON(t, s, "/api/v1/runs", testScenario("plain"))
	require.Equal(t, http.StatusAccepted, rec.Code)
	plain, err := sim.Parse([]byte(testScenario("plain")), sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, plain.ID(), store.StatusDone)
	pdoc := parseHTML(t, get(t, s, "/runs/"+plain.ID()).Body)
	assert.Equal(t, 0, byTestID(pdoc, "pools-section").Length(), "an aggregated run has no pools section")
	assert.Equal(t, 1, byTestID(pdoc, "card-"+sim.HeadlinePullsStaged).Length(), "an aggregated run keeps its pulls card")
	ph := byTestID(pdoc, "workers-table").Find("thead").Text()
	assert.Contains(t, ph, "Pulls served")
	assert.NotContains(t, ph, "Role")
}
