//go:build browser

package web

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/web/format"
)

// seriesOf lists the series names of the ECharts instance drawn in the element with this id.
func seriesOf(t *testing.T, b *browserSession, id string) []string {
	t.Helper()
	return browserEval[[]string](t, b, `(function () {
	  var inst = echarts.getInstanceByDom(document.getElementById(`+fmt.Sprintf("%q", id)+`));
	  if (!inst) { return []; }
	  return (inst.getOption().series || []).filter(function (s) { return (s.data || []).length > 0; }).map(function (s) { return s.name; });
	})()`)
}

// setField types a value into the form field with this id.
func setField(t *testing.T, b *browserSession, id, value string) {
	t.Helper()
	b.do(t, "type into "+id, chromedp.SetValue(chromedp.CSS(`[id="`+id+`"]`), value))
}

// checkPhoneAndA11y measures the current page at a laptop's and a phone's width: no table (nor
// the page) needs a sideways scroll, no serious axe-core violation, and screenshots of both.
func checkPhoneAndA11y(t *testing.T, b *browserSession, url, name string) {
	t.Helper()
	for _, width := range []int64{1280, 390} {
		b.viewport(t, width, 844)
		b.openPage(t, url)
		b.screenshot(t, fmt.Sprintf("%s-%d", name, width))
		require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "%s page at %d px", name, width)
		b.viewportShots(t, fmt.Sprintf("%s-%d", name, width), 6)
	}
	b.viewport(t, 1280, 900)
	b.openPage(t, url)
	require.Empty(t, axeSerious(t, b), "axe-core on the %s page", name)
}

// TestBrowserAutoscalerRun is issue 17's path through the app: on the form choose the autoscaler,
// fill the rate stages with a day-shaped load from the helper, set the autoscaler and run; the run
// page draws the fleet chart with its series, the decisions table pages and filters to the
// decisions that changed the fleet; then the autoscaler pair's compare page says what the
// autoscaler saved and what it cost, with both fleets (and their starting workers) on one chart.
func TestBrowserAutoscalerRun(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	b.viewport(t, 1280, 900)

	b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`select[data-scale-in-mode]`)))
	b.waitFor(t, "app.js to run", `document.readyState === 'complete'`, 10*time.Second)
	b.do(t, "choose the autoscaler", chromedp.SetValue(chromedp.CSS(`select[data-scale-in-mode]`), "autoscaler"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('select[data-scale-in-mode]').dispatchEvent(new Event('change', {bubbles: true}))`))
	require.True(t, browserEval[bool](t, b, `document.querySelector('[data-scale-in="schedule"]').hidden && !document.querySelector('[data-scale-in="autoscaler"]').hidden`),
		"the autoscaler's fields replace the schedule")

	// The day helper: 24 stages of 10 s from 1 to 10 sessions/s.
	setField(t, b, "day_trough_per_s", "1")
	setField(t, b, "day_peak_per_s", "10")
	setField(t, b, "day_stage_ms", "10000")
	setField(t, b, "day_stages", "24")
	b.do(t, "fill the rate stages with a day", chromedp.Click(chromedp.CSS(`[data-testid="fill-day"]`)))
	b.waitFor(t, "the form back with its stages", `document.readyState === 'complete' && !!document.querySelector('[data-testid="rate-preview"]')`, 20*time.Second)
	stages := strings.Split(strings.TrimSpace(browserEval[string](t, b, `document.getElementById('workload.sessions.rate_stages').value`)), "\n")
	require.Len(t, stages, 24, "one stage an hour")
	require.Equal(t, "10000, 1", strings.TrimSpace(stages[4]), "the trough at 04:00")
	require.Equal(t, "10000, 10", strings.TrimSpace(stages[16]), "the peak at 16:00")
	require.Equal(t, "autoscaler", browserEval[string](t, b, `document.querySelector('select[data-scale-in-mode]').value`), "the choice survives the helper")
	b.screenshot(t, "autoscaler-form-1280")
	b.chartShot(t, "hpa_manifest", "autoscaler-form-hpa-import-1280")

	// A behavior with two scale-down policies, built in the form: the first row, then "Add
	// policy" (a submit that comes back with one more row), then the second.
	b.do(t, "choose a behavior", chromedp.SetValue(chromedp.CSS(`[id="autoscaler.behavior"]`), "set"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('autoscaler.behavior').dispatchEvent(new Event('change', {bubbles: true}))`))
	setField(t, b, "autoscaler.behavior.scale_down.window_ms", "20000")
	setField(t, b, "autoscaler.behavior.scale_down.policies[0].type", "pods")
	setField(t, b, "autoscaler.behavior.scale_down.policies[0].value", "2")
	setField(t, b, "autoscaler.behavior.scale_down.policies[0].period_ms", "10000")
	b.do(t, "add a scale-down policy", chromedp.Click(chromedp.CSS(`[data-testid="add-policy-scale_down"]`)))
	b.waitFor(t, "the form back with a second policy row", `document.readyState === 'complete' && !!document.querySelector('[data-testid="policy-scale_down-1"]')`, 20*time.Second)
	require.Equal(t, "At most 2 workers removed per 10 s.", strings.TrimSpace(browserEval[string](t, b, `document.querySelector('[data-testid="policy-help-scale_down-0"]').textContent`)))
	setField(t, b, "autoscaler.behavior.scale_down.policies[1].type", "percent")
	setField(t, b, "autoscaler.behavior.scale_down.policies[1].value", "50")
	setField(t, b, "autoscaler.behavior.scale_down.policies[1].period_ms", "20000")
	require.Equal(t, "autoscaler", browserEval[string](t, b, `document.querySelector('select[data-scale-in-mode]').value`), "the choice survives adding a policy")
	b.chartShot(t, "autoscaler.behavior", "autoscaler-form-behavior-1280")

	// A decision every 5 s over 240 s and what follows: about 50 decisions, two pages of the table.
	for id, v := range map[string]string{
		"workload.sessions.count": "2500", "fleet.workers": "8",
		"autoscaler.interval_ms": "5000", "autoscaler.target": "8", "autoscaler.min_workers": "2", "autoscaler.max_workers": "12",
		"autoscaler.startup_ms": "10000", "autoscaler.grace_ms": "30000",
	} {
		setField(t, b, id, v)
	}
	require.Empty(t, b.problems(t), "console errors or CSP violations on the form")
	b.do(t, "press Run", chromedp.Click(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "the run page with its fleet chart drawn", `location.pathname.indexOf('/runs/') === 0 &&
		!!document.querySelector('#fleet[data-chart-ready="true"]') && `+chartsReady, 120*time.Second)
	runURL := browserEval[string](t, b, `location.origin + location.pathname`)
	id := strings.TrimPrefix(runURL, ts.URL+"/runs/")
	rep := fetchReport(t, ts.URL, id)
	require.NotNil(t, rep.Autoscaler, "the run has an autoscaler")
	require.Contains(t, browserEval[string](t, b, `document.body.textContent`), "2 workers removed per 10 s", "the run's summary names the behavior")
	n := len(rep.Autoscaler.Decisions)
	require.Greater(t, n, decisionsPerPage, "two pages of decisions")
	require.LessOrEqual(t, n, 2*decisionsPerPage, "two pages of decisions")

	b.chartShot(t, "fleet", "autoscaler-run-fleet-1280")
	series := seriesOf(t, b, "fleet")
	for _, want := range []string{"active", "load per worker", "target band (low)", "target band (high)", "decision that changed the fleet"} {
		require.Contains(t, series, want, "fleet chart series: %v", series)
	}
	require.Empty(t, b.problems(t), "console errors or CSP violations on the run page")

	// The decisions table: page 1 of 2, then page 2, then only the changes.
	rows := `document.querySelectorAll('[data-testid="decisions-table"] tbody tr').length`
	require.Equal(t, decisionsPerPage, browserEval[int](t, b, rows))
	b.do(t, "next page of decisions", chromedp.Click(chromedp.CSS(`[data-testid="decisions-pager-next"]`)))
	b.waitFor(t, "page 2 of the decisions", `location.search.indexOf('dpage=2') >= 0 && `+chartsReady, 30*time.Second)
	require.Equal(t, n-decisionsPerPage, browserEval[int](t, b, rows))
	first := strings.TrimSpace(browserEval[string](t, b, `document.querySelector('[data-testid="decisions-table"] tbody tr td').textContent`))
	require.Equal(t, format.Clock{}.At(rep.Autoscaler.Decisions[decisionsPerPage].TMS), first, "page 2 starts at the 26th decision, read from the start")
	changes := 0
	for _, d := range rep.Autoscaler.Decisions {
		if decisionChanged(d) {
			changes++
		}
	}
	require.Positive(t, changes, "the day makes the autoscaler change the fleet")
	b.do(t, "show only the changes", chromedp.Click(chromedp.CSS(`[data-testid="decisions-filter"] a`)))
	b.waitFor(t, "the changes only", `location.search.indexOf('decisions=changes') >= 0 && location.search.indexOf('dpage') < 0 && `+chartsReady, 30*time.Second)
	require.Equal(t, min(changes, decisionsPerPage), browserEval[int](t, b, rows))
	workers := browserEval[[]string](t, b, `Array.from(document.querySelectorAll('[data-testid="decisions-table"] tbody tr td:last-child')).map(function (td) { return td.textContent; })`)
	for _, w := range workers {
		require.NotEqual(t, "—", strings.TrimSpace(w), "a decision that changed nothing is listed: %v", workers)
	}
	require.Empty(t, b.problems(t), "console errors or CSP violations on the decisions pages")
	checkPhoneAndA11y(t, b, runURL, "autoscaler-run")
	// The decisions table and the fleet chart at a laptop's and a phone's width (issue 28): the
	// load per worker has its unit, and nothing needs a sideways scroll (checked above).
	for _, width := range []int64{1280, 390} {
		b.viewport(t, width, 844)
		b.openPage(t, runURL)
		require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="decisions-table"] thead').textContent`), "Load per worker (requests, target 8)")
		b.elementShot(t, `[data-testid="decisions-table"]`, fmt.Sprintf("autoscaler-run-decisions-%d", width))
		b.elementShot(t, `#fleet`, fmt.Sprintf("autoscaler-run-fleet-%d", width))
		// The whole page (issue 34): the autoscaler's story right after the glance.
		b.screenshot(t, fmt.Sprintf("autoscaler-run-page-%d", width))
		order := browserEval[[]int](t, b, `['glance', 'autoscaler-words', 'fleet-chart-lead', 'autoscaler-section', 'drain-cards'].map(function (id) {
			var el = document.querySelector('[data-testid="' + id + '"]'); return el ? Math.round(el.getBoundingClientRect().top + window.scrollY) : -1; })`)
		require.True(t, slices.IsSorted(order) && order[0] >= 0, "glance, words, fleet chart, decisions, drains from the top: %v", order)
	}
	b.viewport(t, 1280, 900)

	// The autoscaler pair from the run page: the same scenario against a fixed fleet.
	b.openPage(t, runURL)
	b.do(t, "press Run autoscaler vs fixed fleet", chromedp.Click(chromedp.CSS(`[data-testid="counterpart-autoscaler"]`)))
	b.waitFor(t, "the pair's compare page with both runs done", `location.pathname === '/compare' &&
		!document.querySelector('[data-testid="compare-waiting"]') && !!document.querySelector('[data-testid="verdicts"]') && `+chartsReady, 120*time.Second)
	loc, err := url.Parse(browserEval[string](t, b, `location.href`))
	require.NoError(t, err)
	require.Equal(t, id, loc.Query().Get("a"), "A is the autoscaler run, the one already done")
	require.NotEmpty(t, loc.Query().Get("b"))
	compareURL := loc.String()
	verdicts := browserEval[string](t, b, `document.querySelector('[data-testid="verdicts"]').textContent`)
	require.Contains(t, verdicts, "The autoscaler saved ")
	require.Contains(t, verdicts, "TTFT p99")
	require.Contains(t, verdicts, "end-to-end p99")
	require.Contains(t, verdicts, "migration moved")
	require.Contains(t, verdicts, fmt.Sprintf("In %d decisions the autoscaler drained", n), "what the autoscaler did")
	require.NotContains(t, verdicts, "latest removal deadline", "a fixed fleet drains nothing: no deadline to compare")
	for _, key := range []string{"gpu_hours", "e2e_p99_ms", "requests_migrated"} {
		require.Equal(t, 1, browserEval[int](t, b, `document.querySelectorAll('[data-testid="card-`+key+`"]').length`), "card %s", key)
	}
	b.chartShot(t, "cmp-workers-over-time", "autoscaler-compare-fleets-1280")
	fleets := seriesOf(t, b, "cmp-workers-over-time")
	require.Contains(t, fleets, "autoscaler · starting", "both fleets on one chart with the starting workers: %v", fleets)
	require.Contains(t, fleets, "fixed fleet of 12 workers, the autoscaler's maximum · active", "the baseline is max_workers, not the starting 8: %v", fleets)
	require.Empty(t, b.problems(t), "console errors or CSP violations on the compare page")
	checkPhoneAndA11y(t, b, compareURL, "autoscaler-compare")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}

// chartShot saves what the window shows with the chart (or fieldset) holding this id scrolled to the top.
func (b *browserSession) chartShot(t *testing.T, id, name string) {
	t.Helper()
	ctx, cancel := contextWithTimeout(b, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.getElementById(`+fmt.Sprintf("%q", id)+`).closest('figure, fieldset').scrollIntoView(); true`))
	require.NoError(t, err)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "test-artifacts", name+".png"), png, 0o644))
}

// elementShot saves what the window shows with the element matching css scrolled to the top.
func (b *browserSession) elementShot(t *testing.T, css, name string) {
	t.Helper()
	ctx, cancel := contextWithTimeout(b, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.querySelector(`+fmt.Sprintf("%q", css)+`).scrollIntoView(); true`))
	require.NoError(t, err)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "test-artifacts", name+".png"), png, 0o644))
}
