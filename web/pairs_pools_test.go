package web

import (
	"github.com/PuerkitoBio/goquery"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// A P/D run's page offers the load-failure, lease and prefill-drain pairs; each runs and opens
// a compare page with the pool columns, ordered by setting (A: vLLM's default).
func TestPoolPairsAndCompareColumns(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitExample(t, s, "pd_lease_fail", nil)
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)
	for _, kind := range []string{"load-failure", "lease", "prefill-drain"} {
		assert.Equal(t, 1, byTestID(doc, "counterpart-"+kind).Length(), kind)
	}

	compare := func(kind string) (a, b string) {
		rec := postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {kind}})
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		loc, err := url.Parse(rec.Header().Get("Location"))
		require.NoError(t, err)
		require.Equal(t, "/compare", loc.Path)
		a, b = loc.Query().Get("a"), loc.Query().Get("b")
		waitStatus(t, s, a, store.StatusDone)
		waitStatus(t, s, b, store.StatusDone)
		return a, b
	}
	a, b := compare("load-failure")
	assert.Equal(t, id, a, "the run (fail, vLLM's default) is A")
	cmp := parseHTML(t, get(t, s, "/compare?a="+a+"&b="+b).Body)
	rows := byTestID(cmp, "compare-pools").Find("tbody tr")
	require.Equal(t, 8, rows.Length())
	byLabel := map[string][]string{}
	for i := range rows.Length() {
		var cells []string
		rows.Eq(i).Find("td").Each(func(_ int, c *goquery.Selection) { cells = append(cells, strings.TrimSpace(c.Text())) })
		byLabel[cells[0]] = cells[1:]
	}
	assert.Equal(t, []string{"1", "1", "0"}, byLabel["Handoffs failed"], "the lease still expires under recompute")
	assert.Equal(t, []string{"0", "1", "+1"}, byLabel["Prompts recomputed"])

	// pd_lease_fail has a fixed lease: its heartbeat counterpart is A, the run itself B.
	a, b = compare("lease")
	assert.Equal(t, id, b, "the run (fixed lease) is B")
	rl, err := s.store.GetRun(t.Context(), a)
	require.NoError(t, err)
	scL, err := sim.Parse(rl.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.LeaseHeartbeat, scL.Disaggregation.Lease.Mode)

	a, b = compare("prefill-drain")
	ra, err := s.store.GetRun(t.Context(), a)
	require.NoError(t, err)
	scA, err := sim.Parse(ra.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.DrainWait, scA.Disaggregation.PrefillDrain.Mode)
	rb, err := s.store.GetRun(t.Context(), b)
	require.NoError(t, err)
	scB, err := sim.Parse(rb.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.DrainSkip, scB.Disaggregation.PrefillDrain.Mode)
	vs, err := sim.PrefillDrainVariants(scA)
	require.NoError(t, err)
	_, err = s.store.GetRun(t.Context(), vs[1].ID())
	assert.NoError(t, err, "the fixed drain ran beside the pair")

	// An aggregated run has no pool pairs: refused with a message naming the fix.
	plain := submitAPI(t, s, testScenario("plain"))
	waitStatus(t, s, plain, store.StatusDone)
	assert.Equal(t, 0, byTestID(parseHTML(t, get(t, s, "/runs/"+plain).Body), "counterpart-lease").Length())
	rec := postForm(t, s, "/pairs", url.Values{"from": {plain}, "kind": {"lease"}})
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Contains(t, rec.Body.String(), "Prefill + decode")
}

// A P/D run whose pools have autoscalers offers the autoscaler pair without a size to name; it
// runs the pools fixed at their autoscalers' maximums and opens an autoscaler compare page.
func TestPoolAutoscalerPair(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	p, ok := sim.PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	id := submitAPI(t, s, string(p.JSON))
	waitStatus(t, s, id, store.StatusDone)
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)
	button := byTestID(doc, "counterpart-autoscaler")
	require.Equal(t, 1, button.Length())
	assert.Contains(t, button.Text(), "fixed pools")
	assert.Equal(t, 0, byTestID(doc, "pair-baseline-workers").Length(), "no single size to name")

	// Its decisions say which pool each scaled, with the load against that pool's target.
	table := byTestID(doc, "decisions-table")
	head := table.Find("thead th")
	require.Equal(t, "Pool", strings.TrimSpace(head.Eq(1).Text()))
	assert.Contains(t, head.Eq(3).Text(), "against its pool's target")
	pools := map[string]int{}
	loads := 0
	table.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
		cells := tr.Find("td")
		pools[strings.TrimSpace(cells.Eq(1).Text())]++
		if strings.TrimSpace(cells.Eq(3).Text()) != "—" {
			loads++
		}
	})
	assert.Positive(t, pools[sim.RolePrefill]+pools[sim.RoleDecode])
	assert.Equal(t, pools[sim.RolePrefill]+pools[sim.RoleDecode], table.Find("tbody tr").Length(), "every row names its pool: %v", pools)
	assert.Positive(t, loads, "rows weigh the load against their pool's target")

	rec := postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {"autoscaler"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	a, b := loc.Query().Get("a"), loc.Query().Get("b")
	assert.Equal(t, id, a, "the autoscalers are A")
	waitStatus(t, s, b, store.StatusDone)
	rb, err := s.store.GetRun(t.Context(), b)
	require.NoError(t, err)
	fixed, err := sim.Parse(rb.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Nil(t, fixed.PoolAutoscalers)
	assert.Equal(t, sc.PoolAutoscalers.Prefill.MaxWorkers, fixed.Disaggregation.Prefill.Workers)
	assert.Equal(t, sc.PoolAutoscalers.Decode.MaxWorkers, fixed.Disaggregation.Decode.Workers)
	page := get(t, s, "/compare?a="+a+"&b="+b)
	require.Equal(t, http.StatusOK, page.Code)
	cmp := parseHTML(t, page.Body)
	assert.Positive(t, byTestID(cmp, "compare-pools").Length(), "the pool columns")
	assert.Contains(t, cmp.Text(), "against fixed pools of 8 prefill and 16 decode workers, the autoscalers' maximums")

	// A size named for pools is refused, naming the fix.
	rec = postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {"autoscaler"}, "baseline_workers": {"6"}})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "leave baseline_workers out")
}
