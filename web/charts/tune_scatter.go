package charts

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const colorRecommended = "#7c3aed"

// tuneMeasure is what a tune scatter's y axis measures: SLO attainment (a share, drawn in %)
// when the scenario has an slo, else TTFT p99.
type tuneMeasure struct {
	key, name, unit string
	title           string
	scale           float64  // figure → axis value (a share × 100)
	limit           *float64 // the plan's constraint on it, in axis units (nil: none)
	limitName       string
	higherIsBetter  bool
}

// measureOf picks the y axis of a tune plan's scatter: attainment when any setting has one.
func measureOf(cands []whatif.Candidate, c whatif.Constraints) tuneMeasure {
	for _, cd := range cands {
		if sim.FigureValue(cd.Headline, sim.HeadlineSLOAttainment) != nil {
			m := tuneMeasure{key: sim.HeadlineSLOAttainment, name: "SLO attainment (%)", title: "Settings: GPU-hours against SLO attainment",
				unit: sim.UnitShare, scale: 100, higherIsBetter: true}
			if v := c.MinAttainment; v != nil {
				limit := *v * 100
				m.limit, m.limitName = &limit, "least attainment "+format.Sig3(limit)+" %"
			}
			return m
		}
	}
	m := tuneMeasure{key: sim.HeadlineTTFTP99MS, name: "TTFT p99 (ms)", title: "Settings: GPU-hours against TTFT p99", unit: "ms", scale: 1}
	if v := c.TTFTP99MS; v != nil {
		m.limit, m.limitName = v, "TTFT p99 limit "+whatif.FormatMS(*v)
	}
	return m
}

// TuneScatter plots every setting a tune plan ran: GPU-hours (x) against SLO attainment in %
// (y), or TTFT p99 when the scenario has no slo. Feasible and infeasible settings are drawn
// apart, the recommended one and the scenario's own settings (and the fixed fleet) marked, the
// Pareto front drawn as a line and the plan's constraint on the y axis as a horizontal line.
// Every point names its settings in its tooltip and links to its run (charts.js follows a
// point's url on a click); the table lists the same.
func TuneScatter(cands, baselines []whatif.Candidate, limits whatif.Constraints, recommendedID string) templates.Chart {
	m := measureOf(slices.Concat(cands, baselines), limits)
	c := templates.Chart{ID: idTuneScatter, Title: m.title,
		Table: templates.Table{Caption: "Every setting the plan ran, best first, then the baselines",
			Columns: []string{"Rank", "Settings", "GPU-hours", m.name, "Feasible", "Pareto", "Marked", "Run"}}}
	yes := map[bool]string{true: "yes", false: "no"}
	type point struct {
		x, y float64
		cd   whatif.Candidate
	}
	pointOf := func(cd whatif.Candidate) (point, bool) {
		y := sim.FigureValue(cd.Headline, m.key)
		if cd.Fleet == nil || y == nil {
			return point{}, false
		}
		return point{x: cd.Fleet.GPUHours, y: *y * m.scale, cd: cd}, true
	}
	item := func(p point, mark string) map[string]any {
		tip := fmt.Sprintf("%s\n%s · %s", p.cd.Label, format.GPUHours(p.x), format.Readable(p.y/m.scale, m.unit))
		if mark != "" {
			tip = mark + ": " + tip
		}
		if !p.cd.Feasible && len(p.cd.Violations) > 0 {
			tip += "\ninfeasible: " + p.cd.Violations[0]
		}
		it := map[string]any{"value": []float64{p.x, p.y}, "name": p.cd.Label, "tip": tip}
		if p.cd.RunID != "" {
			it["url"] = "/runs/" + p.cd.RunID
		}
		return it
	}
	var feasible, infeasible, front, recommended, yours, fixed []any
	var all []point
	var pareto []point
	row := func(cd whatif.Candidate, rank, mark string) {
		x, y := format.Dash, format.Dash
		if cd.Fleet != nil {
			x = format.GPUHours(cd.Fleet.GPUHours)
		}
		if v := sim.FigureValue(cd.Headline, m.key); v != nil {
			y = format.Readable(*v, m.unit)
		}
		c.Table.Rows = append(c.Table.Rows, []string{rank, cd.Label, x, y, yes[cd.Feasible], yes[cd.Pareto], mark, cmp.Or(cd.RunID, format.Dash)})
	}
	for _, cd := range cands {
		mark := ""
		if recommendedID != "" && cd.ScenarioID == recommendedID {
			mark = "recommended"
		}
		row(cd, format.Number(float64(cd.Rank)), mark)
		p, ok := pointOf(cd)
		if !ok {
			continue
		}
		all = append(all, p)
		switch {
		case mark != "":
			recommended = append(recommended, item(p, "Recommended"))
		case cd.Feasible:
			feasible = append(feasible, item(p, ""))
		default:
			infeasible = append(infeasible, item(p, ""))
		}
		if cd.Pareto {
			pareto = append(pareto, p)
		}
	}
	for i, b := range baselines {
		// A tune plan's baselines: the fixed fleet at the autoscaler's maximum, then the
		// scenario's own settings.
		mark, list := "your settings", &yours
		if i == 0 && len(baselines) == 2 {
			mark, list = "fixed fleet", &fixed
		}
		row(b, format.Dash, mark)
		if p, ok := pointOf(b); ok {
			all = append(all, p)
			*list = append(*list, item(p, format.Capitalize(mark)))
		}
	}
	if len(all) == 0 {
		c.Empty = "No setting has both GPU-hours and " + m.name + " to plot."
		return c
	}
	slices.SortFunc(pareto, func(a, b point) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y)) })
	for _, p := range pareto {
		front = append(front, []float64{p.x, p.y})
	}
	scatter := func(name, color, symbol string, size int, hollow bool, data []any) map[string]any {
		style := map[string]any{"color": color}
		if hollow {
			style = map[string]any{"color": "#ffffff", "borderColor": color, "borderWidth": 2}
		}
		return map[string]any{"name": name, "type": "scatter", "data": orNone(data), "symbolSize": size, "symbol": symbol,
			"itemStyle": style, "tooltip": map[string]any{"formatter": "dataTip"}, "cursor": "pointer"}
	}
	frontLine := map[string]any{"name": "Pareto front", "type": "line", "data": orNone(front), "step": "end", "symbol": "none", "silent": true,
		"lineStyle": map[string]any{"color": colorPareto, "type": "dashed"}, "itemStyle": map[string]any{"color": colorPareto}}
	lo, hi := all[0].y, all[0].y
	xLo, xHi := all[0].x, all[0].x
	for _, p := range all {
		lo, hi, xLo, xHi = min(lo, p.y), max(hi, p.y), min(xLo, p.x), max(xHi, p.x)
	}
	if m.limit != nil {
		lo, hi = min(lo, *m.limit), max(hi, *m.limit)
		frontLine["markLine"] = map[string]any{"symbol": "none", "silent": true,
			"lineStyle": map[string]any{"color": colorInfeasible, "type": "dotted", "width": 2},
			"label":     map[string]any{"formatter": m.limitName, "position": "insideEndTop"},
			"data":      []any{map[string]any{"yAxis": *m.limit}}}
	}
	yAxis := map[string]any{"type": "value", "name": m.name, "nameLocation": "middle", "nameGap": 48}
	if m.higherIsBetter {
		// Attainment ends at 100 % and starts on a round number below the lowest point (or the
		// constraint), so the differences between settings show.
		yAxis["max"] = 100
		yAxis["min"], yAxis["interval"] = attainmentFloor(lo)
	} else {
		yAxis["min"] = 0
		yAxis["max"], yAxis["interval"] = niceAxis(hi, 0)
	}
	xMin, xMax, xStep := niceRange(xLo, xHi)
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX, "type": "scroll"},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "item", "renderMode": "richText", "confine": true},
		"xAxis":     map[string]any{"type": "value", "name": "GPU-hours (GPU-h)", "nameLocation": "middle", "nameGap": 28, "min": xMin, "max": xMax, "interval": xStep},
		"yAxis":     yAxis,
		"series": []any{
			scatter("Feasible", colorFeasible, "circle", 10, false, feasible),
			scatter("Infeasible", colorInfeasible, "triangle", 11, true, infeasible),
			scatter("Your settings", colorYours, "diamond", 16, false, yours),
			scatter("Fixed fleet", colorFixed, "rect", 12, false, fixed),
			frontLine,
			// Last and above the rest: a setting with the same figures must not hide it.
			recommendedSeries(scatter("Recommended", colorRecommended, "circle", 18, false, recommended)),
		},
	}
	return withOption(c, option)
}

// attainmentFloor is the bottom of an attainment axis (in %) whose lowest value is lo, and its
// step: the axis spans from a round number at or below lo up to 100 in at most maxValueTicks
// even steps.
func attainmentFloor(lo float64) (floor, step float64) {
	// A tenth more than the points need keeps the lowest off the axis' edge.
	span := (100 - max(0, lo)) * 1.1
	if span <= 0 {
		span = 1 // every setting at 100 %: a sliver below it still shows the points
	}
	span, step = niceAxis(span, 0)
	return max(0, roundFloat(100-span)), step
}

// recommendedSeries draws the recommended setting above every other point (a setting with the
// same figures must not hide it, nor take its clicks), ringed in white.
func recommendedSeries(series map[string]any) map[string]any {
	series["z"] = 4
	series["itemStyle"] = map[string]any{"color": colorRecommended, "borderColor": "#ffffff", "borderWidth": 2}
	return series
}

func orNone(d []any) []any {
	if d == nil {
		return []any{}
	}
	return d
}

// niceRange is an axis from a round number at or below lo to one at or above hi, in at most
// maxValueTicks even steps of 1, 2 or 5 × 10^k: GPU-hours between 41.3 and 47.9 read on an
// axis from 40 to 48 in steps of 2, not from 0.
func niceRange(lo, hi float64) (minV, maxV, step float64) {
	if hi <= lo { // one point (or all at one value): a tenth around it
		hi = lo + math.Abs(lo)/10
		if lo == 0 {
			hi = 1
		}
	}
	_, step = niceAxis(hi-lo, 0)
	for {
		minV, maxV = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
		if (maxV-minV)/step <= maxValueTicks+1e-9 {
			return roundFloat(minV), roundFloat(maxV), step
		}
		step = nextStep(step)
	}
}

// nextStep is the 1, 2, 5 × 10^k step after s (one of them).
func nextStep(s float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(s)+1e-9))
	switch m := math.Round(s / p); m {
	case 1:
		return 2 * p
	case 2:
		return 5 * p
	}
	return 10 * p
}
