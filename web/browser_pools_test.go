//go:build browser

package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

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
