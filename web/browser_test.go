//go:build browser

// Browser tests: real Chromium (headless shell) against real pages, under the same strict CSP
// the app serves. Run with
//
//	go test -tags browser -run Browser -v ./web/
//
// They need /usr/bin/chromium-headless-shell (apt-get install -y chromium-headless-shell) and
// skip without it, except when CI=true, where a missing browser fails the run. Screenshots go
// to test-artifacts/ at the repository root.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
)

const browserPath = "/usr/bin/chromium-headless-shell"

// watchCSPViolations runs in every document before its own scripts: a CSP violation is
// recorded where the test can read it, besides showing up in the console.
const watchCSPViolations = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`

// browserSession is one headless tab with everything the page logs collected.
type browserSession struct {
	ctx context.Context
	mu  sync.Mutex
	log []chromedp.ConsoleMessage
}

func newBrowser(t *testing.T) *browserSession {
	t.Helper()
	if _, err := os.Stat(browserPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("browser tests need %s (apt-get install -y chromium-headless-shell): %v", browserPath, err)
		}
		t.Skipf("no browser at %s; install chromium-headless-shell to run browser tests", browserPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath),
		// The machines have no network: keep Chromium from trying to reach anything.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.WindowSize(1280, 900),
	)
	// Chromium now and then crashes while starting on a busy machine (a segmentation fault
	// before its first page, seen in CI): a start is tried three times before the test fails.
	var ctx context.Context
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		var cancel context.CancelFunc
		ctx, cancel = chromedp.NewContext(allocCtx)
		_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchCSPViolations})
		if err == nil {
			t.Cleanup(func() { cancel(); cancelAlloc() })
			break
		}
		cancel()
		cancelAlloc()
		t.Logf("starting the browser, attempt %d: %v", attempt, err)
	}
	require.NoError(t, err, "starting the browser")
	b := &browserSession{ctx: ctx}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.log = append(b.log, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// do runs steps with a time limit, failing the test with the step's description.
func (b *browserSession) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...), what)
}

func browserEval[T any](t *testing.T, b *browserSession, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluating %s", expr)
	return v
}

// problems returns console errors, uncaught exceptions and CSP violations seen so far.
func (b *browserSession) problems(t *testing.T) []string {
	t.Helper()
	var out []string
	b.mu.Lock()
	for _, m := range b.log {
		if m.Type == chromedp.ConsoleError || m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
			out = append(out, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line+1))
		}
	}
	b.mu.Unlock()
	for _, v := range browserEval[[]string](t, b, `window.__cspViolations || []`) {
		out = append(out, "CSP violation: "+v)
	}
	return out
}

// screenshot saves the whole page under test-artifacts/ (git-ignored) and returns its path.
func (b *browserSession) screenshot(t *testing.T, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err, "screenshot %s", name)
	dir := filepath.Join("..", "test-artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
	return path
}

// chartState reports, for every chart container on the page, whether charts.js drew it onto a
// canvas of a real size.
const chartState = `Array.from(document.querySelectorAll('[data-echarts-option]')).map(function (el) {
  var c = el.querySelector('canvas');
  return el.id + ':' + (el.getAttribute('data-chart-ready') === 'true' ? 'ready' : 'not-ready') + ':' +
    (c && c.width > 0 && c.height > 0 ? 'canvas' : 'no-canvas');
})`

func requireChartsDrawn(t *testing.T, b *browserSession, wantAtLeast int) {
	t.Helper()
	state := browserEval[[]string](t, b, chartState)
	require.GreaterOrEqual(t, len(state), wantAtLeast, "charts on the page: %v", state)
	for _, s := range state {
		require.True(t, strings.HasSuffix(s, ":ready:canvas"), "chart not drawn: %s (all: %v)", s, state)
	}
}

// chartPage is a bare page holding the given charts, served with the app's strict CSP.
func chartPage(t *testing.T, title string, cs []templates.Chart) http.Handler {
	t.Helper()
	var body bytes.Buffer
	for _, c := range cs {
		require.NoError(t, templates.ChartBlock(c).Render(context.Background(), &body))
	}
	static := http.StripPrefix("/static/", http.FileServer(http.Dir(filepath.Join("..", "static"))))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") {
			static.ServeHTTP(w, r)
			return
		}
		nonceBytes := make([]byte, 16)
		_, _ = rand.Read(nonceBytes)
		nonce := base64.StdEncoding.EncodeToString(nonceBytes)
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-"+nonce+
			"'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title></head><body>
<h1>%s</h1>%s
<script src="/static/vendor/echarts/echarts.min.js" nonce="%s"></script>
<script src="/static/js/charts.js" nonce="%s"></script></body></html>`, title, title, body.String(), nonce, nonce)
	})
}

// TestBrowserChartsRender draws every chart of the hand-built fixture, single and compared,
// under the strict CSP: each gets a canvas, and nothing is logged or blocked.
func TestBrowserChartsRender(t *testing.T) {
	b := newBrowser(t)
	a, other := runtest.ChartsReport(), runtest.ChartsReport()
	other.Summary.DurationMS = 95
	other.Workers[3].RemovedAtMS = runtest.MS(80)
	cases := []struct {
		name   string
		charts []templates.Chart
	}{
		{"charts-run", charts.Run(a)},
		{"charts-compare", charts.Compare(a, other, "hinted", "no-hint")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(chartPage(t, tc.name, tc.charts))
			defer srv.Close()
			b.do(t, "open the chart page", chromedp.Navigate(srv.URL),
				chromedp.WaitReady(chromedp.CSS(`[data-chart-ready="true"]`)))
			requireChartsDrawn(t, b, len(tc.charts))
			b.screenshot(t, tc.name)
			require.Empty(t, b.problems(t), "console errors or CSP violations")
		})
	}
}

// waitFor evaluates a JavaScript condition until it is true, across page loads (an evaluation
// that fails while a page is navigating counts as "not yet").
func (b *browserSession) waitFor(t *testing.T, what, condition string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](condition))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.screenshot(t, "timeout")
			t.Fatalf("waited %v for %s (last error: %v)", limit, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startApp runs the real server on a temporary database.
func startApp(t *testing.T) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "scalein.db"))
	require.NoError(t, err)
	app, err := newApp(runs.Config{Store: st, Workers: 2}, 0)
	require.NoError(t, err)
	require.NoError(t, app.startRuns(ctx))
	ts := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		ts.Close()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = app.stopRuns(sctx)
		_ = st.Close()
	})
	return ts
}

func fetchReport(t *testing.T, base, id string) *sim.Report {
	t.Helper()
	resp, err := http.Get(base + "/runs/" + id + "/report.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "report.json of %s", id)
	var rep sim.Report
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
	return &rep
}

// leadingNumber reads the number a formatted cell starts with ("1 234.5 ms" → 1234.5); ok is
// false for a format.Dash or text.
func leadingNumber(cell string) (float64, bool) {
	cell = strings.NewReplacer("\u202f", "", "\u00a0", "", ",", "").Replace(strings.TrimSpace(cell))
	end := 0
	for end < len(cell) && strings.ContainsRune("+-.0123456789eE", rune(cell[end])) {
		end++
	}
	v, err := strconv.ParseFloat(cell[:end], 64)
	return v, err == nil
}

// requireFigureCell checks a headline cell against the report's figure: the same number to
// display precision, or a format.Dash where the figure does not apply.
func requireFigureCell(t *testing.T, where string, f sim.Figure, cell string) {
	t.Helper()
	got, ok := leadingNumber(cell)
	if f.Value == nil {
		require.False(t, ok, "%s %s: report has no value but the page shows %q", where, f.Key, cell)
		return
	}
	require.True(t, ok, "%s %s: page shows %q, report has %v", where, f.Key, cell, *f.Value)
	require.InDelta(t, *f.Value, got, 1e-6*math.Max(1, math.Abs(*f.Value)), "%s %s: page shows %q", where, f.Key, cell)
}

// TestBrowserIncidentCompare is the SRE's path through the app: open the form, choose the
// incident preset, run hinted vs no-hint, and read the compare page and a run page. Every
// chart must be drawn, nothing logged as an error or blocked by the CSP, and the headline
// figures must be the runs' report.json figures.
func TestBrowserIncidentCompare(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	problems := func(page string) {
		t.Helper()
		require.Empty(t, b.problems(t), "console errors or CSP violations on the %s page", page)
	}

	b.do(t, "open the form", chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="preset-incident"]`)))
	b.do(t, "choose the incident preset", chromedp.Click(chromedp.CSS(`[data-testid="preset-incident"]`)))
	b.waitFor(t, "the form with the incident preset", `location.search.indexOf('preset=incident') >= 0 &&
		document.readyState === 'complete' && !!document.querySelector('[data-testid="run-pair-hints"]')`, 20*time.Second)
	b.screenshot(t, "form")
	problems("form")

	b.do(t, "press Run hinted vs no-hint", chromedp.Click(chromedp.CSS(`[data-testid="run-pair-hints"]`)))
	b.waitFor(t, "the compare page with both runs done and charts drawn", `location.pathname === '/compare' &&
		document.readyState === 'complete' && !document.querySelector('[data-testid="compare-waiting"]') &&
		document.querySelectorAll('[data-echarts-option]').length > 0 &&
		document.querySelectorAll('[data-echarts-option]').length === document.querySelectorAll('[data-chart-ready="true"]').length`,
		90*time.Second)
	requireChartsDrawn(t, b, 5)
	b.screenshot(t, "compare")
	problems("compare")

	loc, err := url.Parse(browserEval[string](t, b, `location.href`))
	require.NoError(t, err)
	idA, idB := loc.Query().Get("a"), loc.Query().Get("b")
	require.NotEmpty(t, idA)
	require.NotEmpty(t, idB)
	repA, repB := fetchReport(t, ts.URL, idA), fetchReport(t, ts.URL, idB)
	cellsOf := func(key string) []string {
		return browserEval[[]string](t, b, `Array.from(document.querySelectorAll('[data-testid="cmp-figure-`+key+`"] td')).map(function (td) { return td.dataset.exact || td.textContent; })`)
	}
	figsB := sim.Headline(repB)
	for i, f := range sim.Headline(repA) {
		cells := cellsOf(f.Key)
		require.GreaterOrEqual(t, len(cells), 2, "compare row for %s", f.Key)
		requireFigureCell(t, "compare A", f, cells[0])
		requireFigureCell(t, "compare B", figsB[i], cells[1])
	}

	b.do(t, "open run A", chromedp.Navigate(ts.URL+"/runs/"+idA))
	b.waitFor(t, "run A's charts", `document.readyState === 'complete' && document.querySelectorAll('[data-echarts-option]').length > 0 &&
		document.querySelectorAll('[data-echarts-option]').length === document.querySelectorAll('[data-chart-ready="true"]').length`, 30*time.Second)
	requireChartsDrawn(t, b, 5)
	b.screenshot(t, "run")
	problems("run")
	for _, f := range sim.Headline(repA) {
		cell := browserEval[string](t, b, `(function () { var td = document.querySelector('[data-testid="figure-`+f.Key+`"] td'); return td ? (td.title || td.textContent) : ''; })()`)
		requireFigureCell(t, "run A", f, cell)
	}
}

// TestBrowserSeesCSPViolations proves the watch works: a page breaking the CSP (an inline
// script without the nonce, a style attribute) and logging an error must be reported, or the
// clean results above would mean nothing.
func TestBrowserSeesCSPViolations(t *testing.T) {
	b := newBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'")
		fmt.Fprint(w, `<!doctype html><p style="color:red">x</p><script>console.error("inline ran")</script>`)
	}))
	defer srv.Close()
	b.do(t, "open the offending page", chromedp.Navigate(srv.URL))
	b.waitFor(t, "the violations to be recorded", `(window.__cspViolations || []).length >= 2`, 10*time.Second)
	got := strings.Join(b.problems(t), "\n")
	require.Contains(t, got, "script-src")
	require.Contains(t, got, "style-src")
	require.NotContains(t, got, "inline ran", "the inline script must not have run")
}
