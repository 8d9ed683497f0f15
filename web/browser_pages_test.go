//go:build browser

package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// submitScenario posts a scenario to the running app and returns its run id.
func submitScenario(t *testing.T, base string, scenario []byte) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/runs", "application/json", bytes.NewReader(scenario))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, resp.StatusCode)
	var out struct{ ID string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.ID
}

// presetWith returns a preset's scenario JSON after edit changes it.
func presetWith(t *testing.T, key string, edit func(*sim.Scenario)) []byte {
	t.Helper()
	p, ok := sim.PresetByKey(key)
	require.True(t, ok)
	sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	if edit != nil {
		edit(sc)
	}
	return sc.CanonicalJSON()
}

func waitDone(t *testing.T, base, id string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(base + "/api/v1/runs/" + id)
		require.NoError(t, err)
		var out struct{ Status string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		if out.Status == "done" {
			return
		}
		require.NotContains(t, []string{"failed", "cancelled"}, out.Status, "run %s", id)
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after %v", id, out.Status, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chartsReady is true once every chart of the page is drawn.
const chartsReady = `document.readyState === 'complete' &&
	document.querySelectorAll('[data-echarts-option]').length === document.querySelectorAll('[data-chart-ready="true"]').length`

// sidewaysTables lists the tables (and the page itself) wider than their room: at a phone's
// width none may need a sideways scroll.
const sidewaysTables = `(function () {
  var out = [];
  // Open every chart's table: its numbers must fit too.
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  document.querySelectorAll('table').forEach(function (t) {
    var room = t.parentElement.clientWidth;
    if (t.scrollWidth > room + 1 || t.getBoundingClientRect().right > window.innerWidth + 1) {
      out.push((t.getAttribute('data-testid') || 'table') + ': ' + t.scrollWidth + ' px in ' + room + ' px');
    }
  });
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    out.push('page: ' + document.documentElement.scrollWidth + ' px wide in a ' + window.innerWidth + ' px window');
  }
  return out;
})()`

// viewport sets the window size of the tab (a phone is 390 × 844 CSS px).
func (b *browserSession) viewport(t *testing.T, w, h int64) {
	t.Helper()
	b.do(t, fmt.Sprintf("set the viewport to %d×%d", w, h), chromedp.EmulateViewport(w, h))
	// Let the page lay itself out again (charts resize on the resize event, a frame or more
	// later on a busy machine) before anything measures it; a page that stays too wide is
	// still caught by the caller's check.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if browserEval[bool](t, b, fmt.Sprintf(`window.innerWidth === %d && document.documentElement.scrollWidth <= %d`, w, w+1)) {
			return
		}
	}
}

// openPage navigates and waits for the page (and its charts) to be ready.
func (b *browserSession) openPage(t *testing.T, url string) {
	t.Helper()
	b.do(t, "open "+url, chromedp.Navigate(url))
	b.waitFor(t, "the page and its charts", chartsReady, 30*time.Second)
}

// axeSerious injects axe-core (vendored under static/vendor/axe-core, never served by the app)
// and returns its serious and critical violations on the current page.
func axeSerious(t *testing.T, b *browserSession) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "static", "vendor", "axe-core", "axe.min.js"))
	require.NoError(t, err, "static/vendor/fetch-axe.sh fetches axe-core")
	ctx, cancel := contextWithTimeout(b, 60*time.Second)
	defer cancel()
	_, err = chromedp.Run(ctx, chromedp.Evaluate[any](string(src)+"; true"))
	require.NoError(t, err, "inject axe-core")
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ['violations']}).then(function (r) {
	  return r.violations.filter(function (v) { return v.impact === 'serious' || v.impact === 'critical'; })
	    .map(function (v) { return v.id + ' (' + v.impact + '): ' + v.help + ' at ' + v.nodes.slice(0, 3).map(function (n) { return n.target.join(' '); }).join(' | '); });
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "run axe-core")
	return out
}

// TestBrowserResultPages walks the result pages as an operator would: compare two chosen runs
// from /runs, read a run page's scenario and follow its pair, then checks axe-core on the five
// main pages and that at 390 px no table needs a sideways scroll on run, compare and runs pages.
// Screenshots at 1280 and 390 px go to test-artifacts/.
func TestBrowserResultPages(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)

	// Two what-ifs that differ in the KVCR bandwidth, and the incident's guard pair.
	slow := submitScenario(t, ts.URL, presetWith(t, "incident", func(s *sim.Scenario) { s.KVCR.BandwidthGBps = 25; s.Name = "bandwidth what-if" }))
	fast := submitScenario(t, ts.URL, presetWith(t, "incident", func(s *sim.Scenario) { s.KVCR.BandwidthGBps = 100; s.Name = "bandwidth what-if (edit)" }))
	resp, err := http.Post(ts.URL+"/api/v1/pairs", "application/json",
		strings.NewReader(`{"kind": "guard", "scenario": `+string(presetWith(t, "incident", nil))+`}`))
	require.NoError(t, err)
	var pair struct {
		A, B struct{ ID string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&pair))
	resp.Body.Close()
	require.NotEmpty(t, pair.A.ID, "the pair API answers with both runs")
	for _, id := range []string{slow, fast, pair.A.ID, pair.B.ID} {
		waitDone(t, ts.URL, id, 60*time.Second)
	}

	// Compare two chosen runs from /runs.
	b.viewport(t, 1280, 900)
	b.openPage(t, ts.URL+"/runs")
	b.do(t, "tick two runs and press Compare selected",
		chromedp.Click(chromedp.CSS(`[data-testid="pick-`+slow+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="pick-`+fast+`"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="compare-selected"]`)))
	b.waitFor(t, "the compare page", `location.pathname === '/compare' && !!document.querySelector('[data-testid="verdicts"]') && `+chartsReady, 30*time.Second)
	title := browserEval[string](t, b, `document.querySelector('[data-testid="compare-differs"]').textContent`)
	require.Contains(t, title, "kvcr.bandwidth_gbps", "the sides are named by what differs")
	verdicts := browserEval[string](t, b, `document.querySelector('[data-testid="verdicts"]').textContent`)
	require.Contains(t, verdicts, "4× the bandwidth did not move the latest removal deadline", "A is the older run, B the newer")
	b.screenshot(t, "pages-compare-1280")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
	compareURL := browserEval[string](t, b, `location.href`)

	// A run page shows its scenario and links to its pair.
	b.openPage(t, ts.URL+"/runs/"+pair.B.ID)
	scenario := browserEval[string](t, b, `document.querySelector('[data-testid="scenario"]').innerText`)
	for _, want := range []string{"Fleet", "Timing", "KVCR", "Router", "Schedule", "Workload", "Guard: reject draining sources"} {
		require.Contains(t, scenario, want)
	}
	require.NotEmpty(t, browserEval[string](t, b, `document.querySelector('[data-testid="cards"]').innerText`))
	b.screenshot(t, "pages-run-1280")
	b.do(t, "follow the link to the pair", chromedp.Click(chromedp.CSS(`[data-testid="related-link"]`)))
	b.waitFor(t, "the pair's compare page", `location.pathname === '/compare' && location.search.indexOf('`+pair.B.ID+`') >= 0 && `+chartsReady, 30*time.Second)
	pairVerdicts := browserEval[string](t, b, `document.querySelector('[data-testid="verdicts"]').textContent`)
	require.Contains(t, pairVerdicts, "With the guard off, worker 1 is removed 9.55 ms later (77 → 86.6 ms)")
	b.screenshot(t, "pages-pair-1280")

	// axe-core: no serious or critical violation on the five pages.
	pages := map[string]string{"form": "/", "run": "/runs/" + pair.B.ID, "compare": strings.TrimPrefix(compareURL, ts.URL),
		"runs": "/runs", "traces": "/traces"}
	for name, path := range pages {
		b.openPage(t, ts.URL+path)
		require.Empty(t, axeSerious(t, b), "axe-core on the %s page (%s)", name, path)
	}

	// Phones and laptops: every number in view without a sideways scroll.
	for _, width := range []int64{390, 1280} {
		b.viewport(t, width, 844)
		for _, name := range []string{"run", "compare", "runs"} {
			b.openPage(t, ts.URL+pages[name])
			require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "%s page at %d px", name, width)
			b.screenshot(t, fmt.Sprintf("pages-%s-%d", name, width))
			if width == 390 {
				b.viewportShots(t, fmt.Sprintf("pages-%s-%d", name, width), 3)
			}
		}
	}
}

// TestBrowserLargeFleetPage runs the large-fleet preset once (2,048 workers, 256 drained,
// 100,000 requests) and checks that its page stays small: aggregate drain charts instead of a
// row per worker, a paginated workers table, under 3,000 DOM nodes.
func TestBrowserLargeFleetPage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the large-fleet preset takes a while to simulate")
	}
	b := newBrowser(t)
	ts := startApp(t)
	id := submitScenario(t, ts.URL, presetWith(t, "large-fleet", nil))
	waitDone(t, ts.URL, id, 10*time.Minute)
	b.viewport(t, 1280, 900)
	b.openPage(t, ts.URL+"/runs/"+id)
	nodes := browserEval[int](t, b, `(function () { var n = 0, w = document.createTreeWalker(document, NodeFilter.SHOW_ALL); while (w.nextNode()) { n++; } return n; })()`)
	elements := browserEval[int](t, b, `document.getElementsByTagName('*').length`)
	t.Logf("large-fleet page: %d DOM nodes (%d elements)", nodes, elements)
	require.Less(t, nodes, 3000, "DOM nodes of the large-fleet page")
	require.Equal(t, 1, browserEval[int](t, b, `document.querySelectorAll('[data-testid="large-drain-note"]').length`))
	require.Zero(t, browserEval[int](t, b, `document.querySelectorAll('#removal-timeline').length`), "no row-per-worker timeline")
	require.Equal(t, workersPerPage, browserEval[int](t, b, `document.querySelectorAll('[data-testid="workers-table"] tbody tr').length`))
	b.screenshot(t, "pages-large-fleet-1280")
	b.do(t, "next page of workers", chromedp.Click(chromedp.CSS(`[data-testid="workers-pager-next"]`)))
	b.waitFor(t, "page 2 of the workers", `location.search.indexOf('wpage=2') >= 0 && `+chartsReady, 30*time.Second)
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}

func contextWithTimeout(b *browserSession, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, d)
}

// viewportShots saves what a phone shows: n screens from the top of the page.
func (b *browserSession) viewportShots(t *testing.T, name string, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := contextWithTimeout(b, 30*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Evaluate[any](fmt.Sprintf("window.scrollTo(0, %d * window.innerHeight); true", i)))
		require.NoError(t, err)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		require.NoError(t, err)
		path := filepath.Join("..", "test-artifacts", fmt.Sprintf("%s-screen%d.png", name, i+1))
		require.NoError(t, os.WriteFile(path, png, 0o644))
	}
}
