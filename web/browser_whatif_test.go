//go:build browser

package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserSweep starts a sweep from the scenario form ("Sweep a field"), watches its chart
// fill in on the sweep page, and opens two of its points in the compare page.
func TestBrowserSweep(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)

	b.do(t, "open the form with the incident preset",
		chromedp.Navigate(app.URL+"/?preset=incident"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sweep-a-field"]`)))
	b.do(t, "press Sweep a field", chromedp.Click(chromedp.CSS(`[data-testid="sweep-a-field"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-sweep"]`)))
	scenario := browserEval[string](t, b, `document.querySelector('[data-testid="whatif-scenario"]').value`)
	require.Contains(t, scenario, `"name":"Queued hint during drain"`, "the form's scenario is carried over")
	// The prefilled axes: KVCR bandwidth 5, 10, 20, 40 × guard on/off = 8 points.
	b.do(t, "start the sweep", chromedp.Click(chromedp.CSS(`[data-testid="start-sweep"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sweep-chart`)))
	require.True(t, strings.Contains(browserEval[string](t, b, `location.pathname`), "/sweeps/"))

	b.waitFor(t, "the chart to fill in with all 8 points",
		`(function () { var el = document.getElementById('sweep-chart');
		  return el.getAttribute('data-chart-ready') === 'true' && el.getAttribute('data-points-drawn') === '8' &&
		    !!el.querySelector('canvas') && document.getElementById('sweep').getAttribute('data-status') === 'done'; })()`,
		30*time.Second)
	require.Equal(t, 8, browserEval[int](t, b, `document.querySelectorAll('[data-testid="sweep-row"]').length`))
	// Issue 35: the rows whatif.js draws read like the page's own (web/format's readable
	// figures), the exact values in the titles.
	live := browserEval[[]string](t, b, `Array.from(document.querySelectorAll('#sweep-rows td.num')).map(function (td) { return td.textContent.trim() + '|' + td.title; })`)
	resp, err := http.Get(app.URL + browserEval[string](t, b, `location.pathname`))
	require.NoError(t, err)
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var served []string
	doc.Find(`#sweep-rows td.num`).Each(func(_ int, td *goquery.Selection) {
		served = append(served, strings.TrimSpace(td.Text())+"|"+td.AttrOr("title", ""))
	})
	require.Len(t, served, 8*len(sweepTableKeys))
	require.Equal(t, served, live, "the live table reads like the served one")
	require.Equal(t, "8 of 8 points done", browserEval[string](t, b, `document.querySelector('[data-testid="sweep-progress"]').textContent`))
	series := browserEval[int](t, b, `echarts.getInstanceByDom(document.getElementById('sweep-chart')).getOption().series.length`)
	require.Equal(t, 2, series, "one line per value of the second axis (guard on, guard off)")

	// Limits shade the rows that meet them.
	b.do(t, "set a limit", chromedp.SendKeys(chromedp.CSS(`#sweep-limit-ttft`), "1000"))
	b.waitFor(t, "rows meeting the limit", `document.querySelectorAll('tr.meets-limits').length === 8`, 5*time.Second)

	// The heatmap needs two numeric axes; with one, the lines stay.
	b.screenshot(t, "sweep")
	// Issue 19: at a phone's width the sweep's table stacks into cards (rows drawn by the JS too).
	b.viewport(t, 390, 844)
	require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "sweep page at 390 px")
	require.Equal(t, "Status", browserEval[string](t, b, `document.querySelector('#sweep-rows tr [data-testid="status"]').parentNode.getAttribute('data-label')`))
	b.screenshot(t, "sweep-390")
	b.viewport(t, 1280, 900)

	b.do(t, "tick two points",
		chromedp.Click(chromedp.CSS(`#sweep-rows tr:nth-child(1) .sweep-pick`)),
		chromedp.Click(chromedp.CSS(`#sweep-rows tr:nth-child(2) .sweep-pick`)))
	href := browserEval[string](t, b, `document.getElementById('sweep-compare').getAttribute('href') || ''`)
	require.True(t, strings.HasPrefix(href, "/compare?a="), "compare link: %q", href)
	b.do(t, "open the compare page", chromedp.Click(chromedp.CSS(`#sweep-compare`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="compare-title"]`)))
	b.waitFor(t, "the comparison of two finished runs", `!!document.querySelector('[data-testid="compare-figures"]')`, 20*time.Second)
	require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="diffs"]').textContent`), "kvcr.reject_draining_sources")
	b.screenshot(t, "sweep-compare")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}

// TestBrowserPlan plans a scale-in from the form and reads the recommendation and its scatter.
func TestBrowserPlan(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	b.do(t, "open the form with the incident preset",
		chromedp.Navigate(app.URL+"/?preset=incident"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-a-scale-in"]`)))
	b.do(t, "press Plan a scale-in", chromedp.Click(chromedp.CSS(`[data-testid="plan-a-scale-in"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-plan"]`)))
	require.Equal(t, "1", browserEval[string](t, b, `document.querySelector('[data-testid="plan-remove"]').value`))
	b.do(t, "plan it", chromedp.Click(chromedp.CSS(`[data-testid="start-plan"]`)))
	b.waitFor(t, "the recommendation and its scatter", `!!document.querySelector('[data-testid="recommendation"]') &&
		!!document.querySelector('#plan-scatter[data-chart-ready="true"]')`, 60*time.Second)
	requireChartsDrawn(t, b, 1)
	require.Greater(t, browserEval[int](t, b, `document.querySelectorAll('[data-testid="plan-candidate"]').length`), 1)
	b.screenshot(t, "plan")
	// Issue 28: at 1,280 px the ranked table fits, every column (the run's link last) in view.
	require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "plan page at 1,280 px")
	recommended := browserEval[string](t, b, `document.querySelector('[data-testid="open-run"]').getAttribute('href')`)
	// Issue 19: at a phone's width the candidates stack into cards, like the run page's tables.
	b.viewport(t, 390, 844)
	b.waitFor(t, "the page at 390 px", chartsReady, 10*time.Second)
	require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "plan page at 390 px")
	b.screenshot(t, "plan-390")
	// Issue 28: the recommended run's "Edit as new" form fits a phone without a sideways scroll.
	b.do(t, "open the recommended run's scenario as a new one", chromedp.Navigate(app.URL+"/?from="+strings.TrimPrefix(recommended, "/runs/")),
		chromedp.WaitVisible(chromedp.CSS(`form`)))
	require.LessOrEqual(t, browserEval[int](t, b, `document.documentElement.scrollWidth`), 390, "the edit-as-new form at 390 px")
	b.screenshot(t, "edit-as-new-390")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
