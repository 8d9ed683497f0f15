package charts

import (
	"math"
)

// Axis ticks (issue 35): a time axis ticks on round clock or elapsed times (hours for a day),
// evenly spaced and never so close that labels collide; a value axis ends on a round maximum
// just above the data, with ticks that divide it evenly.

// maxValueTicks is how many intervals a value axis has at most.
const maxValueTicks = 6

// niceAxis picks a value axis' maximum and tick step for data reaching v: the step is the
// smallest 1, 2 or 5 × 10^k (at least minStep) that covers v in at most maxValueTicks
// intervals, and the maximum the first multiple of that step at or above v. A peak of 9 reads
// on an axis to 10 in steps of 2, a peak of 526 on one to 600 in steps of 100. Zero (or
// less) gives (0, 0): nothing to draw.
func niceAxis(v, minStep float64) (maxV, step float64) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0
	}
	step = math.Pow(10, math.Floor(math.Log10(v/maxValueTicks)))
	for {
		for _, m := range []float64{1, 2, 5} {
			s := m * step
			if s < minStep*(1-1e-12) {
				continue
			}
			n := math.Ceil(v/s*(1-1e-12) - 1e-9)
			if n <= maxValueTicks {
				return roundFloat(n * s), s
			}
		}
		step *= 10
	}
}

// roundFloat removes the binary noise of a product like 3 × 0.1.
func roundFloat(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 12-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// axisStep is the tick step of an axis whose maximum niceAxis chose: the step niceAxis returns
// for that maximum itself (a maximum is its own covering value).
func axisStep(maxV, minStep float64) float64 {
	_, s := niceAxis(maxV, minStep)
	return s
}

// Time axis ladders: the steps a time axis may tick at, by how its labels read (timeAxis).
const (
	minuteMS = 60_000
	hourMS   = 60 * minuteMS
)

var (
	// h:mm labels: whole minutes, then the hours a day divides into evenly.
	clockLadderMS = []float64{minuteMS, 2 * minuteMS, 5 * minuteMS, 10 * minuteMS, 15 * minuteMS, 30 * minuteMS,
		hourMS, 2 * hourMS, 3 * hourMS, 4 * hourMS, 6 * hourMS, 12 * hourMS, 24 * hourMS}
	// labels in seconds: tenths, then whole seconds and minutes.
	secondsLadderMS = []float64{100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, minuteMS, 2 * minuteMS,
		5 * minuteMS, 10 * minuteMS, 15 * minuteMS, 30 * minuteMS}
)

// msLadder is 1, 2, 5 × 10^k ms up to a step covering spanMS in one interval.
func msLadder(spanMS float64) []float64 {
	var out []float64
	for p := 1.0; ; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			out = append(out, m*p)
			if m*p >= spanMS {
				return out
			}
		}
	}
}

// timeLadder is the ladder of a time axis ending at maxMS, by its labels' formatter.
func timeLadder(maxMS float64) []float64 {
	switch _, formatter := timeAxis(maxMS); formatter {
	case "clockMS":
		return clockLadderMS
	case "secondsMS":
		return secondsLadderMS
	}
	return msLadder(maxMS)
}

// Tick labels of a time axis are at least minTickGapPX apart ("23:00" is about 32 px wide);
// the step in the option is the one for a plot nominalPlotPX wide (a full-width chart at
// 1,280 px), and charts.js refits it to the chart's real width and zoom window.
const (
	minTickGapPX  = 64
	nominalPlotPX = 1000
)

// timeTickStep is the smallest step of the ladder that keeps the labels of a spanMS-long
// window of a plotPX-wide chart at least minTickGapPX apart (the ladder's last step if none).
func timeTickStep(spanMS, plotPX float64, ladder []float64) float64 {
	maxLabels := math.Max(1, math.Floor(plotPX/minTickGapPX))
	for _, s := range ladder {
		if spanMS/s <= maxLabels {
			return s
		}
	}
	return ladder[len(ladder)-1]
}

// patchValueAxis sets a value axis' tick step from its maximum (one niceAxis chose), so the
// ticks divide it evenly; an axis without a numeric maximum, or with its step set already (a
// time axis), is left as it is.
func patchValueAxis(axis map[string]any) {
	if _, set := axis["interval"]; set || axis["type"] != "value" {
		return
	}
	maxV, ok := axis["max"].(float64)
	if !ok || maxV <= 0 {
		return
	}
	minStep, _ := axis["minInterval"].(float64)
	axis["interval"] = axisStep(maxV, minStep)
}

// patchTimeAxis makes a time axis tick on its ladder: the step for the nominal width, the
// ladder and the label gap for charts.js to refit, and no label at the axis' end unless the
// end is a tick itself (the run's end, a few seconds past the last round time, would print
// over it).
func patchTimeAxis(axis map[string]any) {
	if axis["type"] != "value" || !isTimeAxisName(axis["name"]) {
		return
	}
	maxMS, ok := axis["max"].(float64)
	if !ok || maxMS <= 0 {
		return
	}
	ladder := timeLadder(maxMS)
	step := timeTickStep(maxMS, nominalPlotPX, ladder)
	axis["interval"] = step
	axis["tickLadderMS"] = ladder
	axis["tickMinGapPX"] = minTickGapPX
	label, _ := axis["axisLabel"].(map[string]any)
	if label == nil {
		label = map[string]any{}
	}
	onTick := math.Mod(maxMS, step) == 0
	label["showMaxLabel"] = onTick
	label["showMinLabel"] = true
	label["hideOverlap"] = true
	axis["axisLabel"] = label
}

// isTimeAxisName reports whether an axis is a run's time axis (timeAxis names them).
func isTimeAxisName(name any) bool {
	s, _ := name.(string)
	for _, maxMS := range []float64{0, secondsAxisFromMS, clockAxisFromMS} {
		if n, _ := timeAxis(maxMS); n == s {
			return true
		}
	}
	return false
}

// niceAxisMax is niceAxis' maximum.
func niceAxisMax(v float64) float64 {
	m, _ := niceAxis(v, 0)
	return m
}
