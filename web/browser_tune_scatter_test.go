//go:build browser

package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// scatterPixels lists every point of the tune scatter with its values and where echarts drew
// it (convertToPixel), series by series.
const scatterPixels = `(function () {
  var inst = echarts.getInstanceByDom(document.getElementById('tune-scatter'));
  var out = [];
  inst.getOption().series.forEach(function (s, i) {
    if (s.type !== 'scatter') { return; }
    (s.data || []).forEach(function (d) {
      var px = inst.convertToPixel({ seriesIndex: i }, d.value);
      out.push({ series: s.name, x: d.value[0], y: d.value[1], px: px[0], py: px[1], url: d.url || '' });
    });
  });
  return out;
})()`

type scatterPixel struct {
	Series string  `json:"series"`
	VX     float64 `json:"x"`
	VY     float64 `json:"y"`
	PX     float64 `json:"px"`
	PY     float64 `json:"py"`
	URL    string  `json:"url"`
}

// TestBrowserTuneScatter is issue 35's scatter of a tune plan against attainment, at a laptop's
// and a phone's width: points sit left to right by GPU-hours and bottom to top by attainment,
// the recommended one and your settings are drawn, no axis labels overlap, and a click on the
// recommended point opens its run.
func TestBrowserTuneScatter(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	require.NoError(t, os.MkdirAll(filepath.Join("..", "test-artifacts"), 0o755))
	var sc map[string]any
	require.NoError(t, json.Unmarshal([]byte(lullScenario(t)), &sc))
	sc["slo"] = map[string]any{"ttft_ms": 40}
	scenario, err := json.Marshal(sc)
	require.NoError(t, err)
	resp, err := http.Post(app.URL+"/api/v1/plans", "application/json",
		strings.NewReader(planBody(string(scenario), `"goal": {"tune": "autoscaler"}, "constraints": {"min_attainment": 0.9}, "search": {"max_runs": 6}`)))
	require.NoError(t, err)
	var created struct{ ID string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.NotEmpty(t, created.ID)
	var plan struct {
		Status      string
		Recommended *struct {
			RunID string `json:"run_id"`
		}
	}
	for deadline := time.Now().Add(2 * time.Minute); plan.Status != "done"; time.Sleep(200 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the plan is still %s", plan.Status)
		r, err := http.Get(app.URL + "/api/v1/plans/" + created.ID)
		require.NoError(t, err)
		require.NoError(t, json.NewDecoder(r.Body).Decode(&plan))
		r.Body.Close()
		require.NotContains(t, []string{"failed", "cancelled"}, plan.Status)
	}
	require.NotNil(t, plan.Recommended)

	for _, width := range []int64{1280, 390} {
		b.viewport(t, width, 900)
		b.openPage(t, app.URL+"/plans/"+created.ID)
		pts := browserEval[[]scatterPixel](t, b, scatterPixels)
		require.Greater(t, len(pts), 3, "points at %d px", width)
		series := map[string]int{}
		for _, p := range pts {
			series[p.Series]++
		}
		require.Equal(t, 1, series["Recommended"], "at %d px: %v", width, series)
		require.Equal(t, 1, series["Your settings"], "at %d px: %v", width, series)
		// Positions follow values: more GPU-hours further right, more attainment higher up.
		sort.Slice(pts, func(i, j int) bool { return pts[i].VX < pts[j].VX })
		for i := 1; i < len(pts); i++ {
			if pts[i].VX > pts[i-1].VX {
				require.Greater(t, pts[i].PX, pts[i-1].PX, "at %d px: %+v then %+v", width, pts[i-1], pts[i])
			}
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].VY < pts[j].VY })
		for i := 1; i < len(pts); i++ {
			if pts[i].VY > pts[i-1].VY {
				require.Less(t, pts[i].PY, pts[i-1].PY, "at %d px: %+v then %+v", width, pts[i-1], pts[i])
			}
		}
		labels := browserEval[[]axisLabel](t, b, drawnAxisLabels)
		require.Empty(t, overlappingLabels(labels), "axis labels at %d px", width)
		require.Empty(t, browserEval[[]string](t, b, sidewaysTables), "tune page at %d px", width)
		b.chartShot(t, "tune-scatter", fmt.Sprintf("tune-scatter-%d", width))
	}
	b.viewport(t, 1280, 900)
	b.openPage(t, app.URL+"/plans/"+created.ID)
	// A click on the recommended point opens its run.
	at := browserEval[[]float64](t, b, `(function () {
	  var el = document.getElementById('tune-scatter');
	  el.scrollIntoView({ block: 'center' });
	  var inst = echarts.getInstanceByDom(el);
	  var opt = inst.getOption(), i = opt.series.findIndex(function (s) { return s.name === 'Recommended'; });
	  var px = inst.convertToPixel({ seriesIndex: i }, opt.series[i].data[0].value);
	  var r = el.getBoundingClientRect();
	  return [r.left + px[0], r.top + px[1]];
	})()`)
	require.Len(t, at, 2)
	b.do(t, "click the recommended point", chromedp.MouseClickXY(at[0], at[1]))
	b.waitFor(t, "a run's page", `location.pathname.indexOf('/runs/') === 0 && document.readyState === 'complete'`, 10*time.Second)
	require.Equal(t, "/runs/"+plan.Recommended.RunID, browserEval[string](t, b, `location.pathname`), "the recommended run's page")
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
