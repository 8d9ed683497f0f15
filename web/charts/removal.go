package charts

import (
	"fmt"
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// Names of the JavaScript functions charts.js registers: the option carries the name, never
// code, so the page needs no eval and no inline script.
const (
	jsRemovalTimeline = "removalTimeline"
	jsRemovalTooltip  = "removalTooltip"
)

// Legend names are short so the legend fits a half-width chart; the table and the tooltip say
// what each part is.
const (
	seriesOwnWork = "own work"
	seriesPinWait = "pin wait"
)

// timelineLayout is what the removal timelines of a page share so they align: the worker rows
// (every worker drained in any of the runs, in id order) and the time range.
type timelineLayout struct {
	workerIDs []int
	xMaxMS    float64
	// firstMS and lastMS bound what the rows show: the earliest mark, the latest removal or
	// grace deadline.
	firstMS, lastMS float64
}

// focus opens the timeline on the drains when they fill only a small part of the run (a
// one-second drain in a 1,000 s trace is otherwise a sliver); the slider still reaches the
// whole run, and compared timelines share the same window.
func (tl timelineLayout) focus() *zoomWindow {
	span := tl.lastMS - tl.firstMS
	if len(tl.workerIDs) == 0 || tl.xMaxMS <= 0 || span > tl.xMaxMS/2 {
		return wholeAxis
	}
	margin := max(span*0.1, tl.xMaxMS*0.005)
	// Window edges on round numbers, so the edge labels read "475,000" rather than "475,025".
	step := niceCeil((span + 2*margin) / 10)
	from := math.Floor((tl.firstMS-margin)/step) * step
	to := math.Ceil((tl.lastMS+margin)/step) * step
	return &zoomWindow{fromMS: max(0, from), toMS: min(tl.xMaxMS, to)}
}

func timelineAxes(runs []runView) timelineLayout {
	tl := timelineLayout{firstMS: math.Inf(1), lastMS: math.Inf(-1)}
	for _, r := range runs {
		tl.xMaxMS = math.Max(tl.xMaxMS, runEndMS(r.rep))
		for _, w := range r.rep.Workers {
			if w.MarkedAtMS == nil {
				continue
			}
			tl.workerIDs = append(tl.workerIDs, w.ID)
			tl.firstMS = min(tl.firstMS, *w.MarkedAtMS)
			tl.lastMS = max(tl.lastMS, *w.MarkedAtMS, runEndIfUnremoved(w, r.rep))
			// A grace deadline after the end of the run is still worth seeing: the worker went
			// well before it.
			for _, t := range []*float64{w.GraceDeadlineMS, w.RemovedAtMS} {
				if t != nil {
					tl.xMaxMS = math.Max(tl.xMaxMS, *t)
					tl.lastMS = max(tl.lastMS, *t)
				}
			}
		}
	}
	slices.Sort(tl.workerIDs)
	tl.workerIDs = slices.Compact(tl.workerIDs)
	return tl
}

// runEndIfUnremoved is where a drained worker's row ends when it was never removed: the end of
// the run (0 otherwise, so it never widens the window).
func runEndIfUnremoved(w sim.WorkerRow, rep *sim.Report) float64 {
	if w.RemovedAtMS == nil {
		return runEndMS(rep)
	}
	return 0
}

// DrainSegments splits a drained worker's drain into its own work (marked → last work done)
// and the pin wait (last work done → removed). A worker still draining at the end of the run
// is drawn up to the run's end.
func DrainSegments(w sim.WorkerRow, runEndMS float64) (markedMS, lastWorkMS, endMS float64) {
	markedMS = *w.MarkedAtMS
	endMS = runEndMS
	if w.RemovedAtMS != nil {
		endMS = *w.RemovedAtMS
	}
	endMS = math.Max(endMS, markedMS)
	lastWorkMS = markedMS
	if w.LastWorkMS != nil {
		lastWorkMS = *w.LastWorkMS
	}
	lastWorkMS = min(max(lastWorkMS, markedMS), endMS)
	return markedMS, lastWorkMS, endMS
}

func rowLabel(w sim.WorkerRow, drained bool) string {
	switch {
	case !drained:
		return fmt.Sprintf("w%d (not drained)", w.ID)
	case w.Forced:
		return fmt.Sprintf("w%d (forced)", w.ID)
	case w.RemovedAtMS == nil:
		return fmt.Sprintf("w%d (not removed)", w.ID)
	}
	return fmt.Sprintf("w%d", w.ID)
}

// removalTimelineChart draws one row per drained worker: own work, pin wait (highlighted), the
// grace deadline and forced removals. tl fixes rows and time range so compared runs align.
func removalTimelineChart(id, title string, rep *sim.Report, tl timelineLayout) templates.Chart {
	table := removalTable(rep)
	if len(tl.workerIDs) == 0 {
		return emptyChart(id, title, "No worker was drained in this run, so there is no removal to show.", table)
	}
	byID := make(map[int]sim.WorkerRow, len(rep.Workers))
	anyDrained := false
	for _, w := range rep.Workers {
		byID[w.ID] = w
		anyDrained = anyDrained || w.MarkedAtMS != nil
	}
	if !anyDrained {
		return emptyChart(id, title, "No worker was drained in this run, so there is no removal to show.", table)
	}
	// Rows are the shared rows of the workers this run has: a worker the other run started (a
	// w18 of an autoscaler) is not listed in a fleet of 12.
	rows := make([]int, 0, len(tl.workerIDs))
	for _, wid := range tl.workerIDs {
		if _, ok := byID[wid]; ok {
			rows = append(rows, wid)
		}
	}
	end := runEndMS(rep)
	labels := make([]string, len(rows))
	var own, pin []opts.CustomData
	var grace, forced []opts.ScatterData
	for row, wid := range rows {
		w := byID[wid]
		drained := w.MarkedAtMS != nil
		labels[row] = rowLabel(w, drained)
		if !drained {
			continue
		}
		marked, lastWork, removed := DrainSegments(w, end)
		// Zero-length segments are left out, except a drain that took no time at all: it is
		// drawn as a hairline (charts.js gives every segment at least 2 px) so the row is not
		// mistaken for a worker that was never drained.
		if lastWork > marked || removed == marked {
			own = append(own, opts.CustomData{Value: []any{row, marked, lastWork}})
		}
		if removed > lastWork {
			pin = append(pin, opts.CustomData{Value: []any{row, lastWork, removed}})
		}
		if w.GraceDeadlineMS != nil {
			grace = append(grace, opts.ScatterData{Value: []any{*w.GraceDeadlineMS, row}})
		}
		if w.Forced && w.RemovedAtMS != nil {
			forced = append(forced, opts.ScatterData{Value: []any{*w.RemovedAtMS, row}})
		}
	}

	cart := cartesian{title: title, yName: "worker", yCats: labels, xMaxMS: tl.xMaxMS, zoom: true, tooltip: "item"}
	c := charts.NewCustom()
	c.SetGlobalOptions(cart.globalOpts()...)
	segment := func(color string) []charts.SeriesOpts {
		return []charts.SeriesOpts{
			charts.WithCustomChartOpts(opts.CustomChart{RenderItem: jsRemovalTimeline}),
			// x spans both ends so the axis and the zoom take the segment's extent into account.
			charts.WithEncodeOpts(opts.Encode{X: []int{1, 2}, Y: 0}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
			charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: jsRemovalTooltip}),
		}
	}
	// Every series is added even when empty so the legend always explains the same marks.
	c.AddSeries(seriesOwnWork, own, segment(colorOwnWork)...)
	c.AddSeries(seriesPinWait, pin, segment(colorPinWait)...)
	marker := func(name, symbol string, size []int, color string, data []opts.ScatterData) charts.Overlaper {
		s := charts.NewScatter()
		s.AddSeries(name, data,
			charts.WithScatterChartOpts(opts.ScatterChart{Symbol: symbol, SymbolSize: size}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color}))
		return s
	}
	c.Overlap(
		marker("grace deadline", "rect", []int{3, 18}, colorGrace, grace),
		marker("forced removal", "triangle", []int{12, 12}, colorForced, forced),
	)
	// Rows shrink for big drains (256 workers would otherwise make a 7,000 px chart); echarts
	// then thins out the row labels that would overlap.
	rowPX := min(timelineRowPX, max(timelineMinRowPX, timelineMaxBodyPX/len(labels)))
	height := max(timelineMinHeight, len(labels)*rowPX+90)
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(c, tl.focus()), Table: table, HeightPX: height}
}

// removalTable lists every drained worker's lifecycle with units in the headers.
func removalTable(rep *sim.Report) templates.Table {
	t := templates.Table{
		Caption: "Drained workers: marked → last request done (own work) → removed (pin wait: peers still pulling)",
		Columns: []string{"worker", "marked (ms)", "last request done (ms)", "removed (ms)",
			"drain (ms)", "pin wait (ms)", "grace deadline (ms)", "forced"},
	}
	for _, w := range rep.Workers {
		if w.MarkedAtMS == nil {
			continue
		}
		forced := "no"
		if w.Forced {
			forced = "yes"
		}
		removed := format.TableOpt(w.RemovedAtMS)
		if w.RemovedAtMS == nil {
			removed = "not removed by the end"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprintf("w%d", w.ID), format.TableOpt(w.MarkedAtMS), format.TableOpt(w.LastWorkMS),
			removed, format.TableOpt(w.DrainMS), format.TableOpt(w.PinWaitMS), format.TableOpt(w.GraceDeadlineMS), forced})
	}
	return t
}
