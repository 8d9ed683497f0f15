package web

import (
	"fmt"
	"slices"
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

func msPtr(v float64) *float64 { return &v }

// A pool's workers are read from its rows: the initial ones, the most at once (a removal at
// the instant of a start counted first) and those left at the end; the other pool's rows do
// not count.
func TestPoolWorkerCounts(t *testing.T) {
	rep := &sim.Report{Workers: []sim.WorkerRow{
		{ID: 0, Role: sim.RolePrefill},
		{ID: 1, Role: sim.RolePrefill, RemovedAtMS: msPtr(100)},
		{ID: 2, Role: sim.RolePrefill, StartedAtMS: msPtr(50), RemovedAtMS: msPtr(200)}, // 3 at once from 50 to 100
		{ID: 3, Role: sim.RolePrefill, StartedAtMS: msPtr(100)},                         // starts as 1 is removed
		{ID: 4, Role: sim.RoleDecode},
		{ID: 5, Role: sim.RoleDecode, StartedAtMS: msPtr(10)},
	}}
	assert.Equal(t, poolCounts{Initial: 2, Peak: 3, Final: 2}, poolWorkerCounts(rep, sim.RolePrefill))
	assert.Equal(t, poolCounts{Initial: 1, Peak: 2, Final: 2}, poolWorkerCounts(rep, sim.RoleDecode))
	assert.Equal(t, poolCounts{}, poolWorkerCounts(rep, "other"))
}

// The glance of autoscaled pools: a card per pool for its workers, its GPU-hours (weighed by
// the pool's GPUs per worker, priced) and its scale events; a pool without an autoscaler is
// said to be fixed and has no scale-events card.
func TestPoolGlanceCards(t *testing.T) {
	one := 1
	rep := &sim.Report{
		Workers: []sim.WorkerRow{
			{ID: 0, Role: sim.RolePrefill}, {ID: 1, Role: sim.RolePrefill},
			{ID: 2, Role: sim.RoleDecode}, {ID: 3, Role: sim.RoleDecode, StartedAtMS: msPtr(10), RemovedAtMS: msPtr(20)},
		},
		Autoscaler: &sim.AutoscalerReport{Decisions: []sim.Decision{
			{Role: sim.RoleDecode, Current: 1, Desired: 2, Reason: sim.ReasonScaleUp, Started: []int{3}, Ready: &one},
			{Role: sim.RoleDecode, Current: 2, Desired: 1, Reason: sim.ReasonScaleDown, Cancelled: []int{3}},
			{Role: sim.RoleDecode, Current: 1, Desired: 1, Reason: sim.ReasonStabilized},
		}},
	}
	rep.Summary.DurationMS = 3600_000
	rep.Summary.GPUHours = 7
	rep.Summary.Disaggregation = &sim.DisaggregationSummary{WorkerSeconds: sim.PoolWorkerSeconds{Prefill: 7200, Decode: 1800}}
	d := &sim.Disaggregation{Prefill: sim.Pool{GPUsPerWorker: 2}, Decode: sim.Pool{GPUsPerWorker: 4}}
	pools := &sim.PoolAutoscalers{Decode: &sim.Autoscaler{MinWorkers: 1, MaxWorkers: 4}}
	cards := map[string]string{}
	var keys []string
	for _, c := range poolGlanceCards(rep, pools, d, 3, "$") {
		cards[c.Key] = c.Label + " | " + c.Value + " | " + c.Note
		keys = append(keys, c.Key)
	}
	assert.Equal(t, []string{"glance_gpu_hours", "glance_p99", "glance_killed", "glance_prefill_workers", "glance_prefill_gpu_hours",
		"glance_decode_workers", "glance_decode_gpu_hours", "glance_decode_scale_events"}, keys)
	assert.Equal(t, "GPU-hours, both pools | 7.00 GPU-h | cost $21.00 at $3.00 per GPU-hour", cards["glance_gpu_hours"])
	assert.Equal(t, "Prefill workers | peak 2 workers | started with 2, final 2; a fixed pool (no autoscaler)", cards["glance_prefill_workers"])
	// 7,200 worker-seconds are 2 worker-hours; at 2 GPUs per worker, 4 GPU-hours.
	assert.Equal(t, "Prefill GPU-hours | 4.00 GPU-h | 2 worker-hours × 2 GPUs per worker; cost $12.00 at $3.00 per GPU-hour", cards["glance_prefill_gpu_hours"])
	assert.Equal(t, "Decode workers | peak 2 workers | started with 1, final 1; bounds 1–4", cards["glance_decode_workers"])
	assert.Equal(t, "Decode GPU-hours | 2.00 GPU-h | 0.5 worker-hours × 4 GPUs per worker; cost $6.00 at $3.00 per GPU-hour", cards["glance_decode_gpu_hours"])
	assert.Equal(t, "Decode scale events | 1 up, 1 down | in 3 decisions under the legacy rules (no behavior); most held: stabilized (1 decision)", cards["glance_decode_scale_events"])

	words := poolAutoscalerVerdicts(rep, pools)
	require.NotEmpty(t, words)
	assert.Equal(t, "Decode: in 3 decisions its autoscaler drained 0 workers in 1 decision (and cancelled 1 worker still starting) and added 1 worker in 1 decision; the pool went from 1 to 1 workers, 2 at most.", words[0])
	// 1,800 of 4 × 3,600 worker-seconds.
	assert.Contains(t, words, "Decode: against 4 decode workers (its max_workers) held for the whole run, the pool used 12.5 % of their worker-seconds (87.5 % saved).")
	assert.Contains(t, words, "Decode: a stabilisation window held 1 decision that the metric alone would have changed.")
	for _, w := range words {
		assert.False(t, strings.HasPrefix(w, "Prefill"), "a fixed pool has no autoscaler to speak of: %q", w)
	}
}

// pd-llmd-keda (one KEDA ScaledObject per pool) leads as an autoscaler run does: the pools at
// a glance with the SLO, each pool's autoscaler in words, both pools over time at full width,
// the decisions, then the drains and the pools section (without the chart, which leads).
func TestRunPageLeadsWithThePools(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	p, ok := sim.PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	// With an SLO, which leads with the pools.
	body := strings.Replace(string(p.JSON), `"seed":`, `"slo": {"ttft_ms": 3000}, "seed":`, 1)
	require.NotEqual(t, string(p.JSON), body)
	sc, err := sim.Parse([]byte(body), sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.SLO)
	id := submitAPI(t, s, body)
	waitStatus(t, s, id, store.StatusDone)
	rep := fetchReportOf(t, s, id)
	page := get(t, s, "/runs/"+id).Body.String()
	doc := parseHTML(t, strings.NewReader(page))

	at := func(id string) int { return strings.Index(page, `data-testid="`+id+`"`) }
	order := []int{at("glance"), at("autoscaler-words"), at("fleet-chart-lead"), at("autoscaler-section"), at("drain-cards"), at("pools-section"), at("run-actions")}
	require.True(t, slices.IsSorted(order) && order[0] >= 0, "glance, words, pools chart, decisions, drains, pools, actions: %v", order)
	lead := byTestID(doc, "fleet-chart-lead")
	assert.Contains(t, lead.AttrOr("class", ""), "full-width")
	assert.Equal(t, 1, lead.Find(`[data-testid="chart-pool-fleet"]`).Length(), "both pools over time lead the page")
	assert.Equal(t, 1, strings.Count(page, `data-testid="chart-pool-fleet"`), "and are not drawn twice")
	assert.Equal(t, 0, byTestID(doc, "pool-chart").Length())
	assert.Equal(t, "Drains", strings.TrimSpace(doc.Find("h2#drains").Text()), "no KV pull is made with pools")

	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	card := func(key string) string {
		c := byTestID(doc, "glance").Find(`[data-testid="card-` + key + `"]`)
		require.Equal(t, 1, c.Length(), key)
		// Label | value | note.
		return strings.Join(c.Find(".kcard-label, .kcard-value, .kcard-note").Map(func(_ int, e *goquery.Selection) string { return flat(e.Text()) }), " | ")
	}
	assert.Contains(t, card("glance_gpu_hours"), flat(format.GPUHours(rep.Summary.GPUHours)))
	assert.Contains(t, card("glance_p99"), flat(format.DurationOpt(rep.Summary.TTFTMS.P99)))
	assert.Contains(t, card(sim.HeadlineSLOAttainment), "of requests met", "the SLO leads with the pools")
	var finals, initials int
	for _, role := range poolRoles {
		name := poolName(role)
		a := sc.PoolAutoscalers.Of(role)
		c := poolWorkerCounts(rep, role)
		finals += c.Final
		initials += c.Initial
		assert.LessOrEqual(t, c.Peak, a.MaxWorkers, role)
		workers := card("glance_" + role + "_workers")
		assert.Equal(t, fmt.Sprintf("%s workers | peak %s | started with %d, final %d; bounds %d–%d", name, flat(format.Count(int64(c.Peak), "workers")),
			c.Initial, c.Final, a.MinWorkers, a.MaxWorkers), workers)
		ws := rep.Summary.Disaggregation.WorkerSeconds.Prefill
		if role == sim.RoleDecode {
			ws = rep.Summary.Disaggregation.WorkerSeconds.Decode
		}
		gpuh := card("glance_" + role + "_gpu_hours")
		assert.Contains(t, gpuh, name+" GPU-hours | "+flat(format.GPUHours(ws/3600)), "one GPU per worker in the preset")
		assert.Contains(t, gpuh, "per GPU-hour")
		var ups, downs, n int
		for _, d := range rep.Autoscaler.Decisions {
			if d.Role != role {
				continue
			}
			n++
			if d.Desired > d.Current {
				ups++
			} else if d.Desired < d.Current {
				downs++
			}
		}
		events := card("glance_" + role + "_scale_events")
		assert.Contains(t, events, fmt.Sprintf("%s scale events | %d up, %d down | in %s under a behavior", name, ups, downs, flat(format.Count(int64(n), "decisions"))))
		words := flat(byTestID(doc, "autoscaler-words").Text())
		assert.Contains(t, words, flat(fmt.Sprintf("%s: in %s its autoscaler", name, format.Count(int64(n), "decisions"))))
		assert.Contains(t, words, fmt.Sprintf("%s: against %d %s workers (its max_workers)", name, a.MaxWorkers, role))
	}
	// The rows agree with the fleet's counts.
	assert.Equal(t, rep.Summary.Workers.Final, finals)
	assert.Equal(t, rep.Summary.Workers.Initial, initials)
	assert.Equal(t, 1, strings.Count(page, "Prefill: in "), "each pool's words once, at the top")
	assert.Equal(t, 1, strings.Count(page, "Decode: in "), "each pool's words once, at the top")
	byTestID(doc, "glance").Find(".kcard-value").Each(func(_ int, v *goquery.Selection) {
		assert.Regexp(t, `[a-zA-Z%]`, v.Text(), "every number has its unit")
	})
}
