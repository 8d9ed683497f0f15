//go:build browser

package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserCalibrate uploads an FPM file on the Calibrate page, sees the fitted coefficients
// and the measured-against-predicted chart, then uses the timing in a run.
func TestBrowserCalibrate(t *testing.T) {
	b := newBrowser(t)
	ts := startApp(t)
	fpm := filepath.Join(t.TempDir(), "h200-fpm.jsonl")
	require.NoError(t, os.WriteFile(fpm, []byte(fpmLines(150)), 0o600))

	b.do(t, "open the Calibrate page", chromedp.Navigate(ts.URL+"/calibrations"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="calibrate-form"]`)))
	b.do(t, "choose the FPM file", chromedp.SetUploadFiles(chromedp.CSS(`#fpm-file`), []string{fpm}))
	b.do(t, "fit", chromedp.Click(chromedp.CSS(`[data-testid="calibrate-submit"]`)))
	b.waitFor(t, "the calibration page with its chart drawn", `location.pathname.indexOf('/calibrations/') === 0 &&
		document.readyState === 'complete' && !!document.querySelector('[data-chart-ready="true"]')`, 30*time.Second)
	requireChartsDrawn(t, b, 1)
	coef := func(key string) string {
		return browserEval[string](t, b, `document.querySelector('[data-testid="coef-`+key+`"]').textContent`)
	}
	require.Equal(t, "2", coef("prefill_ms"))
	require.Equal(t, "65", coef("prefill_ms_per_1k_tokens"))
	require.Equal(t, "8", coef("decode_ms"))
	require.Equal(t, "0.05", coef("decode_ms_per_seq"))
	require.Equal(t, "0.03", coef("decode_ms_per_1k_kv_tokens"))
	b.screenshot(t, "calibration")
	require.Empty(t, b.problems(t), "console errors or CSP violations on the calibration page")

	b.do(t, "use this timing", chromedp.Click(chromedp.CSS(`[data-testid="use-timing"]`)))
	b.waitFor(t, "the form prefilled with the timing", `location.search.indexOf('calibration=') >= 0 &&
		document.readyState === 'complete' && !!document.querySelector('[data-testid="run"]')`, 20*time.Second)
	require.Equal(t, "0.03", browserEval[string](t, b, `document.querySelector('[data-testid="field-fleet.timing.decode_ms_per_1k_kv_tokens"]').value`))
	// A small fleet keeps the run short.
	b.do(t, "set a small fleet", chromedp.SetValue(chromedp.CSS(`[data-testid="field-fleet.workers"]`), "2"))
	b.do(t, "run", chromedp.Click(chromedp.CSS(`[data-testid="run"]`)))
	b.waitFor(t, "the run page, done", `location.pathname.indexOf('/runs/') === 0 &&
		document.readyState === 'complete' && !!document.querySelector('[data-testid="charts"]')`, 90*time.Second)
	path := browserEval[string](t, b, `location.pathname`)
	resp, err := http.Get(ts.URL + strings.TrimSuffix(path, "/") + "/scenario.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	var sc struct {
		Fleet struct {
			Timing map[string]float64 `json:"timing"`
		} `json:"fleet"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sc))
	require.Equal(t, map[string]float64{"prefill_ms": 2, "prefill_ms_per_1k_tokens": 65, "decode_ms": 8,
		"decode_ms_per_seq": 0.05, "decode_ms_per_1k_kv_tokens": 0.03}, sc.Fleet.Timing)
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
