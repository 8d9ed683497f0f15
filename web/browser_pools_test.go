//go:build browser

package web

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// TestBrowserPoolsRun is issue 33's path through the form: choose prefill + decode pools, size
// them, drain one prefill worker from the schedule and run; the run page draws both pools over
// time and shows the handoff figures of the report; screenshots at 1,280 and 390 px.
func TestBrowserPoolsRun(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	b.viewport(t, 1280, 900)

	b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`select[data-pools-mode]`)))
	b.waitFor(t, "app.js to run", `document.readyState === 'complete'`, 10*time.Second)
	b.do(t, "choose prefill + decode pools", chromedp.SetValue(chromedp.CSS(`select[data-pools-mode]`), "prefill_decode"))
	for id, v := range map[string]string{
		"disaggregation.prefill.workers":     "3",
		"disaggregation.decode.workers":      "4",
		"disaggregation.decode.max_num_seqs": "4",
		"disaggregation.transfer.latency_ms": "2",
		"disaggregation.load_failure_policy": "recompute",
		"disaggregation.prefill_drain.mode":  "wait",
		"workload.sessions.count":            "300",
		"workload.sessions.rate_per_s":       "20",
		"scale_in[0].at_ms":                  "5000",
		"scale_in[0].count":                  "1",
		"scale_in[0].role":                   "prefill",
		"scale_in[0].grace_ms":               "30000",
	} {
		setField(t, b, id, v)
	}
	b.chartShot(t, "pools", "pools-form-1280")
	require.Empty(t, b.problems(t), "console errors or CSP violations on the form")
	b.do(t, "press Run", chromedp.Click(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "the run page with the pools chart drawn", `location.pathname.indexOf('/runs/') === 0 &&
		!!document.querySelector('#pool-fleet[data-chart-ready="true"]') && `+chartsReady, 120*time.Second)
	runURL := browserEval[string](t, b, `location.origin + location.pathname`)
	id := strings.TrimPrefix(runURL, ts.URL+"/runs/")
	rep := fetchReport(t, ts.URL, id)
	d := rep.Summary.Disaggregation
	require.NotNil(t, d, "the run has pools")
	require.Positive(t, d.Handoffs, "prompts were handed off")

	series := seriesOf(t, b, "pool-fleet")
	for _, want := range []string{"prefill active", "prefill draining", "decode active"} {
		require.Contains(t, series, want, "pool chart series: %v", series)
	}
	// The chart's data is the report's: the first bucket's prefill active workers.
	first := browserEval[float64](t, b, `(function () {
	  var p = echarts.getInstanceByDom(document.getElementById('pool-fleet')).getOption().series[0].data[0];
	  return (p.value || p)[1];
	})()`)
	require.Equal(t, float64(rep.Timeseries.Buckets[0].PrefillActive), first)

	// Spaces (the narrow ones between thousands included) read as one.
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	card := func(key string) string {
		return flat(browserEval[string](t, b, `document.querySelector('[data-testid="card-`+key+`"]').textContent`))
	}
	require.Contains(t, card("handoffs"), flat(format.Count(d.Handoffs, "handoffs")))
	require.Contains(t, card("handoffs"), flat(format.Number(float64(d.Landed))+" landed"))
	require.Contains(t, card("held-block-seconds"), flat(format.Sig3(d.HeldBlockSeconds)+" block-s"))
	require.Contains(t, card("held-block-seconds"), flat(format.Sig3(d.HeldBlockSecondsDraining)+" block-s on draining"))
	drained := browserEval[string](t, b, `document.querySelector('[data-testid="drained-prefill-table"] tbody tr td').textContent`)
	require.Equal(t, "prefill-2", strings.TrimSpace(drained), "the highest prefill id drained")
	require.Empty(t, b.problems(t), "console errors or CSP violations on the run page")
	b.chartShot(t, "pool-fleet", "pools-run-chart-1280")

	checkPhoneAndA11y(t, b, runURL, "pools-run")
}

// TestBrowserPoolsLead: a run whose pools have autoscalers (pd-llmd-keda, one KEDA ScaledObject
// per pool) leads as an autoscaler run does: the pools at a glance, each pool's autoscaler in
// words, both pools over time drawn at full width, then the decisions and the drains; at 1,280
// and 390 px nothing sticks out sideways. Its autoscaler pair's compare page says per pool what
// differs.
func TestBrowserPoolsLead(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	id := submitScenario(t, ts.URL, presetWith(t, "pd-llmd-keda", nil))
	waitDone(t, ts.URL, id, 120*time.Second)
	rep := fetchReport(t, ts.URL, id)
	runURL := ts.URL + "/runs/" + id
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, width := range []int64{1280, 390} {
		b.viewport(t, width, 844)
		b.openPage(t, runURL)
		order := browserEval[[]int](t, b, `['glance', 'autoscaler-words', 'fleet-chart-lead', 'autoscaler-section', 'drain-cards', 'pools-section'].map(function (id) {
			var el = document.querySelector('[data-testid="' + id + '"]'); return el ? Math.round(el.getBoundingClientRect().top + window.scrollY) : -1; })`)
		require.True(t, slices.IsSorted(order) && order[0] >= 0, "glance, words, pools chart, decisions, drains, pools from the top at %d px: %v", width, order)
		require.True(t, browserEval[bool](t, b, `!!document.querySelector('[data-testid="fleet-chart-lead"] #pool-fleet[data-chart-ready="true"]')`),
			"the pools chart is drawn in the lead at %d px", width)
		require.Equal(t, 1, browserEval[int](t, b, `document.querySelectorAll('#pool-fleet').length`), "the pools chart once")
		// The lead's cards, the chart and the autoscaler section's cards fit their room: none is wider than the window.
		wide := browserEval[[]string](t, b, `Array.from(document.querySelectorAll('[data-testid="glance"] .kcard, [data-testid="autoscaler-section"] .kcard, [data-testid="fleet-chart-lead"] #pool-fleet, [data-testid="autoscaler-words"] li')).filter(function (el) {
			var r = el.getBoundingClientRect(); return r.left < -1 || r.right > window.innerWidth + 1 || el.scrollWidth > el.clientWidth + 1;
		}).map(function (el) { return (el.getAttribute('data-testid') || el.id || el.tagName) + ' ' + Math.round(el.getBoundingClientRect().width) + ' px'; })`)
		require.Empty(t, wide, "the lead at %d px", width)
		require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "the page at %d px", width)
		b.elementShot(t, `[data-testid="glance"]`, fmt.Sprintf("pools-lead-cards-%d", width))
		b.elementShot(t, `#pool-fleet`, fmt.Sprintf("pools-lead-chart-%d", width))
		b.elementShot(t, `[data-testid="autoscaler-section"] [data-testid="cards"]`, fmt.Sprintf("pools-autoscaler-cards-%d", width))
	}
	b.viewport(t, 1280, 900)
	b.openPage(t, runURL)
	card := func(key string) string {
		return flat(browserEval[string](t, b, `document.querySelector('[data-testid="glance"] [data-testid="card-`+key+`"]').textContent`))
	}
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		c := poolWorkerCounts(rep, role)
		require.Contains(t, card("glance_"+role+"_workers"), flat(fmt.Sprintf("peak %s", format.Count(int64(c.Peak), "workers"))))
		require.Contains(t, card("glance_"+role+"_gpu_hours"), "per GPU-hour")
		require.Contains(t, card("glance_"+role+"_scale_events"), " up, ")
	}
	// The autoscaler section's cards are each pool's: label, value and note as the report says.
	sectionCard := func(key string) string {
		return flat(browserEval[string](t, b, `(function () {
		  var c = document.querySelector('[data-testid="autoscaler-section"] [data-testid="card-`+key+`"]');
		  return c ? Array.from(c.querySelectorAll('.kcard-label, .kcard-value, .kcard-note')).map(function (e) { return e.textContent.trim(); }).join(' | ') : '';
		})()`))
	}
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		name := format.Capitalize(role)
		c := poolWorkerCounts(rep, role)
		require.Equal(t, flat(fmt.Sprintf("%s peak workers | %s | started with %d, ended with %d", name, format.Count(int64(c.Peak), "workers"), c.Initial, c.Final)),
			sectionCard(role+"_workers_peak"))
		gpuh := sectionCard(role + "_gpu_hours")
		require.Regexp(t, `^`+name+` GPU-hours \| [0-9][0-9 ,]*\.[0-9]{2} GPU-h \| [0-9][0-9 ,.]* worker-hours × 1 GPU per worker$`, gpuh, "one GPU per worker in the preset")
		require.Contains(t, sectionCard(role+"_scale_events"), name+" scale events | ")
		require.Contains(t, sectionCard(role+"_scale_events"), " up, ")
	}
	require.Empty(t, sectionCard("workers_peak"), "no fleet-wide peak with pools")
	require.Contains(t, sectionCard("requests_migrated"), "Requests migrated | ")
	words := flat(browserEval[string](t, b, `document.querySelector('[data-testid="autoscaler-words"]').textContent`))
	require.Contains(t, words, "Prefill: in ")
	require.Contains(t, words, "Decode: in ")
	require.Empty(t, b.problems(t), "console errors or CSP violations on the run page")
	checkPhoneAndA11y(t, b, runURL, "pools-lead")

	b.do(t, "press Run autoscalers vs fixed pools", chromedp.Click(chromedp.CSS(`[data-testid="counterpart-autoscaler"]`)))
	b.waitFor(t, "the pair's compare page with both runs done", `location.pathname === '/compare' &&
		!document.querySelector('[data-testid="compare-waiting"]') && !!document.querySelector('[data-testid="compare-pool-verdicts"]') && `+chartsReady, 120*time.Second)
	poolWords := flat(browserEval[string](t, b, `document.querySelector('[data-testid="compare-pool-verdicts"]').textContent`))
	require.Contains(t, poolWords, "Prefill: peak ")
	require.Contains(t, poolWords, "Decode: peak ")
	require.Contains(t, poolWords, "against a fixed pool")
	compareURL := browserEval[string](t, b, `location.href`)
	require.Empty(t, b.problems(t), "console errors or CSP violations on the compare page")
	checkPhoneAndA11y(t, b, compareURL, "pools-compare")
}
