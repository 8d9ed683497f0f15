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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/templates"
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
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })

	b := &browserSession{ctx: ctx}
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchCSPViolations})
	require.NoError(t, err, "starting the browser")
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

// run runs steps with a time limit, failing the test with the step's description.
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
	a, other := chartsFixture(), chartsFixture()
	other.Summary.DurationMS = 95
	other.Workers[3].RemovedAtMS = msPtr(80)
	cases := []struct {
		name   string
		charts []templates.Chart
	}{
		{"charts-run", runCharts(a)},
		{"charts-compare", compareCharts(a, other, "hinted", "no-hint")},
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
