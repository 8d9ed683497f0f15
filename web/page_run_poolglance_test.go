package web

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
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
	cards, keys := cardsByKey(poolGlanceCards(rep, pools, d, 3, "$"))
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
	// A card of the part of the page named section: label | value | note.
	cardIn := func(section, key string) string {
		c := byTestID(doc, section).Find(`[data-testid="card-` + key + `"]`)
		require.Equal(t, 1, c.Length(), key)
		return strings.Join(c.Find(".kcard-label, .kcard-value, .kcard-note").Map(func(_ int, e *goquery.Selection) string { return flat(e.Text()) }), " | ")
	}
	card := func(key string) string { return cardIn("glance", key) }
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
	// The autoscaler section's cards are each pool's too, and the fleet's peak is not among them.
	for _, role := range poolRoles {
		c := poolWorkerCounts(rep, role)
		assert.Equal(t, flat(fmt.Sprintf("%s peak workers | %s | started with %d, ended with %d", poolName(role), format.Count(int64(c.Peak), "workers"), c.Initial, c.Final)),
			cardIn("autoscaler-section", role+"_workers_peak"))
		assert.Contains(t, cardIn("autoscaler-section", role+"_gpu_hours"), " worker-hours × 1 GPU per worker")
		assert.Equal(t, card("glance_"+role+"_scale_events"), cardIn("autoscaler-section", role+"_scale_events"), "the same events as at a glance")
	}
	sec := byTestID(doc, "autoscaler-section")
	assert.Equal(t, 0, sec.Find(`[data-testid="card-workers_peak"], [data-testid="card-gpu_hours"]`).Length(), "no fleet-wide peak or GPU-hours with pools")
	assert.Contains(t, cardIn("autoscaler-section", "requests_migrated"), "Requests migrated | ")
	// The rows agree with the fleet's counts.
	assert.Equal(t, rep.Summary.Workers.Final, finals)
	assert.Equal(t, rep.Summary.Workers.Initial, initials)
	assert.Equal(t, 1, strings.Count(page, "Prefill: in "), "each pool's words once, at the top")
	assert.Equal(t, 1, strings.Count(page, "Decode: in "), "each pool's words once, at the top")
	byTestID(doc, "glance").Find(".kcard-value").Each(func(_ int, v *goquery.Selection) {
		assert.Regexp(t, `[a-zA-Z%]`, v.Text(), "every number has its unit")
	})
}

// cardsByKey are cards as "label | value | note", by key, and their keys in order.
func cardsByKey(cs []templates.Card) (map[string]string, []string) {
	cards := map[string]string{}
	var keys []string
	for _, c := range cs {
		cards[c.Key] = c.Label + " | " + c.Value + " | " + c.Note
		keys = append(keys, c.Key)
	}
	return cards, keys
}

// The autoscaler section of a run with pools speaks per pool: each autoscaled pool's GPU-hours
// (weighed by its GPUs per worker), its peak workers with those it started and ended with, and its
// scale events; the requests migrated once, for the fleet. A pool without an autoscaler gets one
// card saying it was fixed. An aggregated run keeps the fleet's three cards.
func TestAutoscalerSectionCardsPerPool(t *testing.T) {
	rep := &sim.Report{
		Workers: []sim.WorkerRow{
			{ID: 0, Role: sim.RolePrefill}, {ID: 1, Role: sim.RolePrefill, RemovedAtMS: msPtr(2000)},
			{ID: 2, Role: sim.RolePrefill, StartedAtMS: msPtr(500), RemovedAtMS: msPtr(1500)}, // 3 prefill at once
			{ID: 3, Role: sim.RoleDecode}, {ID: 4, Role: sim.RoleDecode, StartedAtMS: msPtr(1000)},
		},
		Autoscaler: &sim.AutoscalerReport{Decisions: []sim.Decision{
			{Role: sim.RolePrefill, Current: 2, Desired: 3, Reason: sim.ReasonScaleUp, Started: []int{2}},
			{Role: sim.RolePrefill, Current: 3, Desired: 2, Reason: sim.ReasonScaleDown, Drained: []int{2}},
			{Role: sim.RolePrefill, Current: 2, Desired: 1, Reason: sim.ReasonScaleDown, Drained: []int{1}},
			{Role: sim.RoleDecode, Current: 1, Desired: 2, Reason: sim.ReasonScaleUp, Started: []int{4}},
			{Role: sim.RoleDecode, Current: 2, Desired: 2, Reason: sim.ReasonStabilized},
		}},
	}
	rep.Summary.DurationMS = 3600_000
	rep.Summary.GPUHours = 99 // the fleet's, which no pool card may show
	rep.Summary.Workers = sim.WorkerCounts{Initial: 3, Peak: 5, Final: 3}
	rep.Summary.Requests.Migrated = 4
	rep.Summary.Requests.Killed = 1
	rep.Summary.Disaggregation = &sim.DisaggregationSummary{WorkerSeconds: sim.PoolWorkerSeconds{Prefill: 5400, Decode: 9000}}
	d := &sim.Disaggregation{Prefill: sim.Pool{GPUsPerWorker: 2}, Decode: sim.Pool{GPUsPerWorker: 1}}
	pools := &sim.PoolAutoscalers{
		Prefill: &sim.Autoscaler{MinWorkers: 1, MaxWorkers: 3},
		Decode:  &sim.Autoscaler{MinWorkers: 1, MaxWorkers: 4, Behavior: &sim.Behavior{}},
	}
	v := autoscalerView(rep, nil, pools, d, url.Values{}, "/runs/x", format.Clock{})
	require.NotNil(t, v)
	cards, keys := cardsByKey(v.Cards)
	assert.Equal(t, []string{"prefill_gpu_hours", "prefill_workers_peak", "prefill_scale_events",
		"decode_gpu_hours", "decode_workers_peak", "decode_scale_events", "requests_migrated"}, keys)
	assert.Equal(t, map[string]string{
		// 5,400 worker-seconds are 1.5 worker-hours; at 2 GPUs per worker, 3 GPU-hours.
		"prefill_gpu_hours":    "Prefill GPU-hours | 3.00 GPU-h | 1.5 worker-hours × 2 GPUs per worker",
		"prefill_workers_peak": "Prefill peak workers | 3 workers | started with 2, ended with 1",
		"prefill_scale_events": "Prefill scale events | 1 up, 2 down | in 3 decisions under the legacy rules (no behavior)",
		// 9,000 worker-seconds at 1 GPU per worker: 2.5 GPU-hours.
		"decode_gpu_hours":    "Decode GPU-hours | 2.50 GPU-h | 2.5 worker-hours × 1 GPU per worker",
		"decode_workers_peak": "Decode peak workers | 2 workers | started with 1, ended with 2",
		"decode_scale_events": "Decode scale events | 1 up, 0 down | in 2 decisions under a behavior; most held: stabilized (1 decision)",
		"requests_migrated":   "Requests migrated | 4 moves | 1 request killed",
	}, cards)
	for _, c := range v.Cards {
		assert.NotContains(t, c.Value, "99", "the fleet's GPU-hours are no pool's")
		assert.NotContains(t, c.Value, "5 workers", "the fleet's peak is no pool's")
	}

	// A pool without an autoscaler: one card saying so, after the autoscaled pool's.
	v = autoscalerView(rep, nil, &sim.PoolAutoscalers{Decode: pools.Decode}, d, url.Values{}, "/runs/x", format.Clock{})
	cards, keys = cardsByKey(v.Cards)
	assert.Equal(t, []string{"decode_gpu_hours", "decode_workers_peak", "decode_scale_events", "prefill_fixed", "requests_migrated"}, keys)
	assert.Equal(t, "Prefill pool | fixed | no autoscaler; peak 3 workers, 3.00 GPU-h", cards["prefill_fixed"])

	// Aggregated (no pools, or pools without their summary): the fleet's cards, as before.
	for _, agg := range []struct {
		pools *sim.PoolAutoscalers
		d     *sim.Disaggregation
	}{{nil, nil}, {nil, d}, {pools, nil}} {
		v = autoscalerView(rep, &sim.Autoscaler{MinWorkers: 1, MaxWorkers: 5}, agg.pools, agg.d, url.Values{}, "/runs/x", format.Clock{})
		cards, keys = cardsByKey(v.Cards)
		assert.Equal(t, []string{"gpu_hours", "workers_peak", "requests_migrated"}, keys)
		assert.Equal(t, map[string]string{
			"gpu_hours":         "GPU-hours | 99.00 GPU-h | worker-seconds × GPUs per worker ÷ 3600",
			"workers_peak":      "Peak workers | 5 workers | started with 3, ended with 3",
			"requests_migrated": "Requests migrated | 4 moves | 1 request killed",
		}, cards)
		assert.Equal(t, "99 GPU-h", v.Cards[0].Exact)
	}
	rep.Summary.Disaggregation = nil
	v = autoscalerView(rep, nil, pools, d, url.Values{}, "/runs/x", format.Clock{})
	_, keys = cardsByKey(v.Cards)
	assert.Equal(t, []string{"gpu_hours", "workers_peak", "requests_migrated"}, keys, "a report without the pools' summary")
}
