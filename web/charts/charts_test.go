package charts

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	gecharts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

func msPtr(v float64) *float64 { return &v }

// chartsFixture is runtest.ChartsReport, the report the browser test draws too.
func chartsFixture() *sim.Report { return runtest.ChartsReport() }

// chartOption decodes a chart's option JSON into a generic map, failing the test if it is not JSON.
func chartOption(t *testing.T, c templates.Chart) map[string]any {
	t.Helper()
	require.NotEmpty(t, c.OptionJSON, "chart %s has no option (empty: %q)", c.ID, c.Empty)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(c.OptionJSON), &m), "chart %s", c.ID)
	return m
}

func chartByID(t *testing.T, cs []templates.Chart, id string) templates.Chart {
	t.Helper()
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %q among %d charts", id, len(cs))
	return templates.Chart{}
}

func chartAxis(t *testing.T, opt map[string]any, name string) map[string]any {
	t.Helper()
	list, ok := opt[name].([]any)
	require.True(t, ok, "%s is not a list: %v", name, opt[name])
	require.NotEmpty(t, list)
	return list[0].(map[string]any)
}

func chartSeries(t *testing.T, opt map[string]any) []map[string]any {
	t.Helper()
	list, ok := opt["series"].([]any)
	require.True(t, ok, "series is not a list")
	out := make([]map[string]any, len(list))
	for i, s := range list {
		out[i] = s.(map[string]any)
	}
	return out
}

func seriesNamed(t *testing.T, opt map[string]any, name string) map[string]any {
	t.Helper()
	for _, s := range chartSeries(t, opt) {
		if s["name"] == name {
			return s
		}
	}
	t.Fatalf("no series %q", name)
	return nil
}

// TestRunChartsCommonShape checks every chart of a run page: fixed unique ids, a title, valid
// option JSON without animation, axes named with units, a legend on top above the grid, a
// tooltip, series, and a table fallback whose headers carry units.
func TestRunChartsCommonShape(t *testing.T) {
	cs := Run(chartsFixture())
	wantIDs := []string{idRemovalTimeline, idKVCRPulls, idWorkersOverTime, idTTFTOverTime, idTTFTDistribution}
	var gotIDs []string
	for _, c := range cs {
		gotIDs = append(gotIDs, c.ID)
	}
	require.Equal(t, wantIDs, gotIDs)

	unitsIn := func(s string) bool {
		return strings.Contains(s, "(ms)") || s == "workers" || s == "pulls" || s == "requests" || s == "worker" || s == "statistic"
	}
	for _, c := range cs {
		t.Run(c.ID, func(t *testing.T) {
			assert.NotEmpty(t, c.Title)
			opt := chartOption(t, c)
			assert.Equal(t, false, opt["animation"], "animation must be off for deterministic rendering")
			assert.Equal(t, c.Title, opt["title"].(map[string]any)["text"])

			x, y := chartAxis(t, opt, "xAxis"), chartAxis(t, opt, "yAxis")
			assert.True(t, unitsIn(x["name"].(string)) || strings.Contains(x["name"].(string), "(ms)"), "x axis name %q lacks a unit", x["name"])
			assert.True(t, unitsIn(y["name"].(string)), "y axis name %q lacks a unit", y["name"])

			legend := opt["legend"].(map[string]any)
			assert.Equal(t, legendTopPX, legend["top"], "legend is placed explicitly on top")
			grid := opt["grid"].([]any)[0].(map[string]any)
			assert.Equal(t, gridTopPX, grid["top"], "grid leaves room for the legend")
			assert.Equal(t, true, opt["tooltip"].(map[string]any)["show"])
			assert.NotEmpty(t, chartSeries(t, opt))

			require.NotEmpty(t, c.Table.Rows, "table fallback")
			for _, row := range c.Table.Rows {
				assert.Len(t, row, len(c.Table.Columns))
			}
			var withUnit int
			for _, col := range c.Table.Columns {
				if strings.Contains(col, "(") {
					withUnit++
				}
			}
			assert.Positive(t, withUnit, "table columns %v name no unit", c.Table.Columns)
		})
	}
}

func TestRemovalTimeline(t *testing.T) {
	c := chartByID(t, Run(chartsFixture()), idRemovalTimeline)
	opt := chartOption(t, c)

	y := chartAxis(t, opt, "yAxis")
	assert.Equal(t, "category", y["type"])
	assert.Equal(t, []any{"w2 (forced)", "w3"}, y["data"], "one row per drained worker, forced ones flagged")

	own := seriesNamed(t, opt, seriesOwnWork)
	assert.Equal(t, "custom", own["type"])
	assert.Equal(t, jsRemovalTimeline, own["renderItem"], "charts.js swaps the name for its function")
	assert.Equal(t, []any{
		map[string]any{"value": []any{0.0, 20.0, 50.0}},
		map[string]any{"value": []any{1.0, 10.0, 25.0}},
	}, own["data"])

	pin := seriesNamed(t, opt, seriesPinWait)
	assert.Equal(t, colorPinWait, pin["itemStyle"].(map[string]any)["color"])
	// w2 has no pin wait (last work = removal), so only w3's 25 → 40 ms is drawn.
	assert.Equal(t, []any{map[string]any{"value": []any{1.0, 25.0, 40.0}}}, pin["data"])

	grace := seriesNamed(t, opt, "grace deadline")
	assert.Equal(t, []any{map[string]any{"value": []any{50.0, 0.0}}}, grace["data"])
	forced := seriesNamed(t, opt, "forced removal")
	assert.Equal(t, []any{map[string]any{"value": []any{50.0, 0.0}}}, forced["data"])

	assert.Len(t, c.Table.Rows, 2)
	assert.Equal(t, []string{"w2", "20", "50", "50", "30", "0", "50", "yes"}, c.Table.Rows[0])
	assert.Positive(t, c.HeightPX)
}

func TestRemovalTimelineStillDraining(t *testing.T) {
	rep := chartsFixture()
	rep.Workers[3].RemovedAtMS, rep.Workers[3].LastWorkMS, rep.Workers[3].FinalState = nil, nil, sim.StateDraining
	opt := chartOption(t, chartByID(t, Run(rep), idRemovalTimeline))
	assert.Contains(t, chartAxis(t, opt, "yAxis")["data"], "w3 (not removed)")
	// No last work time: the whole drain up to the end of the run (60 ms) is pin wait.
	pin := seriesNamed(t, opt, seriesPinWait)
	assert.Equal(t, []any{map[string]any{"value": []any{1.0, 10.0, 60.0}}}, pin["data"])
}

// TestRemovalTimelineFocus: drains that fill a small part of a long run open zoomed in on
// them, with the slider still reaching the whole run; compared timelines share the window.
func TestRemovalTimelineFocus(t *testing.T) {
	rep := chartsFixture()
	zoomOf := func(opt map[string]any) (float64, float64) {
		slider := opt["dataZoom"].([]any)[1].(map[string]any)
		require.Contains(t, slider, "startValue")
		return slider["startValue"].(float64), slider["endValue"].(float64)
	}
	opt := chartOption(t, chartByID(t, Run(rep), idRemovalTimeline))
	assert.NotContains(t, opt["dataZoom"].([]any)[1].(map[string]any), "startValue", "drains span most of the run: no focus")

	rep.Summary.DurationMS = 1000
	opt = chartOption(t, chartByID(t, Run(rep), idRemovalTimeline))
	from, to := zoomOf(opt)
	assert.Equal(t, 1000.0, chartAxis(t, opt, "xAxis")["max"], "the axis still covers the run")
	// Marks at 10 and 20 ms, last removal or deadline at 50 ms, margin max(4, 5) ms, edges
	// rounded outward to a step of niceCeil(50/10) = 5 ms.
	assert.InDelta(t, 5, from, 1e-9)
	assert.InDelta(t, 55, to, 1e-9)

	other := chartsFixture()
	other.Summary.DurationMS = 1000
	other.Workers[3].RemovedAtMS = msPtr(90)
	cs := Compare(rep, other, "a", "b")
	fa, ta := zoomOf(chartOption(t, chartByID(t, cs, "cmp-removal-timeline-a")))
	fb, tb := zoomOf(chartOption(t, chartByID(t, cs, "cmp-removal-timeline-b")))
	assert.Equal(t, []float64{fa, ta}, []float64{fb, tb})
	assert.InDelta(t, 100, ta, 1e-9, "the window covers b's later removal (90 ms + 8 ms margin, rounded to 10 ms)")
	assert.InDelta(t, 0, fa, 1e-9)
}

func TestRemovalTimelineInstantDrain(t *testing.T) {
	rep := chartsFixture()
	rep.Workers[3].LastWorkMS, rep.Workers[3].RemovedAtMS = msPtr(10), msPtr(10)
	opt := chartOption(t, chartByID(t, Run(rep), idRemovalTimeline))
	assert.Contains(t, seriesNamed(t, opt, seriesOwnWork)["data"], map[string]any{"value": []any{1.0, 10.0, 10.0}},
		"a drain that took no time still marks its row")
}

// TestRemovalTimelineManyRows: a big drain gets thinner rows, not a chart taller than a few
// screens; past largeDrainWorkers the timeline gives way to aggregates.
func TestRemovalTimelineManyRows(t *testing.T) {
	drain := func(n int) *sim.Report {
		rep := chartsFixture()
		rep.Workers = nil
		for i := range n {
			rep.Workers = append(rep.Workers, sim.WorkerRow{ID: i, MarkedAtMS: msPtr(10), LastWorkMS: msPtr(20),
				RemovedAtMS: msPtr(30 + float64(i)), DrainMS: msPtr(20 + float64(i)), PinWaitMS: msPtr(10 + float64(i))})
		}
		return rep
	}
	few := chartByID(t, Run(chartsFixture()), idRemovalTimeline)
	many := chartByID(t, Run(drain(largeDrainWorkers)), idRemovalTimeline)
	assert.Len(t, chartAxis(t, chartOption(t, many), "yAxis")["data"], largeDrainWorkers)
	assert.Greater(t, many.HeightPX, few.HeightPX)
	assert.LessOrEqual(t, many.HeightPX, max(largeDrainWorkers*timelineRowPX, timelineMaxBodyPX)+90)

	large := Run(drain(256))
	for _, c := range large {
		assert.NotEqual(t, idRemovalTimeline, c.ID, "no row per worker past %d drained", largeDrainWorkers)
	}
	removed := chartOption(t, chartByID(t, large, idRemovedOverTime))
	data := seriesNamed(t, removed, "removed")["data"].([]any)
	// A point at 0, one per distinct removal instant, one at the axis end.
	assert.Len(t, data, 256+2)
	assert.Equal(t, map[string]any{"value": []any{30.0 + 255, 256.0}}, data[256])
	dist := chartByID(t, large, idDrainDistribution)
	var total int
	for _, row := range dist.Table.Rows {
		n, err := strconv.Atoi(row[1])
		require.NoError(t, err)
		total += n
	}
	assert.Equal(t, 256, total, "every removed worker counted once in the drain histogram")
	assert.LessOrEqual(t, len(dist.Table.Rows), runs.HistogramTargetBins+1)

	cmp := Compare(drain(256), drain(10), "A", "B")
	assert.NotEmpty(t, chartByID(t, cmp, compareIDPrefix+idRemovedOverTime).OptionJSON)
}

func TestBoundTables(t *testing.T) {
	c := templates.Chart{Table: templates.Table{Caption: "x"}}
	for i := range 200 {
		c.Table.Rows = append(c.Table.Rows, []string{strconv.Itoa(i)})
	}
	got := BoundTables([]templates.Chart{c})[0].Table
	assert.LessOrEqual(t, len(got.Rows), maxChartTableRows+1)
	assert.Equal(t, "0", got.Rows[0][0])
	assert.Equal(t, "199", got.Rows[len(got.Rows)-1][0], "the last row is kept")
	assert.Contains(t, got.Caption, "every 4th row of 200")
}

func TestEmptyStates(t *testing.T) {
	rep := chartsFixture()
	for i := range rep.Workers {
		rep.Workers[i] = sim.WorkerRow{ID: i, FinalState: sim.StateActive}
	}
	for i := range rep.Timeseries.Buckets {
		b := &rep.Timeseries.Buckets[i]
		b.PullsStaged, b.PullsLanded, b.PullsRejected, b.TTFTP50MS = 0, 0, 0, nil
	}
	rep.Summary.TTFTMS = sim.Distribution{}
	cs := Run(rep)
	for _, id := range []string{idRemovalTimeline, idKVCRPulls, idTTFTOverTime, idTTFTDistribution} {
		c := chartByID(t, cs, id)
		assert.Empty(t, c.OptionJSON, id)
		assert.NotEmpty(t, c.Empty, "%s explains why it is empty", id)
	}
	// Workers over time still has something to say.
	assert.NotEmpty(t, chartByID(t, cs, idWorkersOverTime).OptionJSON)

	rep.Timeseries.Buckets = nil
	assert.NotEmpty(t, chartByID(t, Run(rep), idWorkersOverTime).Empty)
	assert.Nil(t, Run(nil))
	assert.Nil(t, Compare(nil, rep, "a", "b"))
}

func TestTTFTOverTimeGaps(t *testing.T) {
	opt := chartOption(t, chartByID(t, Run(chartsFixture()), idTTFTOverTime))
	s := seriesNamed(t, opt, "TTFT p50")
	data := s["data"].([]any)
	require.Len(t, data, 6)
	// Points at bucket middles; buckets without a first token are null, so the line has gaps.
	assert.Equal(t, []any{5.0, 8.0}, data[0].(map[string]any)["value"])
	assert.Equal(t, []any{25.0, nil}, data[2].(map[string]any)["value"])
	assert.Equal(t, false, s["connectNulls"])
	assert.Equal(t, 60.0, chartAxis(t, opt, "xAxis")["max"], "x axis ends where the last bucket does")
}

func TestWorkersStepsCloseLastBucket(t *testing.T) {
	opt := chartOption(t, chartByID(t, Run(chartsFixture()), idWorkersOverTime))
	active := seriesNamed(t, opt, "active")
	data := active["data"].([]any)
	require.Len(t, data, 7, "one point per bucket plus the end of the last one")
	assert.Equal(t, []any{60.0, 2.0}, data[6].(map[string]any)["value"])
	assert.Equal(t, "end", active["step"])
	draining := seriesNamed(t, opt, "draining")
	assert.Equal(t, "dashed", draining["lineStyle"].(map[string]any)["type"])
}

func TestKVCRPullsStacks(t *testing.T) {
	opt := chartOption(t, chartByID(t, Run(chartsFixture()), idKVCRPulls))
	assert.Equal(t, "staging", seriesNamed(t, opt, "staged")["stack"])
	assert.Equal(t, "staging", seriesNamed(t, opt, "rejected at staging")["stack"])
	assert.Equal(t, "landed", seriesNamed(t, opt, "landed")["stack"])
	// Tallest bar: bucket 20 ms has 0 staged + 3 rejected: the axis ends there, a tick a pull.
	assert.Equal(t, 3.0, chartAxis(t, opt, "yAxis")["max"])
	assert.Equal(t, 1.0, chartAxis(t, opt, "yAxis")["interval"])
	assert.Equal(t, "pulls", chartAxis(t, opt, "yAxis")["name"])
	assert.Equal(t, 1.0, chartAxis(t, opt, "yAxis")["minInterval"])
	assert.Equal(t, false, chartAxis(t, opt, "xAxis")["containShape"], "bars must not widen the time axis")
	assert.Equal(t, 0.0, chartAxis(t, opt, "xAxis")["min"])
}

// TestChartsJSRegistersNamedFunctions: every function name an option carries must be one
// charts.js registers, or echarts would get a string where it needs a function.
func TestChartsJSRegistersNamedFunctions(t *testing.T) {
	js, err := os.ReadFile(filepath.Join("..", "..", "static", "js", "charts.js"))
	require.NoError(t, err)
	for _, name := range []string{jsRemovalTimeline, jsRemovalTooltip} {
		assert.Contains(t, string(js), "    "+name+": function", "charts.js registry lacks %s", name)
	}
}

// TestChartBlock renders the component: a drawn chart carries its option and height for
// charts.js; an empty one shows its message and no chart container; both keep the table.
func TestChartBlock(t *testing.T) {
	render := func(c templates.Chart) *goquery.Document {
		var buf bytes.Buffer
		require.NoError(t, templates.ChartBlock(c).Render(context.Background(), &buf))
		doc, err := goquery.NewDocumentFromReader(&buf)
		require.NoError(t, err)
		return doc
	}
	c := chartByID(t, Run(chartsFixture()), idRemovalTimeline)
	doc := render(c)
	fig := doc.Find(`figure[data-testid="chart-removal-timeline"]`)
	require.Equal(t, 1, fig.Length())
	assert.Equal(t, "Removal timeline", strings.TrimSpace(fig.Find("figcaption").Text()))
	div := fig.Find("div#removal-timeline.chart")
	require.Equal(t, 1, div.Length())
	opt, _ := div.Attr("data-echarts-option")
	assert.JSONEq(t, c.OptionJSON, opt, "the option survives HTML escaping intact")
	h, _ := div.Attr("data-height-px")
	assert.Equal(t, fmt.Sprint(c.HeightPX), h)
	assert.Equal(t, len(c.Table.Rows), fig.Find(`table[data-testid="chart-table-removal-timeline"] tbody tr`).Length())
	assert.Equal(t, "marked (ms)", fig.Find("thead th").Eq(1).Text())

	empty := emptyChart("x", "Nothing", "No worker was drained.", templates.Table{})
	doc = render(empty)
	assert.Equal(t, 0, doc.Find("[data-echarts-option]").Length())
	assert.Equal(t, "No worker was drained.", strings.TrimSpace(doc.Find(`[data-testid="chart-empty-x"]`).Text()))
	assert.Equal(t, 0, doc.Find("details").Length(), "no table without rows")
}

func TestTTFTDistributionHistogramOrPercentiles(t *testing.T) {
	rep := chartsFixture()
	c := chartByID(t, Run(rep), idTTFTDistribution)
	assert.Contains(t, c.Title, "percentiles", "no per-request rows: summary percentiles")
	opt := chartOption(t, c)
	assert.Equal(t, []any{"mean", "p50", "p90", "p99", "max"}, chartAxis(t, opt, "xAxis")["data"])

	arrival := []float64{0, 1, 2, 3, 4}
	ttft := []float64{3, 7, 7, 18, 41}
	for i := range arrival {
		ft := arrival[i] + ttft[i]
		rep.Requests = append(rep.Requests, sim.RequestRow{ID: string(rune('a' + i)), ArrivalMS: arrival[i], FirstTokenMS: &ft})
	}
	rep.Requests = append(rep.Requests, sim.RequestRow{ID: "killed-before-first-token", ArrivalMS: 9})
	c = chartByID(t, Run(rep), idTTFTDistribution)
	assert.Contains(t, c.Title, "histogram")
	opt = chartOption(t, c)
	// Max 41 ms over ~20 bins: 2.05 → 5 ms bins, 0–5 … 40–45.
	labels := chartAxis(t, opt, "xAxis")["data"].([]any)
	require.Len(t, labels, 9)
	assert.Equal(t, "0–5", labels[0])
	assert.Equal(t, "40–45", labels[8])
	var counts []float64
	var total float64
	for _, d := range seriesNamed(t, opt, "requests")["data"].([]any) {
		n := d.(map[string]any)["value"].([]any)[1].(float64)
		counts = append(counts, n)
		total += n
	}
	assert.Equal(t, 5.0, total, "the request without a first token is not counted")
	assert.Equal(t, []float64{1, 2, 0, 1, 0, 0, 0, 0, 1}, counts)
}

// TestCompareChartsAlignedAxes: both runs share every axis — the same time range (the longer
// run's), the same y maximum — and legends name the runs.
func TestCompareChartsAlignedAxes(t *testing.T) {
	a := chartsFixture()
	b := chartsFixture()
	b.Summary.DurationMS = 123
	b.Timeseries.BucketMS = 20
	for i := range b.Timeseries.Buckets {
		b.Timeseries.Buckets[i].TMS = float64(i) * 20
	}
	b.Timeseries.Buckets[1].PullsStaged = 9
	b.Workers[3].RemovedAtMS, b.Workers[3].PinWaitMS = msPtr(90), msPtr(65)
	b.Workers[1].MarkedAtMS, b.Workers[1].RemovedAtMS, b.Workers[1].LastWorkMS = msPtr(5), msPtr(6), msPtr(6)

	cs := Compare(a, b, "hinted", "no-hint")
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	assert.Equal(t, []string{
		"cmp-removal-timeline-a", "cmp-removal-timeline-b", "cmp-kvcr-pulls-a", "cmp-kvcr-pulls-b",
		"cmp-workers-over-time", "cmp-ttft-over-time", "cmp-ttft-distribution",
	}, ids)

	for _, id := range []string{"cmp-kvcr-pulls-a", "cmp-kvcr-pulls-b", "cmp-workers-over-time", "cmp-ttft-over-time"} {
		assert.Equal(t, 123.0, chartAxis(t, chartOption(t, chartByID(t, cs, id)), "xAxis")["max"], "%s spans the longer run", id)
	}
	pa, pb := chartOption(t, chartByID(t, cs, "cmp-kvcr-pulls-a")), chartOption(t, chartByID(t, cs, "cmp-kvcr-pulls-b"))
	assert.Equal(t, 10.0, chartAxis(t, pa, "yAxis")["max"], "b's 9+1 pulls set the shared maximum")
	assert.Equal(t, chartAxis(t, pa, "yAxis")["max"], chartAxis(t, pb, "yAxis")["max"])

	ta, tb := chartOption(t, chartByID(t, cs, "cmp-removal-timeline-a")), chartOption(t, chartByID(t, cs, "cmp-removal-timeline-b"))
	assert.Equal(t, chartAxis(t, ta, "xAxis")["max"], chartAxis(t, tb, "xAxis")["max"])
	assert.Equal(t, []any{"w1 (not drained)", "w2 (forced)", "w3"}, chartAxis(t, ta, "yAxis")["data"], "rows are the union of both runs' drained workers")
	assert.Equal(t, []any{"w1", "w2 (forced)", "w3"}, chartAxis(t, tb, "yAxis")["data"])

	w := chartOption(t, chartByID(t, cs, "cmp-workers-over-time"))
	assert.Equal(t, colorRunA, seriesNamed(t, w, "hinted · active")["lineStyle"].(map[string]any)["color"])
	assert.Equal(t, colorRunB, seriesNamed(t, w, "no-hint · draining")["lineStyle"].(map[string]any)["color"])
	widthOf := func(name string) float64 {
		return seriesNamed(t, w, name)["lineStyle"].(map[string]any)["width"].(float64)
	}
	assert.Greater(t, widthOf("hinted · active"), widthOf("no-hint · active"), "A is drawn wider so equal lines stay visible")
	ttft := chartOption(t, chartByID(t, cs, "cmp-ttft-over-time"))
	assert.Len(t, chartSeries(t, ttft), 2)

	table := chartByID(t, cs, "cmp-workers-over-time").Table
	assert.Equal(t, []string{"bucket start (ms)", "hinted: active (workers)", "hinted: draining (workers)",
		"no-hint: active (workers)", "no-hint: draining (workers)"}, table.Columns)
	// Bucket starts of both runs (10 ms and 20 ms buckets), "—" where a run has none.
	assert.Equal(t, []string{"10", "3", "1", "—", "—"}, table.Rows[1])
}

func TestCompareChartsSameLabels(t *testing.T) {
	cs := Compare(chartsFixture(), chartsFixture(), "run", "run")
	w := chartOption(t, chartByID(t, cs, "cmp-workers-over-time"))
	seriesNamed(t, w, "run (A) · active")
	seriesNamed(t, w, "run (B) · active")
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0, 0}, {-3, 0}, {1, 1}, {1.2, 2}, {3, 5}, {5, 5}, {7, 10}, {10, 10}, {0.03, 0.05}, {123, 200}, {4000, 5000},
	} {
		assert.InDelta(t, tc.want, niceCeil(tc.in), 1e-12, "niceCeil(%v)", tc.in)
	}
}

// updatingGolden reports whether golden files should be rewritten: `go test ./web/charts -update`
// when the package defines that flag, or UPDATE_GOLDEN=1. The flag is looked up rather than
// defined here so the page tests can own it without a "flag redefined" panic.
func updatingGolden() bool {
	if f := flag.Lookup("update"); f != nil {
		return f.Value.String() == "true"
	}
	return os.Getenv("UPDATE_GOLDEN") == "1"
}

func TestChartOptionGolden(t *testing.T) {
	for _, id := range []string{idRemovalTimeline, idWorkersOverTime} {
		c := chartByID(t, Run(chartsFixture()), id)
		var pretty strings.Builder
		enc := json.NewEncoder(&pretty)
		enc.SetIndent("", "  ")
		require.NoError(t, enc.Encode(json.RawMessage(c.OptionJSON)))
		path := filepath.Join("testdata", "charts", id+".golden.json")
		if updatingGolden() {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(pretty.String()), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run `go test ./web/charts -run TestChartOptionGolden -update` (or UPDATE_GOLDEN=1) to create it")
		assert.Equal(t, string(want), pretty.String(), "option JSON of %s changed; rerun with -update if intended", id)
	}
}

// The fleet chart of an autoscaler run stacks active, starting and draining workers, draws the
// load per worker against the target band on a second axis and marks the changes.
func TestFleetChart(t *testing.T) {
	p, ok := sim.PresetByKey("autoscaler-grace") // a real-time evening: the day takes 15 s of CPU
	require.True(t, ok)
	sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	require.NoError(t, err)
	c, ok := Fleet(rep, sc.Autoscaler, nil)
	require.True(t, ok)
	require.Empty(t, c.Empty)
	for _, want := range []string{`"starting"`, `"draining"`, `"load per worker"`, `"target band (high)"`, `"decision that changed the fleet"`, `"stack":"fleet"`, `"yAxisIndex":1`} {
		assert.Contains(t, c.OptionJSON, want)
	}
	assert.Len(t, c.Table.Rows, len(rep.Autoscaler.Decisions))
	// Each decision that held the fleet is marked by its reason.
	for reason, n := range rep.Summary.Autoscaler.Reasons {
		name := `"held: ` + strings.ReplaceAll(reason, "_", " ") + `"`
		marked := reason == sim.ReasonStabilized || reason == sim.ReasonHeldByStarting || reason == sim.ReasonLimited || reason == sim.ReasonAtBound
		if marked && n > 0 {
			assert.Contains(t, c.OptionJSON, name)
		} else if n == 0 {
			assert.NotContains(t, c.OptionJSON, name)
		}
	}
	_, ok = Fleet(rep, nil, nil)
	assert.False(t, ok, "no autoscaler, no fleet chart")
}

// A long run's time axis reads as the clock from its start; the data stay in ms.
func TestTimeAxisReadsByLength(t *testing.T) {
	for _, tc := range []struct {
		maxMS           float64
		name, formatter string
	}{
		{500, "time (ms)", ""},
		{9_999, "time (ms)", ""},
		{10_000, "time from the start (s)", "secondsMS"},
		{19 * 60_000, "time from the start (s)", "secondsMS"},
		{20 * 60_000, "time from the start (h:mm)", "clockMS"},
		{86_400_000, "time from the start (h:mm)", "clockMS"},
	} {
		name, formatter := timeAxis(tc.maxMS)
		assert.Equal(t, tc.name, name, "%v", tc.maxMS)
		assert.Equal(t, tc.formatter, formatter, "%v", tc.maxMS)
	}
	line := gecharts.NewLine()
	line.SetGlobalOptions(cartesian{title: "t", yName: "workers", xMaxMS: 86_400_000, zoom: true, tooltip: "axis"}.globalOpts()...)
	line.AddSeries("s", []opts.LineData{{Value: []any{0, 1}}, {Value: []any{86_400_000, 2}}})
	js := encodeOption(line, wholeAxis)
	assert.Contains(t, js, `"formatter":"clockMS"`)
	assert.Contains(t, js, `86400000`, "the data stay in ms")
}

// The compare page's timelines share rows, but a run lists only the workers it has: a worker
// the autoscaler started (w18) is not in the fixed fleet's chart, and a fleet that drained
// nothing says so.
func TestCompareTimelineListsOnlyTheRunsWorkers(t *testing.T) {
	auto := chartsFixture()
	auto.Workers = append(auto.Workers, sim.WorkerRow{ID: 18, FinalState: sim.StateRemoved, MarkedAtMS: msPtr(12), LastWorkMS: msPtr(14), RemovedAtMS: msPtr(15)})
	fixed := chartsFixture()
	cs := Compare(auto, fixed, "autoscaler", "fixed fleet")
	rowsA := chartAxis(t, chartOption(t, chartByID(t, cs, "cmp-removal-timeline-a")), "yAxis")["data"]
	rowsB := chartAxis(t, chartOption(t, chartByID(t, cs, "cmp-removal-timeline-b")), "yAxis")["data"]
	assert.Contains(t, rowsA, "w18")
	for _, r := range rowsB.([]any) {
		assert.NotContains(t, r, "w18", "the fixed fleet has no w18")
	}

	for i := range fixed.Workers {
		fixed.Workers[i].MarkedAtMS, fixed.Workers[i].RemovedAtMS, fixed.Workers[i].LastWorkMS = nil, nil, nil
	}
	cs = Compare(auto, fixed, "autoscaler", "fixed fleet")
	assert.Contains(t, chartByID(t, cs, "cmp-removal-timeline-b").Empty, "No worker was drained in this run")
}

// A 24-hour night's decisions would draw their markers on top of each other: past
// maxFleetMarkers decisions the fleet chart marks each hour once, at the fleet its last decision
// left, named by how many decisions it stands for.
func TestFleetChartAggregatesMarkersByHour(t *testing.T) {
	a := &sim.Autoscaler{Target: 8, Tolerance: 0.1, MinWorkers: 1, MaxWorkers: 12}
	rep := &sim.Report{Autoscaler: &sim.AutoscalerReport{}}
	for i := range 24 * 240 { // a decision every 15 s for 24 h
		d := sim.Decision{TMS: float64(i) * 15000, Current: 5, Desired: 5, Reason: sim.ReasonStabilized}
		if i%240 == 239 { // one change an hour, at its end
			d.Drained, d.Reason = []int{4}, ""
		}
		rep.Autoscaler.Decisions = append(rep.Autoscaler.Decisions, d)
	}
	rep.Timeseries.Buckets = []sim.Bucket{{Active: 5}, {Active: 5}}
	rep.Timeseries.BucketMS = 43_200_000
	rep.Summary.DurationMS = 86_400_000
	c, ok := Fleet(rep, a, nil)
	require.True(t, ok)
	var option struct {
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Name  string `json:"name"`
				Value []any  `json:"value"`
			} `json:"data"`
		} `json:"series"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.OptionJSON), &option))
	byName := map[string]int{}
	for _, s := range option.Series {
		byName[s.Name] = len(s.Data)
		if s.Name == "held: stabilized, by hour" {
			assert.Equal(t, "239 decisions in hour 1", s.Data[0].Name)
		}
	}
	assert.Equal(t, 24, byName["decisions that changed the fleet, by hour"])
	assert.Equal(t, 24, byName["held: stabilized, by hour"])
	assert.NotContains(t, byName, "decision that changed the fleet")
	assert.Len(t, c.Table.Rows, 24*240, "the table keeps every decision")
}

// Issue 35: with a diagnose plan's ideal fleet, the fleet chart draws it over the stack as the
// workers it holds, and the workers axis covers it.
func TestFleetChartDrawsTheIdealFleet(t *testing.T) {
	a := &sim.Autoscaler{Target: 8, Tolerance: 0.1, MinWorkers: 1, MaxWorkers: 12}
	rep := &sim.Report{Autoscaler: &sim.AutoscalerReport{Decisions: []sim.Decision{{TMS: 0, Current: 2, Desired: 2}}}}
	rep.Timeseries = sim.Timeseries{BucketMS: 1000, Buckets: []sim.Bucket{{TMS: 0, Active: 2}, {TMS: 1000, Active: 3}}}
	rep.Summary.Workers.Peak = 3
	ideal := &sim.Timeseries{BucketMS: 1000, Buckets: []sim.Bucket{{TMS: 0, Active: 4, Starting: 1}, {TMS: 1000, Active: 2}}}
	without, ok := Fleet(rep, a, nil)
	require.True(t, ok)
	assert.NotContains(t, without.OptionJSON, idealFleetSeries)
	c, ok := Fleet(rep, a, ideal)
	require.True(t, ok)
	opt := chartOption(t, c)
	s := seriesNamed(t, opt, idealFleetSeries)
	assert.Nil(t, s["stack"], "drawn over the stack, not on it")
	var held []float64
	for _, d := range s["data"].([]any) {
		held = append(held, d.(map[string]any)["value"].([]any)[1].(float64))
	}
	assert.Equal(t, []float64{5, 2, 2}, held, "active + starting + draining per bucket, closed at the end")
	assert.Equal(t, 5.0, chartAxis(t, opt, "yAxis")["max"], "the axis covers the ideal fleet's 5 workers")
}
