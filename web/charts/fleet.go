package charts

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const (
	idFleet        = "fleet"
	colorStarting  = "#0891b2" // cyan: workers starting (GPUs held, no requests yet)
	colorFleetLoad = "#7c3aed" // violet: sampled load per worker
	colorDecision  = "#dc2626" // red: a decision that changed the fleet
	colorIdeal     = "#16a34a" // green: the ideal fleet, as on the diagnose plan's chart

	idealFleetSeries = "ideal fleet (diagnose plan)"
)

// heldMarks are the reasons a decision kept the fleet, each with its marker on the fleet chart.
var heldMarks = []struct{ reason, symbol, color string }{
	{sim.ReasonStabilized, "circle", "#2563eb"},      // a window held it
	{sim.ReasonHeldByStarting, "diamond", "#0891b2"}, // starting pods would flip the ratio
	{sim.ReasonLimited, "rect", "#d97706"},           // a policy's period used up
	{sim.ReasonAtBound, "pin", "#111827"},            // min_workers / max_workers
	{sim.ReasonAboveMax, "pin", "#7c2d12"},
	{sim.ReasonBelowMin, "pin", "#7c2d12"},
}

// Fleet draws an autoscaler run's fleet over time (docs/model.md#model-3): active, starting and draining
// workers stacked (what holds GPUs), the load per worker each decision saw with the target band
// (target × (1 ± tolerance)) on a second axis, and a marker at each decision that changed the
// fleet. ideal, when a diagnose plan of the run found one (store.IdealFleetOf), is the ideal
// fleet's time series, drawn over the stack as the workers it holds. ok is false for a run
// without an autoscaler.
func Fleet(rep *sim.Report, a *sim.Autoscaler, ideal *sim.Timeseries) (templates.Chart, bool) {
	if rep == nil || rep.Autoscaler == nil || a == nil {
		return templates.Chart{}, false
	}
	const title = "Fleet over time: workers holding GPUs, and the load per worker the autoscaler saw"
	ds := rep.Autoscaler.Decisions
	table := templates.Table{Caption: "Autoscaler decisions: the fleet it saw and the load per worker against the target",
		Columns: []string{"decision (ms)", "active + starting (workers)", "load per worker", "target", "changed the fleet"}}
	for _, d := range ds {
		per, _ := d.PerWorker(a.Target)
		changed := "no"
		if len(d.Drained)+len(d.Cancelled)+len(d.Reactivated)+len(d.Started) > 0 {
			changed = "yes"
		}
		table.Rows = append(table.Rows, []string{format.Table(d.TMS), format.TableInt(int64(d.Current)), format.Table(per), format.Table(a.Target), changed})
	}
	if len(rep.Timeseries.Buckets) == 0 {
		return emptyChart(idFleet, title, "The run has no time series to draw.", table), true
	}
	runs := []runView{{rep: rep}}
	ax := axisRange(runs, func(r *sim.Report) float64 {
		m := float64(r.Summary.Workers.Peak)
		for _, b := range r.Timeseries.Buckets {
			m = math.Max(m, float64(b.Active+b.Starting+b.Draining))
		}
		if ideal != nil {
			for _, b := range ideal.Buckets {
				m = math.Max(m, float64(b.Active+b.Starting+b.Draining))
			}
		}
		return m
	})
	cart := cartesian{title: title, yName: "workers", yMax: ax.yMax, xMaxMS: ax.xMaxMS, zoom: true, tooltip: "axis", integerY: true}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	maxLoad := a.Target * (1 + a.Tolerance)
	for _, d := range ds {
		if per, ok := d.PerWorker(a.Target); ok {
			maxLoad = math.Max(maxLoad, per)
		}
	}
	line.ExtendYAxis(opts.YAxis{Type: "value", Name: "load per worker", NameLocation: "middle", NameGap: 40, Min: 0,
		Max: niceAxisMax(maxLoad), AxisLabel: &opts.AxisLabel{Show: opts.Bool(true)}, SplitLine: &opts.SplitLine{Show: opts.Bool(false)}})
	ts := rep.Timeseries
	for _, s := range []struct {
		name  string
		color string
		value func(sim.Bucket) int64
	}{
		{"active", colorActive, func(b sim.Bucket) int64 { return b.Active }},
		{"starting", colorStarting, func(b sim.Bucket) int64 { return b.Starting }},
		{"draining", colorDraining, func(b sim.Bucket) int64 { return b.Draining }},
	} {
		line.AddSeries(s.name, stepPoints(ts, s.value),
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false), Stack: "fleet"}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Color: s.color, Opacity: opts.Float(0.35)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: s.color, Width: 1}))
	}
	if ideal != nil && len(ideal.Buckets) > 0 {
		// The ideal fleet (docs/model.md, the diagnose plan) holds max(min_workers, ceil(λ/μ))
		// workers: a line over the stack, so the gap between the two is what the lags cost.
		line.AddSeries(idealFleetSeries, stepPoints(*ideal, func(b sim.Bucket) int64 { return b.Active + b.Starting + b.Draining }),
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: colorIdeal}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: colorIdeal, Width: 2, Type: "dashed"}))
	}
	// A long night's decisions (a 24-hour run at 15 s is 5,760) would draw their markers on top
	// of each other: past maxFleetMarkers decisions over at least hourlyFromMS, the markers are
	// aggregated by hour (the table keeps every decision).
	hourly := len(ds) > maxFleetMarkers && ds[len(ds)-1].TMS >= hourlyFromMS
	var load, lo, hi, marks []opts.LineData
	var changed []sim.Decision
	for _, d := range ds {
		if per, ok := d.PerWorker(a.Target); ok {
			load = append(load, opts.LineData{Value: []any{d.TMS, per}})
		}
		lo = append(lo, opts.LineData{Value: []any{d.TMS, a.Target * (1 - a.Tolerance)}})
		hi = append(hi, opts.LineData{Value: []any{d.TMS, a.Target * (1 + a.Tolerance)}})
		if len(d.Drained)+len(d.Cancelled)+len(d.Reactivated)+len(d.Started) > 0 {
			changed = append(changed, d)
			after := d.Current + len(d.Started) + len(d.Reactivated) - len(d.Cancelled) - len(d.Drained)
			marks = append(marks, opts.LineData{Value: []any{d.TMS, after}})
		}
	}
	changedName := "decision that changed the fleet"
	if hourly {
		changedName = "decisions that changed the fleet, by hour"
		marks = byHour(changed, func(d sim.Decision) int {
			return d.Current + len(d.Started) + len(d.Reactivated) - len(d.Cancelled) - len(d.Drained)
		})
	}
	line.AddSeries("load per worker", load,
		charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1, ShowSymbol: opts.Bool(!hourly), SymbolSize: 4}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorFleetLoad}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: colorFleetLoad, Width: 2}))
	for _, band := range []struct {
		name string
		pts  []opts.LineData
	}{{"target band (low)", lo}, {"target band (high)", hi}} {
		line.AddSeries(band.name, band.pts,
			charts.WithLineChartOpts(opts.LineChart{YAxisIndex: 1, ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: colorFleetLoad}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: colorFleetLoad, Width: 1, Type: "dashed", Opacity: opts.Float(0.6)}))
	}
	line.AddSeries(changedName, marks,
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), Symbol: "triangle", SymbolSize: 10}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorDecision}),
		charts.WithLineStyleOpts(opts.LineStyle{Width: 0, Opacity: opts.Float(0)}))
	// Every decision that held the fleet, marked by the rule that held it (docs/model.md#autoscaler reasons),
	// at the fleet size it left.
	for _, m := range heldMarks {
		var pts []opts.LineData
		var held []sim.Decision
		for _, d := range ds {
			if d.Reason == m.reason {
				held = append(held, d)
				pts = append(pts, opts.LineData{Value: []any{d.TMS, d.Desired}})
			}
		}
		if len(pts) == 0 {
			continue
		}
		name := "held: " + strings.ReplaceAll(m.reason, "_", " ")
		if hourly {
			name += ", by hour"
			pts = byHour(held, func(d sim.Decision) int { return d.Desired })
		}
		line.AddSeries(name, pts,
			charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(true), Symbol: m.symbol, SymbolSize: 7}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: m.color}),
			charts.WithLineStyleOpts(opts.LineStyle{Width: 0, Opacity: opts.Float(0)}))
	}
	return templates.Chart{ID: idFleet, Title: title, OptionJSON: encodeOption(line, wholeAxis), Table: table, HeightPX: chartHeightPX}, true
}

// maxFleetMarkers is how many decisions the fleet chart marks one by one; past it, on a run of
// hourlyFromMS or more, byHour.
const (
	maxFleetMarkers = 300
	hourlyFromMS    = 6 * 3_600_000
)

// byHour aggregates decisions into one marker per hour of the run: at the hour's last decision,
// at the fleet size it left (workers), named by how many decisions it stands for.
func byHour(ds []sim.Decision, workers func(sim.Decision) int) []opts.LineData {
	var out []opts.LineData
	for i := 0; i < len(ds); {
		hour := int(ds[i].TMS / 3_600_000)
		j := i
		for j+1 < len(ds) && int(ds[j+1].TMS/3_600_000) == hour {
			j++
		}
		last := ds[j]
		out = append(out, opts.LineData{Name: fmt.Sprintf("%d decisions in hour %d", j-i+1, hour+1), Value: []any{last.TMS, workers(last)}})
		i = j + 1
	}
	return out
}
