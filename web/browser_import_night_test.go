//go:build browser

package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// TestBrowserImportTuneDownload is the operator's way through with their own objects: paste an
// HPA and a commented KEDA ScaledObject into the form's import (the scenario small: the lull),
// import, choose the ScaledObject among the two and import it, run, open "Plan a scale-in" from the run page, choose the tune goal, plan, and download the
// manifest from the page's link: it is the user's file, names, comments and quoting kept, with
// no llm-workers placeholders, and the lines that differ are the changed fields alone.
func TestBrowserImportTuneDownload(t *testing.T) {
	keda, err := os.ReadFile("../sim/hpa/testdata/edit/commented-keda.yaml")
	require.NoError(t, err)
	b := newBrowser(t)
	app := startApp(t)

	b.do(t, "open the form", chromedp.Navigate(app.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bring-your-night"]`)))
	// The namespace's HPA and ScaledObject, as kubectl get hpa,scaledobject -o yaml gives both.
	stream := cpuHPA + "---\n" + string(keda)
	b.do(t, "a small scenario in the JSON box, the manifest pasted into the import",
		chromedp.SetValue(chromedp.CSS(`textarea[name="scenario_json"]`), lullScenario(t)),
		chromedp.SetValue(chromedp.CSS(`[data-testid="form-hpa-manifest"]`), stream))
	b.do(t, "import", chromedp.Click(chromedp.CSS(`[data-testid="form-hpa-import-button"]`)))
	b.waitFor(t, "the choice among the autoscalers", `!!document.querySelector('[data-testid="form-hpa-select"]')`, 20*time.Second)
	require.Equal(t, "vllm", browserEval[string](t, b, `document.querySelector('[data-testid="form-hpa-select"]').value`), "the first usable one was read")
	require.Equal(t, "4", browserEval[string](t, b, `document.querySelector('[name="autoscaler.max_workers"]').value`), "the HPA's maxReplicas")
	b.do(t, "choose the ScaledObject and import it", chromedp.SetValue(chromedp.CSS(`[data-testid="form-hpa-select"]`), "qwen-decode"),
		chromedp.Click(chromedp.CSS(`[data-testid="form-hpa-reimport"]`)))
	b.waitFor(t, "the ScaledObject imported", `((document.querySelector('[data-testid="form-hpa-problems"]') || {}).textContent || '').indexOf('"qwen-decode" was selected') >= 0`, 20*time.Second)
	require.Equal(t, "qwen-decode", browserEval[string](t, b, `document.querySelector('[data-testid="form-hpa-select"]').value`), "the one chosen is selected")
	require.NotEmpty(t, browserEval[string](t, b, `(document.querySelector('[data-testid="form-origin-key"]') || {}).value || ''`), "the import's origin rides on the form")
	require.Equal(t, "12", browserEval[string](t, b, `document.querySelector('[name="autoscaler.max_workers"]').value`), "maxReplicaCount")
	require.Equal(t, "", browserEval[string](t, b, `document.querySelector('textarea[name="scenario_json"]').value`), "the form's fields hold the scenario now")

	b.do(t, "run it", chromedp.Click(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "the run page", `location.pathname.indexOf('/runs/') === 0`, 20*time.Second)
	runPath := browserEval[string](t, b, `location.pathname`)
	require.Contains(t, browserEval[string](t, b, `location.search`), "origin=")
	waitDone(t, app.URL, strings.TrimPrefix(runPath, "/runs/"), 60*time.Second)
	b.do(t, "reload the finished run", chromedp.Reload())
	b.waitFor(t, "its Plan a scale-in", `!!document.querySelector('[data-testid="plan-this"]')`, 20*time.Second)
	require.Contains(t, browserEval[string](t, b, `document.querySelector('[data-testid="plan-this"]').getAttribute('href')`), "origin=")

	b.do(t, "open Plan a scale-in", chromedp.Click(chromedp.CSS(`[data-testid="plan-this"]`)))
	b.waitFor(t, "the plan form", `!!document.querySelector('[data-testid="start-plan"]')`, 20*time.Second)
	b.do(t, "choose the tune goal, a limit and a small budget",
		chromedp.Click(chromedp.CSS(`[data-testid="plan-goal-tune"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="plan-ttft"]`), "500"),
		chromedp.SetValue(chromedp.CSS(`input[name="max_runs"]`), "10"))
	b.do(t, "plan it", chromedp.Click(chromedp.CSS(`[data-testid="start-plan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="plan-id"]`)))
	b.waitFor(t, "the recommendation and its download", `!!document.querySelector('[data-testid="download-hpa"]')`, 120*time.Second)
	require.Equal(t, 0, browserEval[int](t, b, `document.querySelectorAll('[data-testid="hpa-placeholders"]').length`), "the plan knows the user's file")

	got := browserEval[string](t, b, `(function () {
		var a = document.querySelector('[data-testid="download-hpa"]');
		var x = new XMLHttpRequest();
		x.open('GET', a.getAttribute('href'), false);
		x.send();
		return x.status + '\n' + a.getAttribute('href') + '\n' + x.responseText;
	})()`)
	parts := strings.SplitN(got, "\n", 3)
	require.Len(t, parts, 3, got)
	require.Equal(t, "200", parts[0], got)
	require.Regexp(t, `^/plans/[a-z2-7]+/hpa\.yaml`, parts[1])
	out := parts[2]
	for _, want := range []string{
		"kind: ScaledObject",
		"  name: 'qwen-decode'   # the decode pool\n", // metadata.name, its quoting and comment
		"    name: qwen-decode  # Deployment\n",       // scaleTargetRef
		"  namespace: inference\n",
		"# Owner: inference team. Do not edit the query without checking the dashboard.\n",
		"    # the queue, summed over pods\n",
		`sum(vllm:num_requests_waiting{namespace="inference", pod=~"qwen-decode-.*"})`,
	} {
		require.Contains(t, out, want, "the download:\n%s", out)
	}
	require.NotContains(t, out, "llm-workers", "no placeholder names")

	// The file is the user's with only the changed fields changed: one header comment, then the
	// same lines, those that differ holding the same key and the same comment.
	header, body, ok := strings.Cut(out, "\n")
	require.True(t, ok)
	require.Contains(t, header, "Changed: ", "the plan changed settings (the budget finds better ones)")
	gotLines, wantLines := strings.Split(body, "\n"), strings.Split(stream, "\n")
	require.Len(t, gotLines, len(wantLines), "the download:\n%s", out)
	changed := 0
	for i := range wantLines {
		if gotLines[i] == wantLines[i] {
			continue
		}
		changed++
		key := func(l string) string { k, _, _ := strings.Cut(l, ":"); return k }
		comment := func(l string) string { _, c, _ := strings.Cut(l, "#"); return c }
		require.Equal(t, key(wantLines[i]), key(gotLines[i]), "line %d changed its key", i+1)
		require.Equal(t, comment(wantLines[i]), comment(gotLines[i]), "line %d lost its comment", i+1)
		require.Contains(t, header, strings.TrimSpace(key(wantLines[i])), "line %d changed but the header does not name it", i+1)
	}
	require.Positive(t, changed)
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}

// TestBrowserImportedNightShots is the run page of an imported 24-hour night: the day preset's
// scenario with the commented ScaledObject imported into it (through the API, as the form
// does) and a Prometheus-style start (starts_at), at 1,280 and 390 px. The page must fit a
// phone; the screenshots go to test-artifacts/ to be looked at.
func TestBrowserImportedNightShots(t *testing.T) {
	keda, err := os.ReadFile("../sim/hpa/testdata/edit/commented-keda.yaml")
	require.NoError(t, err)
	b := newBrowser(t)
	app := startApp(t)
	day := presetWith(t, "autoscaler-day", func(sc *sim.Scenario) {
		sc.Workload.Sessions.StartsAt = "2026-12-03T00:00:00Z"
	})
	body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(day), "manifest": string(keda)})
	require.NoError(t, err)
	resp, err := http.Post(app.URL+"/api/v1/hpa/import", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var imported struct {
		Scenario json.RawMessage `json:"scenario"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&imported))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := submitScenario(t, app.URL, imported.Scenario)
	waitDone(t, app.URL, id, 5*time.Minute)

	b.openPage(t, app.URL+"/runs/"+id)
	text := browserEval[string](t, b, `document.querySelector('main').innerText`)
	require.Contains(t, text, "00:15", "clock times from the start")
	b.screenshot(t, "imported-night-1280")
	b.viewport(t, 390, 844)
	b.waitFor(t, "the page at 390 px", chartsReady, 10*time.Second)
	require.LessOrEqual(t, browserEval[int](t, b, `document.documentElement.scrollWidth`), 391, "the page fits a phone")
	b.screenshot(t, "imported-night-390")
	b.viewportShots(t, "imported-night-390", 3)
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
