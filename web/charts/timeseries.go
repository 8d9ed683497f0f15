package charts

import (
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// bucketColumn is one per-bucket value shown in a time-series table.
type bucketColumn struct {
	name  string // with its unit
	value func(sim.Bucket) string
}

// timeTable lists every bucket start of every run, one row per start, with each run's columns
// side by side ("—" where a run has no bucket at that time, as when bucket sizes differ).
func timeTable(caption string, runs []runView, cols []bucketColumn) templates.Table {
	t := templates.Table{Caption: caption, Columns: []string{"bucket start (ms)"}}
	byRun := make([]map[float64]sim.Bucket, len(runs))
	var starts []float64
	for i, r := range runs {
		for _, c := range cols {
			t.Columns = append(t.Columns, runColumn(r, c.name))
		}
		byRun[i] = make(map[float64]sim.Bucket, len(r.rep.Timeseries.Buckets))
		for _, b := range r.rep.Timeseries.Buckets {
			byRun[i][b.TMS] = b
			starts = append(starts, b.TMS)
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	for _, at := range starts {
		row := []string{format.Table(at)}
		for i := range runs {
			b, ok := byRun[i][at]
			for _, c := range cols {
				if ok {
					row = append(row, c.value(b))
				} else {
					row = append(row, "—")
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func hasBuckets(runs []runView) bool {
	for _, r := range runs {
		if len(r.rep.Timeseries.Buckets) > 0 {
			return true
		}
	}
	return false
}

// stepPoints draws a gauge across each bucket: the bucket's value (its state at the bucket's
// end) from the bucket's start, with a closing point at the last bucket's end. Drawn as
// step "end", each bucket shows one flat value.
func stepPoints(ts sim.Timeseries, value func(sim.Bucket) int64) []opts.LineData {
	pts := make([]opts.LineData, 0, len(ts.Buckets)+1)
	for _, b := range ts.Buckets {
		pts = append(pts, opts.LineData{Value: []any{b.TMS, value(b)}})
	}
	if n := len(ts.Buckets); n > 0 {
		last := ts.Buckets[n-1]
		pts = append(pts, opts.LineData{Value: []any{last.TMS + ts.BucketMS, value(last)}})
	}
	return pts
}

// maxWorkers is the most workers holding GPUs at once: the report's peak (an autoscaler's run
// lists every worker it ever started, 529 over a day for a peak of 10), or, in a report
// without it, every listed worker.
func maxWorkers(rep *sim.Report) float64 {
	m := float64(max(rep.Summary.Workers.Peak, rep.Summary.Workers.Initial))
	if m == 0 {
		m = float64(len(rep.Workers))
	}
	for _, b := range rep.Timeseries.Buckets {
		m = math.Max(m, float64(b.Active+b.Draining+b.Starting))
	}
	return m
}

// workersChart: active and draining workers over time, as steps.
// An autoscaler run adds its starting workers (cold starts holding GPUs), dotted.
func workersChart(id string, runs []runView) templates.Chart {
	title := "Active and draining workers over time"
	cols := []bucketColumn{
		{"active (workers)", func(b sim.Bucket) string { return format.TableInt(b.Active) }},
		{"draining (workers)", func(b sim.Bucket) string { return format.TableInt(b.Draining) }},
	}
	starting := anyStarting(runs)
	if starting {
		title = "Active, starting and draining workers over time"
		cols = append(cols, bucketColumn{"starting (workers)", func(b sim.Bucket) string { return format.TableInt(b.Starting) }})
	}
	table := timeTable("Workers at the end of each bucket", runs, cols)
	if !hasBuckets(runs) {
		return emptyChart(id, title, "The run has no time series to draw.", table)
	}
	ax := axisRange(runs, maxWorkers)
	cart := cartesian{title: title, yName: "workers", yMax: ax.yMax, xMaxMS: ax.xMaxMS, zoom: true, tooltip: "axis", integerY: true}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	for _, r := range runs {
		activeColor, drainingColor := colorActive, colorDraining
		if r.color != "" {
			activeColor, drainingColor = r.color, r.color
		}
		ts := r.rep.Timeseries
		width := lineWidth(r, runs)
		line.AddSeries(seriesName(r, "active"), stepPoints(ts, func(b sim.Bucket) int64 { return b.Active }),
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: activeColor}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: activeColor, Width: width}))
		// In a compare chart both runs share a colour per run, so draining is told apart by a
		// dashed line instead.
		line.AddSeries(seriesName(r, "draining"), stepPoints(ts, func(b sim.Bucket) int64 { return b.Draining }),
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: drainingColor}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: drainingColor, Width: width, Type: "dashed"}))
		if starting {
			startingColor := colorStarting
			if r.color != "" {
				startingColor = r.color
			}
			line.AddSeries(seriesName(r, "starting"), stepPoints(ts, func(b sim.Bucket) int64 { return b.Starting }),
				charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
				charts.WithItemStyleOpts(opts.ItemStyle{Color: startingColor}),
				charts.WithLineStyleOpts(opts.LineStyle{Color: startingColor, Width: width, Type: "dotted"}))
		}
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(line, wholeAxis), Table: table, HeightPX: chartHeightPX}
}

// lineWidth draws run A wider than run B in an overlay, so where both runs have the same values
// A still shows as a blue edge around B's orange line instead of vanishing beneath it.
func lineWidth(r runView, runs []runView) float32 {
	if len(runs) > 1 && r.rep == runs[0].rep {
		return 4
	}
	return 2
}

// denseLinePoints is where a line has too many points for visible symbols.
const denseLinePoints = 60

func maxTTFTP50(rep *sim.Report) float64 {
	var m float64
	for _, b := range rep.Timeseries.Buckets {
		if b.TTFTP50MS != nil {
			m = math.Max(m, *b.TTFTP50MS)
		}
	}
	return m
}

// ttftOverTimeChart: the median TTFT of the first tokens inside each bucket, drawn at the
// bucket's middle, with gaps where no first token was emitted.
func ttftOverTimeChart(id string, runs []runView) templates.Chart {
	const title = "TTFT over time (p50 per bucket)"
	table := timeTable("Median time to first token of the first tokens in each bucket", runs, []bucketColumn{
		{"TTFT p50 (ms)", func(b sim.Bucket) string { return format.TableOpt(b.TTFTP50MS) }},
	})
	ax := axisRange(runs, maxTTFTP50)
	if ax.yMax == 0 {
		return emptyChart(id, title, "No request emitted a first token, so there is no TTFT to draw.", table)
	}
	cart := cartesian{title: title, yName: "TTFT p50 (ms)", yMax: ax.yMax, xMaxMS: ax.xMaxMS, zoom: true, tooltip: "axis"}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	for _, r := range runs {
		color := r.color
		if color == "" {
			color = colorTTFT
		}
		ts := r.rep.Timeseries
		pts := make([]opts.LineData, 0, len(ts.Buckets))
		for _, b := range ts.Buckets {
			var v any // null: echarts leaves a gap
			if b.TTFTP50MS != nil {
				v = *b.TTFTP50MS
			}
			pts = append(pts, opts.LineData{Value: []any{b.TMS + ts.BucketMS/2, v}})
		}
		width := lineWidth(r, runs)
		// Symbols keep a lone bucket between gaps visible; on a dense line they would be
		// clutter, so they shrink to the line's width.
		symbol := 2 + 2*width
		if len(pts) > denseLinePoints {
			symbol = width + 1
		}
		line.AddSeries(seriesName(r, "TTFT p50"), pts,
			charts.WithLineChartOpts(opts.LineChart{ConnectNulls: opts.Bool(false), ShowSymbol: opts.Bool(true), SymbolSize: symbol}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: width}))
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(line, wholeAxis), Table: table, HeightPX: chartHeightPX}
}

// pullsMax is the tallest bar of the pulls chart: staging attempts (staged + rejected) or
// landings, whichever is higher in a bucket.
func pullsMax(rep *sim.Report) float64 {
	var m float64
	for _, b := range rep.Timeseries.Buckets {
		m = math.Max(m, math.Max(float64(b.PullsStaged+b.PullsRejected), float64(b.PullsLanded)))
	}
	return m
}

// kvcrPullsChart: per bucket, the pulls staged and rejected at staging (stacked: together
// they are every staging attempt) beside the pulls that landed. Landed pulls were staged
// earlier, so stacking them on "staged" would count one pull twice.
func kvcrPullsChart(id, title string, r runView, ax chartAxes) templates.Chart {
	table := timeTable("KVCR pulls per bucket", []runView{r}, []bucketColumn{
		{"staged (pulls)", func(b sim.Bucket) string { return format.TableInt(b.PullsStaged) }},
		{"rejected at staging (pulls)", func(b sim.Bucket) string { return format.TableInt(b.PullsRejected) }},
		{"landed (pulls)", func(b sim.Bucket) string { return format.TableInt(b.PullsLanded) }},
	})
	if ax.yMax == 0 {
		return emptyChart(id, title, "No KVCR pull was staged or rejected in this run.", table)
	}
	cart := cartesian{title: title, yName: "pulls", yMax: ax.yMax, xMaxMS: ax.xMaxMS, zoom: true, tooltip: "axis", integerY: true}
	bar := charts.NewBar()
	bar.SetGlobalOptions(cart.globalOpts()...)
	ts := r.rep.Timeseries
	// Buckets can be a pixel or two wide; a minimum width keeps a lone pull visible.
	minWidth := charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.BarMinWidth = "3" })
	series := func(value func(sim.Bucket) int64) []opts.BarData {
		out := make([]opts.BarData, 0, len(ts.Buckets))
		for _, b := range ts.Buckets {
			out = append(out, opts.BarData{Value: []any{b.TMS + ts.BucketMS/2, value(b)}})
		}
		return out
	}
	bar.AddSeries("staged", series(func(b sim.Bucket) int64 { return b.PullsStaged }),
		charts.WithBarChartOpts(opts.BarChart{Stack: "staging", BarGap: "10%"}), minWidth,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorStaged}))
	bar.AddSeries("rejected at staging", series(func(b sim.Bucket) int64 { return b.PullsRejected }),
		charts.WithBarChartOpts(opts.BarChart{Stack: "staging", BarGap: "10%"}), minWidth,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorRejected}))
	bar.AddSeries("landed", series(func(b sim.Bucket) int64 { return b.PullsLanded }),
		charts.WithBarChartOpts(opts.BarChart{Stack: "landed", BarGap: "10%"}), minWidth,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorLanded}))
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(bar, wholeAxis), Table: table, HeightPX: chartHeightPX}
}

// anyStarting reports whether a run of the chart has workers starting at some point (only an
// autoscaler run can).
func anyStarting(runs []runView) bool {
	for _, r := range runs {
		for _, b := range r.rep.Timeseries.Buckets {
			if b.Starting > 0 {
				return true
			}
		}
	}
	return false
}
