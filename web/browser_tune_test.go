//go:build browser

package web

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserTunePlan tunes an autoscaler from the plan form: opened with the day preset (its
// tune goal chosen), the scenario box then holds the lull scenario (the day is now a real-time
// day of 1.4 M requests, too long for a browser test's plan); it reads the recommendation and
// its two charts, and downloads the HPA YAML the page links to.
func TestBrowserTunePlan(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	b.do(t, "open the plan form with the compressed-day preset",
		chromedp.Navigate(app.URL+"/plans/new?preset=autoscaler-day"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-plan"]`)))
	require.True(t, browserEval[bool](t, b, `document.querySelector('[data-testid="plan-goal-tune"]').checked`), "the tune goal is chosen for a scenario with an autoscaler")
	b.do(t, "put the lull scenario in the scenario box",
		chromedp.SetValue(chromedp.CSS(`[data-testid="whatif-scenario"]`), lullScenario(t)))
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
	require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="recommendation"]').textContent`), "fewer GPU-hours than a fixed fleet of 4 workers, the autoscaler's maximum")
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

// TestBrowserTunePlanFits reads a small tune plan (the lull scenario, fast to simulate) at
// 1,280 and 390 px: the ranked tables, their Manifest column included, fit without a sideways
// scroll, and so does the tune form at a phone's width (issue 28).
func TestBrowserTunePlanFits(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	body := planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "constraints": {"ttft_p99_ms": 200}, "search": {"max_runs": 6}`)
	resp, err := http.Post(app.URL+"/api/v1/plans", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	var created struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.NotEmpty(t, created.ID)
	path := "/plans/" + created.ID
	b.do(t, "open the tune plan", chromedp.Navigate(app.URL+path))
	b.waitFor(t, "the finished plan's table", `!!document.querySelector('[data-testid="plan-candidates"]')`, 60*time.Second)
	b.waitFor(t, "its charts", chartsReady, 20*time.Second)
	require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "tune plan at 1,280 px")
	require.True(t, browserEval[bool](t, b, `(function () {
		var c = document.querySelector('[data-testid="tune-manifest"]');
		return !!c && c.getBoundingClientRect().right <= window.innerWidth;
	})()`), "the Manifest column is in view at 1,280 px")
	b.screenshot(t, "tune-plan-fits-1280")
	b.viewport(t, 390, 844)
	b.waitFor(t, "the page at 390 px", chartsReady, 10*time.Second)
	require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "tune plan at 390 px")
	b.screenshot(t, "tune-plan-fits-390")

	b.do(t, "open the tune form", chromedp.Navigate(app.URL+"/plans/new?preset=autoscaler-day"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="start-plan"]`)))
	require.LessOrEqual(t, browserEval[int](t, b, `document.documentElement.scrollWidth`), 390, "the tune form at 390 px")
	require.False(t, browserEval[bool](t, b, `document.querySelector('[data-testid="plan-remove"]').offsetParent !== null`), "the drain's fields are hidden")
	b.do(t, "choose the drain goal", chromedp.Click(chromedp.CSS(`[data-testid="plan-goal-drain"]`)))
	require.True(t, browserEval[bool](t, b, `document.querySelector('[data-testid="plan-remove"]').offsetParent !== null`), "choosing drain shows its fields")
	require.True(t, browserEval[bool](t, b, `document.querySelector('[data-testid="tune-searched"]').offsetParent === null`), "and hides what a tune plan searches")
	require.Equal(t, "Plan a scale-in", browserEval[string](t, b, `[...document.querySelectorAll('main h1')].filter(h => h.offsetParent !== null).map(h => h.textContent.trim()).join('|')`), "the heading follows the goal")
	b.do(t, "choose the tune goal again", chromedp.Click(chromedp.CSS(`[data-testid="plan-goal-tune"]`)))
	require.Equal(t, "Tune the autoscaler", browserEval[string](t, b, `[...document.querySelectorAll('main h1')].filter(h => h.offsetParent !== null).map(h => h.textContent.trim()).join('|')`), "and back")
	b.do(t, "choose the drain goal", chromedp.Click(chromedp.CSS(`[data-testid="plan-goal-drain"]`)))
	b.screenshot(t, "plan-form-drain-390")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
