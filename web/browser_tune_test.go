//go:build browser

package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserTunePlan tunes the compressed-day preset's autoscaler from the plan form, reads the
// recommendation and its two charts, and downloads the HPA YAML the page links to.
func TestBrowserTunePlan(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	b.do(t, "open the plan form with the compressed-day preset",
		chromedp.Navigate(app.URL+"/plans/new?preset=autoscaler-day"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-plan"]`)))
	require.True(t, browserEval[bool](t, b, `document.querySelector('[data-testid="plan-goal-tune"]').checked`), "the tune goal is chosen for a scenario with an autoscaler")
	b.do(t, "set the limits and a small budget",
		chromedp.SendKeys(chromedp.CSS(`[data-testid="plan-ttft"]`), "500"),
		chromedp.SetValue(chromedp.CSS(`input[name="max_runs"]`), "5"))
	b.do(t, "plan it", chromedp.Click(chromedp.CSS(`[data-testid="start-plan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-id"]`)))
	planPath := browserEval[string](t, b, `location.pathname`)
	t.Cleanup(func() {
		if t.Failed() {
			if resp, err := http.Get(app.URL + "/api/v1" + planPath); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("the plan as the API shows it: %.2000s", body)
			}
		}
	})
	b.waitFor(t, "the recommendation and its charts", `!!document.querySelector('[data-testid="recommendation"]') &&
		!!document.querySelector('#tune-scatter[data-chart-ready="true"]') && !!document.querySelector('#tune-fleet[data-chart-ready="true"]')`, 90*time.Second)
	requireChartsDrawn(t, b, 2)
	require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="recommendation"]').textContent`), "fewer GPU-hours than a fixed fleet of 8 workers")
	require.Greater(t, browserEval[int](t, b, `document.querySelectorAll('[data-testid="plan-candidate"]').length`), 1)

	got := browserEval[string](t, b, `(function () {
		var x = new XMLHttpRequest();
		x.open('GET', document.querySelector('[data-testid="download-hpa"]').getAttribute('href'), false);
		x.send();
		return x.status + '\n' + x.getResponseHeader('Content-Disposition') + '\n' + x.responseText;
	})()`)
	lines := strings.SplitN(got, "\n", 3)
	require.Len(t, lines, 3, got)
	require.Equal(t, "200", lines[0])
	require.Contains(t, lines[1], "attachment")
	require.Contains(t, lines[2], "kind: HorizontalPodAutoscaler")
	require.Contains(t, lines[2], "name: DYN_MIGRATION_LIMIT")
	b.screenshot(t, "tune-plan")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
