package charts

import (
	"fmt"
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// largeDrainWorkers is the number of drained workers above which a page stops drawing a row per
// worker: the removal timeline becomes workers removed over time plus the distributions of drain
// and pin wait, and the per-worker table is paginated. 40 rows still read as a timeline at the
// chart's minimum row height; 256 rows are zero-width bars and 15,000 px of page.
const largeDrainWorkers = 40

// Chart ids of the aggregate drain charts.
const (
	idRemovedOverTime   = "removed-over-time"
	idDrainDistribution = "drain-distribution"
)

// drainedCount counts the workers a report marked draining.
func drainedCount(rep *sim.Report) int {
	n := 0
	for _, w := range rep.Workers {
		if w.MarkedAtMS != nil {
			n++
		}
	}
	return n
}

// IsLargeDrain says whether any of the runs drains more workers than a timeline row each allows.
func IsLargeDrain(reports ...*sim.Report) bool {
	for _, r := range reports {
		if r != nil && drainedCount(r) > largeDrainWorkers {
			return true
		}
	}
	return false
}

// drainAggregateCharts replaces the removal timeline of large drains: how many drained workers
// are gone over time, and how long drains and pin waits took.
func drainAggregateCharts(idPrefix string, views []runView) []templates.Chart {
	return []templates.Chart{removedOverTimeChart(idPrefix+idRemovedOverTime, views), drainDistributionChart(idPrefix+idDrainDistribution, views)}
}

// removedOverTimeChart: the number of drained workers removed by each instant, as steps.
func removedOverTimeChart(id string, views []runView) templates.Chart {
	const title = "Drained workers removed over time"
	tl := timelineAxes(views)
	table := templates.Table{Caption: "When each tenth of the drained workers was gone (ms)", Columns: []string{"share removed"}}
	for _, r := range views {
		table.Columns = append(table.Columns, runColumn(r, "time (ms)"))
	}
	cart := cartesian{title: title, yName: "workers removed", xMaxMS: tl.xMaxMS, zoom: true, tooltip: "axis", integerY: true}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	removedTimes := make([][]float64, len(views))
	for i, r := range views {
		var times []float64
		for _, w := range r.rep.Workers {
			if w.MarkedAtMS != nil && w.RemovedAtMS != nil {
				times = append(times, *w.RemovedAtMS)
			}
		}
		slices.Sort(times)
		removedTimes[i] = times
		pts := []opts.LineData{{Value: []any{0, 0}}}
		for k, t := range times {
			// One point per distinct instant: workers removed together are one step.
			if k+1 < len(times) && times[k+1] == t {
				continue
			}
			pts = append(pts, opts.LineData{Value: []any{t, k + 1}})
		}
		pts = append(pts, opts.LineData{Value: []any{tl.xMaxMS, len(times)}})
		color := colorPinWait
		if r.color != "" {
			color = r.color
		}
		line.AddSeries(seriesName(r, "removed"), pts,
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: lineWidth(r, views)}))
	}
	for tenth := 1; tenth <= 10; tenth++ {
		row := []string{fmt.Sprintf("%d %%", tenth*10)}
		for _, times := range removedTimes {
			if len(times) == 0 {
				row = append(row, "—")
				continue
			}
			k := int(math.Ceil(float64(len(times))*float64(tenth)/10)) - 1
			row = append(row, format.Table(times[max(0, k)]))
		}
		table.Rows = append(table.Rows, row)
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(line, tl.focus()), Table: table}
}

// drainDistributionChart: histograms of drain time and pin wait over the drained workers that
// were removed, on shared bins.
func drainDistributionChart(id string, views []runView) templates.Chart {
	const title = "Drain and pin wait of the removed workers (distribution)"
	type sample struct{ drain, pin []float64 }
	samples := make([]sample, len(views))
	var maxMS float64
	for i, r := range views {
		for _, w := range r.rep.Workers {
			if w.DrainMS == nil || w.MarkedAtMS == nil {
				continue
			}
			samples[i].drain = append(samples[i].drain, *w.DrainMS)
			pin := 0.0 // a worker no peer pulled from waited for none
			if w.PinWaitMS != nil {
				pin = *w.PinWaitMS
			}
			samples[i].pin = append(samples[i].pin, pin)
			maxMS = math.Max(maxMS, *w.DrainMS)
		}
	}
	width := niceCeil(maxMS / runs.HistogramTargetBins)
	if width == 0 {
		width = 1
	}
	bins := int(math.Floor(maxMS/width)) + 1
	labels := make([]string, bins)
	for i := range labels {
		labels[i] = fmt.Sprintf("%s–%s", format.Table(float64(i)*width), format.Table(float64(i+1)*width))
	}
	table := templates.Table{Caption: "Removed workers by drain time and by pin wait", Columns: []string{"time (ms)"}}
	counts := func(vals []float64) []int64 {
		out := make([]int64, bins)
		for _, v := range vals {
			out[min(bins-1, max(0, int(v/width)))]++
		}
		return out
	}
	cart := cartesian{title: title, xCats: labels, xName: "time (ms)", yName: "workers", tooltip: "axis", integerY: true}
	bar := charts.NewBar()
	bar.SetGlobalOptions(cart.globalOpts()...)
	var cols [][]int64
	for i, r := range views {
		drainColor, pinColor := colorOwnWork, colorPinWait
		if r.color != "" {
			drainColor, pinColor = r.color, r.color
		}
		for _, s := range []struct {
			what  string
			vals  []float64
			color string
		}{{"drain", samples[i].drain, drainColor}, {"pin wait", samples[i].pin, pinColor}} {
			c := counts(s.vals)
			cols = append(cols, c)
			table.Columns = append(table.Columns, runColumn(r, s.what+" (workers)"))
			data := make([]opts.BarData, bins)
			for b, n := range c {
				data[b] = opts.BarData{Value: n}
			}
			style := opts.ItemStyle{Color: s.color}
			if s.what == "pin wait" && r.color != "" {
				style.Opacity = opts.Float(0.45)
			}
			bar.AddSeries(seriesName(r, s.what), data, charts.WithItemStyleOpts(style))
		}
	}
	for b := range bins {
		row := []string{labels[b]}
		for _, c := range cols {
			row = append(row, format.TableInt(c[b]))
		}
		table.Rows = append(table.Rows, row)
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(bar, noZoom), Table: table}
}
