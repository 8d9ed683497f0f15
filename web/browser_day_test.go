//go:build browser

package web

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// axisLabel is one tick label echarts drew: the chart it belongs to, its text, its tick value
// (echarts names a label's element "label_" + its value) and its box in CSS px.
type axisLabel struct {
	Chart string    `json:"chart"`
	Text  string    `json:"text"`
	Value string    `json:"value"`
	Box   []float64 `json:"box"` // x, y, width, height
}

// drawnAxisLabels lists every visible axis tick label of every chart on the page, with its
// bounding box from echarts' own scene graph (the charts draw on a canvas, so the DOM has no
// element per label).
const drawnAxisLabels = `(function () {
  var out = [];
  document.querySelectorAll('[data-echarts-option]').forEach(function (el) {
    var inst = echarts.getInstanceByDom(el);
    if (!inst) { return; }
    inst.getZr().storage.getRoots().forEach(function (root) {
      root.traverse(function (d) {
        if (!d.anid || d.anid.indexOf('label_') !== 0 || !d.style || typeof d.style.text !== 'string') { return; }
        for (var p = d; p; p = p.parent) { if (p.ignore || p.invisible) { return; } }
        var r = d.getBoundingRect().clone();
        d.updateTransform();
        var m = d.getComputedTransform();
        if (m) { r.applyTransform(m); }
        out.push({ chart: el.id, text: d.style.text, value: d.anid.slice(6), box: [r.x, r.y, r.width, r.height] });
      });
    });
  });
  return out;
})()`

// overlappingLabels returns the pairs of labels of one chart whose boxes overlap.
func overlappingLabels(labels []axisLabel) []string {
	var out []string
	for i, a := range labels {
		for _, b := range labels[i+1:] {
			if a.Chart != b.Chart {
				continue
			}
			ax, ay, aw, ah := a.Box[0], a.Box[1], a.Box[2], a.Box[3]
			bx, by, bw, bh := b.Box[0], b.Box[1], b.Box[2], b.Box[3]
			if ax < bx+bw && bx < ax+aw && ay < by+bh && by < ay+ah {
				out = append(out, fmt.Sprintf("%s: %q overlaps %q", a.Chart, a.Text, b.Text))
			}
		}
	}
	return out
}

// xAxisValues is the tick values of one chart's bottom row of labels (its time axis).
func xAxisValues(t *testing.T, labels []axisLabel, chart string) []float64 {
	t.Helper()
	bottom := math.Inf(-1)
	for _, l := range labels {
		if l.Chart == chart {
			bottom = math.Max(bottom, l.Box[1])
		}
	}
	var out []float64
	for _, l := range labels {
		if l.Chart == chart && math.Abs(l.Box[1]-bottom) < 2 {
			var v float64
			_, err := fmt.Sscan(l.Value, &v)
			require.NoError(t, err, "label %q of %s", l.Value, chart)
			out = append(out, v)
		}
	}
	return out
}

// TestBrowserDayRunPage is issue 35's check of a 24-hour night's run page at a laptop's and a
// phone's width: no two axis labels of any chart overlap, the fleet chart's time axis ticks on
// whole hours evenly spaced (also zoomed in, and on whole minutes there), and its y axis ends
// at a round number just above the peak. The hour preset and E2 are checked for overlaps too.
func TestBrowserDayRunPage(t *testing.T) {
	b := newBrowser(t)
	app := startApp(t)
	ids := map[string]string{}
	for _, key := range []string{"autoscaler-day", "autoscaler-hour", "e2"} {
		ids[key] = submitScenario(t, app.URL, presetWith(t, key, nil))
	}
	for _, id := range ids {
		waitDone(t, app.URL, id, 3*time.Minute)
	}
	day := fetchReport(t, app.URL, ids["autoscaler-day"])
	for _, width := range []int64{1280, 390} {
		b.viewport(t, width, 900)
		for _, key := range []string{"autoscaler-day", "autoscaler-hour", "e2"} {
			b.openPage(t, app.URL+"/runs/"+ids[key])
			labels := browserEval[[]axisLabel](t, b, drawnAxisLabels)
			require.NotEmpty(t, labels, "%s at %d px: no axis label found", key, width)
			require.Empty(t, overlappingLabels(labels), "%s at %d px", key, width)
			b.screenshot(t, fmt.Sprintf("day-%s-%d", key, width))
			if key != "autoscaler-day" {
				continue
			}
			ticks := xAxisValues(t, labels, "fleet")
			t.Logf("%s at %d px: %d labels; the fleet chart's time ticks %v", key, width, len(labels), ticks)
			require.GreaterOrEqual(t, len(ticks), 3, "fleet chart's time labels at %d px: %v", width, ticks)
			step := ticks[1] - ticks[0]
			for i, v := range ticks {
				require.Zero(t, math.Mod(v, 3_600_000), "a day's ticks fall on whole hours at %d px: %v", width, ticks)
				if i > 0 {
					require.Equal(t, step, v-ticks[i-1], "evenly spaced at %d px: %v", width, ticks)
				}
			}
			yMax := browserEval[float64](t, b, `echarts.getInstanceByDom(document.getElementById('fleet')).getModel().getComponent('yAxis', 0).axis.scale.getExtent()[1]`)
			peak := float64(day.Summary.Workers.Peak)
			require.GreaterOrEqual(t, yMax, peak)
			require.LessOrEqual(t, yMax, 2*peak, "the workers axis ends near the peak of %v, not at %v", peak, yMax)

			// Zoomed in on two hours, the ticks refit to round minutes.
			b.do(t, "zoom the fleet chart", chromedp.Evaluate[chromedp.Void](`echarts.getInstanceByDom(document.getElementById('fleet')).dispatchAction({type: 'dataZoom', startValue: 36000000, endValue: 43200000})`))
			time.Sleep(300 * time.Millisecond)
			labels = browserEval[[]axisLabel](t, b, drawnAxisLabels)
			require.Empty(t, overlappingLabels(labels), "zoomed at %d px", width)
			ticks = xAxisValues(t, labels, "fleet")
			t.Logf("zoomed at %d px: time ticks %v", width, ticks)
			require.GreaterOrEqual(t, len(ticks), 2, "zoomed time labels at %d px: %v", width, ticks)
			for _, v := range ticks {
				require.Zero(t, math.Mod(v, 60_000), "zoomed ticks fall on whole minutes at %d px: %v", width, ticks)
				require.True(t, v >= 36_000_000 && v <= 43_200_000, "zoomed ticks inside the window: %v", ticks)
			}
			if width == 1280 {
				require.Greater(t, len(ticks), 3, "two hours at 1,280 px get more than their ends: %v", ticks)
			}
		}
	}
	require.Empty(t, b.problems(t), "console errors or CSP violations")
}
