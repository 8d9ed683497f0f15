package charts

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// Colours shared with the pages (README.md, helper C's CSS): run A (hinted or guard-on) is blue,
// run B (no-hint or guard-off) is orange. A single run's own series use neutral colours so blue
// and orange keep meaning "A" and "B" everywhere.
const (
	colorRunA      = "#2563eb"
	colorRunB      = "#ea580c"
	colorActive    = "#475569" // slate: workers taking new requests
	colorDraining  = "#d97706" // amber: workers draining
	colorTTFT      = "#334155"
	colorOwnWork   = "#94a3b8" // drain spent finishing the worker's own requests
	colorPinWait   = "#dc2626" // drain spent only because peers still pull from it
	colorGrace     = "#111827"
	colorForced    = "#7c2d12"
	colorStaged    = "#0891b2" // pull outcomes: a restrained, fixed palette
	colorLanded    = "#16a34a"
	colorRejected  = "#9f1239"
	colorHistogram = "#64748b"
)

// Layout of every cartesian chart: the legend sits on top with the grid pushed below it, and the
// x axis name and the zoom slider share the bottom margin, so neither ever covers data.
const (
	legendTopPX       = "4"
	gridTopPX         = "44"
	gridBottomPX      = "78"
	gridBottomNoZoom  = "48"
	gridLeftPX        = "72"
	gridRightPX       = "28"
	sliderBottomPX    = 8
	sliderHeightPX    = 18
	chartHeightPX     = 320
	timelineRowPX     = 26
	timelineMinRowPX  = 6
	timelineMaxBodyPX = 1200
	timelineMinHeight = 220
)

// Chart ids are fixed so pages, tests and charts.js can find them.
const (
	idRemovalTimeline  = "removal-timeline"
	idKVCRPulls        = "kvcr-pulls"
	idWorkersOverTime  = "workers-over-time"
	idTTFTOverTime     = "ttft-over-time"
	idTTFTDistribution = "ttft-distribution"
	compareIDPrefix    = "cmp-"
)

// runView is one run as the chart builders see it: its report, the name the legend gives it
// and its colour. A single run has an empty label.
type runView struct {
	rep   *sim.Report
	ttft  *runs.TTFTCounts // histogram of per-request TTFTs (runs.StoredSummary.TTFTHistogram); nil without per-request rows
	label string
	color string
}

// Run builds the charts of one run's page (README.md). It never fails: a chart that has
// nothing to show comes back with an empty OptionJSON and a message in Empty.
func Run(rep *sim.Report) []templates.Chart {
	if rep == nil {
		return nil
	}
	return OfSummary(runs.Summarize(rep))
}

// OfSummary is Run from a run's stored summary.
func OfSummary(sum *runs.StoredSummary) []templates.Chart {
	rep := &sum.Report
	runs := []runView{{rep: rep, ttft: sum.TTFTHistogram}}
	removal := []templates.Chart{removalTimelineChart(idRemovalTimeline, "Removal timeline", rep, timelineAxes(runs))}
	if IsLargeDrain(rep) {
		removal = drainAggregateCharts("", runs)
	}
	return append(removal,
		kvcrPullsChart(idKVCRPulls, "KVCR pulls over time", runs[0], axisRange(runs, pullsMax)),
		workersChart(idWorkersOverTime, runs),
		ttftOverTimeChart(idTTFTOverTime, runs),
		ttftDistributionChart(idTTFTDistribution, runs),
	)
}

// Compare builds the compare page's charts: both runs on the same axes (same time range,
// same y maximum). Time series overlay A and B in their colours; the removal timeline and the
// stacked pulls are drawn as one chart per run with identical axes, since stacking two runs'
// outcomes into one bar would hide which run each part belongs to.
func Compare(a, b *sim.Report, labelA, labelB string) []templates.Chart {
	if a == nil || b == nil {
		return nil
	}
	return CompareSummaries(runs.Summarize(a), runs.Summarize(b), labelA, labelB)
}

// CompareSummaries is Compare from the runs' stored summaries.
func CompareSummaries(sa, sb *runs.StoredSummary, labelA, labelB string) []templates.Chart {
	a, b := &sa.Report, &sb.Report
	if labelA == "" {
		labelA = "A"
	}
	if labelB == "" {
		labelB = "B"
	}
	if labelA == labelB {
		// Legends and tooltips key series by name: equal names would merge the two runs.
		labelA, labelB = labelA+" (A)", labelB+" (B)"
	}
	runs := []runView{{rep: a, ttft: sa.TTFTHistogram, label: labelA, color: colorRunA},
		{rep: b, ttft: sb.TTFTHistogram, label: labelB, color: colorRunB}}
	var out []templates.Chart

	tl := timelineAxes(runs)
	if IsLargeDrain(a, b) {
		out = append(out, drainAggregateCharts(compareIDPrefix, runs)...)
	} else if len(tl.workerIDs) == 0 {
		out = append(out, emptyChart(compareIDPrefix+idRemovalTimeline, "Removal timeline",
			"Neither run drained a worker, so there is no removal to show.", templates.Table{}))
	} else {
		for i, r := range runs {
			id := compareIDPrefix + idRemovalTimeline + "-" + string(rune('a'+i))
			out = append(out, removalTimelineChart(id, "Removal timeline — "+r.label, r.rep, tl))
		}
	}

	pulls := axisRange(runs, pullsMax)
	if pulls.yMax == 0 {
		out = append(out, emptyChart(compareIDPrefix+idKVCRPulls, "KVCR pulls over time",
			"Neither run staged or rejected a KVCR pull.", templates.Table{}))
	} else {
		for i, r := range runs {
			id := compareIDPrefix + idKVCRPulls + "-" + string(rune('a'+i))
			out = append(out, kvcrPullsChart(id, "KVCR pulls over time — "+r.label, r, pulls))
		}
	}

	out = append(out,
		workersChart(compareIDPrefix+idWorkersOverTime, runs),
		ttftOverTimeChart(compareIDPrefix+idTTFTOverTime, runs),
		ttftDistributionChart(compareIDPrefix+idTTFTDistribution, runs),
	)
	return out
}

// maxChartTableRows bounds a chart's fallback table: past it the table keeps every k-th row
// (and the last), and its caption says so; report.json and workers.csv have every value.
const maxChartTableRows = 50

// BoundTables thins the fallback tables of charts so a long run's page stays small.
func BoundTables(cs []templates.Chart) []templates.Chart {
	for i := range cs {
		t := &cs[i].Table
		n := len(t.Rows)
		if n <= maxChartTableRows {
			continue
		}
		step := (n + maxChartTableRows - 1) / maxChartTableRows
		var rows [][]string
		for r := 0; r < n; r += step {
			rows = append(rows, t.Rows[r])
		}
		if (n-1)%step != 0 {
			rows = append(rows, t.Rows[n-1])
		}
		t.Rows = rows
		t.Caption += fmt.Sprintf(" (every %s row of %d, and the last; report.json has them all)", format.Ordinal(step), n)
	}
	return cs
}

// chartAxes is the shared coordinate range of a chart (or of a group of charts that must align).
type chartAxes struct {
	xMaxMS float64
	yMax   float64
}

// axisRange gives the time range covering every run and a round y maximum (niceAxis)
// covering every run's values as measured by yOf.
func axisRange(runs []runView, yOf func(*sim.Report) float64) chartAxes {
	var ax chartAxes
	for _, r := range runs {
		ax.xMaxMS = math.Max(ax.xMaxMS, runEndMS(r.rep))
		ax.yMax = math.Max(ax.yMax, yOf(r.rep))
	}
	ax.yMax, _ = niceAxis(ax.yMax, 0)
	return ax
}

// runEndMS is where a run's time axis ends: its duration, or the end of its last bucket if
// that is later (buckets are whole multiples of bucket_ms).
func runEndMS(rep *sim.Report) float64 {
	end := rep.Summary.DurationMS
	ts := rep.Timeseries
	if n := len(ts.Buckets); n > 0 {
		end = math.Max(end, ts.Buckets[n-1].TMS+ts.BucketMS)
	}
	return end
}

// niceCeil rounds v up to 1, 2 or 5 × 10^k so shared axes end on a readable tick. Zero stays
// zero so callers can tell "nothing to draw".
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// cartesian holds what every x/y chart shares.
type cartesian struct {
	title    string
	xName    string   // default "time (ms)" on a value axis from 0 to xMaxMS
	xCats    []string // category x axis instead (the TTFT distribution)
	yCats    []string // category y axis (the removal timeline's worker rows)
	yName    string
	yMax     float64 // 0: let echarts choose
	xMaxMS   float64
	zoom     bool
	tooltip  string // "axis" or "item"
	integerY bool   // counts of workers or pulls: no fractional ticks
}

// globalOpts turns the shared layout into go-echarts options.
func (c cartesian) globalOpts() []charts.GlobalOpts {
	bottom := gridBottomNoZoom
	if c.zoom {
		bottom = gridBottomPX
	}
	y := opts.YAxis{
		Type: "value", Name: c.yName, NameLocation: "middle", NameGap: 48,
		Min: 0, AxisLabel: &opts.AxisLabel{Show: opts.Bool(true)},
	}
	if c.yMax > 0 {
		y.Max = c.yMax
	}
	if c.integerY {
		y.MinInterval = 1
	}
	if c.yCats != nil {
		// Worker rows read top to bottom in id order.
		y = opts.YAxis{
			Type: "category", Name: c.yName, NameLocation: "middle", NameGap: 56, Data: c.yCats,
			Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Show: opts.Bool(true)},
		}
	}
	x := opts.XAxis{
		Type: "value", Name: "time (ms)", NameLocation: "middle", NameGap: 28,
		Min: 0, Max: c.xMaxMS, AxisLabel: &opts.AxisLabel{Show: opts.Bool(true)},
	}
	if c.xName != "" {
		x.Name = c.xName
	} else if name, formatter := timeAxis(c.xMaxMS); formatter != "" {
		// The data stay in ms (the tables and downloads have them exactly); the labels read
		// as the clock from the run's start.
		x.Name, x.AxisLabel.Formatter = name, types.FuncStr(formatter)
	}
	if c.xCats != nil {
		x.Type, x.Min, x.Max, x.Data = "category", nil, nil, c.xCats
	}
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		// The page shows the title as the figure's caption; the option keeps it for anyone
		// reading the JSON or exporting the canvas.
		charts.WithTitleOpts(opts.Title{Title: c.title, Show: opts.Bool(false)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: legendTopPX, Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: c.tooltip}),
		charts.WithGridOpts(opts.Grid{Top: gridTopPX, Bottom: bottom, Left: gridLeftPX, Right: gridRightPX}),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(y),
	}
}

// Time axes longer than these read in seconds, or as h:mm from the run's start; shorter ones
// count milliseconds. The label formatters are charts.js' registry entries of those names.
const (
	secondsAxisFromMS = 10_000
	clockAxisFromMS   = 20 * 60_000
)

// timeAxis names a time axis that ends at maxMS and the formatter of its labels ("" for ms).
func timeAxis(maxMS float64) (name, formatter string) {
	switch {
	case maxMS >= clockAxisFromMS:
		return "time from the start (h:mm)", "clockMS"
	case maxMS >= secondsAxisFromMS:
		return "time from the start (s)", "secondsMS"
	}
	return "time (ms)", ""
}

// zoomWindow is the part of the time axis a chart opens on; the slider reaches the rest.
type zoomWindow struct{ fromMS, toMS float64 }

// noZoom: no zoom slider at all (category axes). wholeAxis: a slider, opening on everything.
var (
	noZoom    *zoomWindow
	wholeAxis = &zoomWindow{fromMS: math.NaN()}
)

// encodeOption validates a go-echarts chart and marshals its option, applying the few settings
// go-echarts has no field for (the zoom slider and its window).
func encodeOption(c interface {
	Validate()
	JSON() map[string]interface{}
}, window *zoomWindow) string {
	zoom := window != nil
	c.Validate()
	option := c.JSON()
	if t, ok := option["tooltip"].(opts.Tooltip); ok {
		// echarts' HTML tooltips carry inline style attributes, which the strict CSP blocks;
		// richText tooltips are drawn in the canvas instead.
		option["tooltip"] = map[string]any{"show": true, "trigger": t.Trigger, "renderMode": "richText", "confine": true}
	}
	if xs, ok := option["xAxis"].([]opts.XAxis); ok {
		axes := make([]any, len(xs))
		for i, x := range xs {
			m := asMap(x)
			if zoom && len(xs) == 1 {
				// Time axes end exactly at 0 and the run's end, so charts stacked on a page line
				// up: echarts would otherwise widen a bar chart's axis to fit its outermost bars.
				m["containShape"] = false
			}
			patchTimeAxis(m)
			patchValueAxis(m)
			axes[i] = m
		}
		option["xAxis"] = axes
	}
	if ys, ok := option["yAxis"].([]opts.YAxis); ok {
		axes := make([]any, len(ys))
		for i, y := range ys {
			m := asMap(y)
			patchValueAxis(m)
			axes[i] = m
		}
		option["yAxis"] = axes
	}
	if zoom {
		// filterMode "none" keeps step lines and bars continuous at the window's edges.
		inside := map[string]any{"type": "inside", "xAxisIndex": 0, "filterMode": "none"}
		slider := map[string]any{"type": "slider", "xAxisIndex": 0, "filterMode": "none", "bottom": sliderBottomPX, "height": sliderHeightPX}
		if !math.IsNaN(window.fromMS) {
			for _, z := range []map[string]any{inside, slider} {
				z["startValue"], z["endValue"] = window.fromMS, window.toMS
			}
		}
		option["dataZoom"] = []map[string]any{inside, slider}
	}
	b, err := json.Marshal(option)
	if err != nil {
		// Options are built from plain numbers and strings; a failure here is a programming
		// error, and an empty chart with a message beats a broken page.
		return ""
	}
	return string(b)
}

// asMap is a go-echarts struct as the JSON object it encodes to, so settings go-echarts has no
// field for can be added (an empty map if it does not encode, which cannot happen for the
// plain structs of an option).
func asMap(v any) map[string]any {
	m := map[string]any{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// emptyChart is a chart with nothing to draw: ChartBlock shows the message instead.
func emptyChart(id, title, message string, table templates.Table) templates.Chart {
	return templates.Chart{ID: id, Title: title, Empty: message, Table: table}
}

// seriesName names a series in a compare chart ("hinted · active") or a single run ("active").
func seriesName(r runView, what string) string {
	if r.label == "" {
		return what
	}
	return r.label + " · " + what
}

// runColumn names a table column after the run it belongs to, if any.
func runColumn(r runView, name string) string {
	if r.label == "" {
		return name
	}
	return fmt.Sprintf("%s: %s", r.label, name)
}
