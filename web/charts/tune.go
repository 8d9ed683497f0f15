package charts

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const (
	idTuneScatter   = "tune-scatter"
	idTuneFleet     = "tune-fleet"
	idDiagnoseFleet = "diagnose-fleet"
	colorYours      = colorRunA
	colorFixed      = "#64748b"
	colorLoad       = "#f59e0b"
)

// TuneScatter plots every finished setting: GPU-hours (x) against TTFT p99 (y), feasible and
// infeasible apart, the two baselines marked, the Pareto front as a line and the TTFT limit as
// a horizontal line.
func TuneScatter(cands, baselines []whatif.Candidate, limit *float64) templates.Chart {
	c := templates.Chart{ID: idTuneScatter, Title: "Settings: GPU-hours against TTFT p99",
		Table: templates.Table{Caption: "Settings", Columns: []string{"Rank", "Settings", "GPU-hours", "TTFT p99 (ms)", "Feasible", "Pareto"}}}
	yes := map[bool]string{true: "yes", false: "no"}
	point := func(cd whatif.Candidate) []any {
		y := sim.FigureValue(cd.Headline, sim.HeadlineTTFTP99MS)
		if cd.Fleet == nil || y == nil {
			return nil
		}
		return []any{cd.Fleet.GPUHours, *y, cd.Label}
	}
	var feasible, infeasible, front, base [][]any
	for _, cd := range cands {
		pt := point(cd)
		x := ""
		if pt != nil {
			x = format.Number(roundTo(cd.Fleet.GPUHours, 4))
		}
		c.Table.Rows = append(c.Table.Rows, []string{format.Number(float64(cd.Rank)), cd.Label, x, format.WithUnit(sim.FigureValue(cd.Headline, sim.HeadlineTTFTP99MS), ""), yes[cd.Feasible], yes[cd.Pareto]})
		switch {
		case pt == nil:
		case cd.Feasible:
			feasible = append(feasible, pt)
		default:
			infeasible = append(infeasible, pt)
		}
		if pt != nil && cd.Pareto {
			front = append(front, pt)
		}
	}
	for _, b := range baselines {
		if pt := point(b); pt != nil {
			base = append(base, pt)
		}
	}
	if len(feasible)+len(infeasible) == 0 {
		c.Empty = "No setting has both GPU-hours and a TTFT p99 to plot."
		return c
	}
	slices.SortFunc(front, func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[0].(float64), b[0].(float64)), cmp.Compare(a[1].(float64), b[1].(float64)))
	})
	scatter := func(name, color string, data [][]any, symbol string) map[string]any {
		if data == nil {
			data = [][]any{}
		}
		return map[string]any{"name": name, "type": "scatter", "data": data, "symbolSize": 11, "symbol": symbol,
			"itemStyle": map[string]any{"color": color}, "encode": map[string]any{"x": 0, "y": 1, "tooltip": []int{2, 0, 1}}}
	}
	frontLine := map[string]any{"name": "Pareto front", "type": "line", "data": orEmpty(front), "step": "end", "symbol": "none",
		"lineStyle": map[string]any{"color": colorPareto, "type": "dashed"}, "itemStyle": map[string]any{"color": colorPareto}}
	if limit != nil {
		frontLine["markLine"] = map[string]any{"symbol": "none", "silent": true,
			"lineStyle": map[string]any{"color": colorInfeasible, "type": "dotted"},
			"label":     map[string]any{"formatter": "TTFT p99 limit " + whatif.FormatMS(*limit)},
			"data":      []any{map[string]any{"yAxis": *limit}}}
	}
	yAxis := map[string]any{"type": "value", "name": "TTFT p99 (ms)", "scale": true}
	if limit != nil {
		// The limit is drawn even above every point, so the headroom shows.
		top := *limit
		for _, d := range slices.Concat(feasible, infeasible, base) {
			top = max(top, d[1].(float64))
		}
		yAxis["max"] = math.Ceil(top * 1.05)
	}
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "item"},
		"xAxis":     map[string]any{"type": "value", "name": "GPU-hours", "nameLocation": "middle", "nameGap": 28, "scale": true},
		"yAxis":     yAxis,
		"series": []any{
			scatter("Feasible", colorFeasible, feasible, "circle"),
			scatter("Infeasible", colorInfeasible, infeasible, "triangle"),
			scatter("Baselines (fixed fleet, yours)", colorYours, base, "diamond"),
			frontLine,
		},
	}
	return withOption(c, option)
}

func orEmpty(d [][]any) [][]any {
	if d == nil {
		return [][]any{}
	}
	return d
}

func withOption(c templates.Chart, option map[string]any) templates.Chart {
	b, err := json.Marshal(option)
	if err != nil {
		c.Empty = "The chart could not be built: " + err.Error()
		return c
	}
	c.OptionJSON = string(b)
	return c
}

// TuneFleet draws the workers holding GPUs (active + starting + draining) over time for the
// recommended settings, yours and the fixed fleet (nil: not available), on one time axis with
// the load (requests waiting or running in the fixed fleet's run, where no autoscaler changes
// it).
func TuneFleet(best, yours, fixed *sim.Timeseries) templates.Chart {
	c := templates.Chart{ID: idTuneFleet, Title: "Workers holding GPUs over time: recommended, yours and the fixed fleet",
		Table: templates.Table{Caption: "Workers holding GPUs at the end of each bucket", Columns: []string{"t (s)", "Recommended", "Yours", "Fixed fleet", "Requests in flight (fixed fleet)"}}}
	if best == nil && fixed == nil {
		c.Empty = "The runs' time series are not available."
		return c
	}
	return fleetsOverTime(c, []fleetLine{{"Recommended", colorFeasible, best}, {"Your settings", colorYours, yours}, {"Fixed fleet", colorFixed, fixed}},
		fixed, "Load: requests in flight (fixed fleet)")
}

// fleetLine is one run's workers holding GPUs on a fleet chart (nil ts: not available).
type fleetLine struct {
	name, color string
	ts          *sim.Timeseries
}

// fleetsOverTime draws lines of workers holding GPUs on one time axis, with the requests in
// flight of load's run on a second axis, and tabulates them per bucket of the longest series
// (c.Table's columns: time, one per line, the load).
func fleetsOverTime(c templates.Chart, lines []fleetLine, load *sim.Timeseries, loadName string) templates.Chart {
	var series []any
	held := func(b sim.Bucket) int64 { return b.Active + b.Starting + b.Draining }
	for _, l := range lines {
		if l.ts == nil {
			continue
		}
		data := make([][]any, 0, len(l.ts.Buckets))
		for _, b := range l.ts.Buckets {
			data = append(data, []any{(b.TMS + l.ts.BucketMS) / 1000, held(b)})
		}
		series = append(series, map[string]any{"name": l.name, "type": "line", "step": "end", "symbol": "none", "data": data,
			"lineStyle": map[string]any{"color": l.color}, "itemStyle": map[string]any{"color": l.color}})
	}
	if ts := load; ts != nil {
		data := make([][]any, 0, len(ts.Buckets))
		for _, b := range ts.Buckets {
			data = append(data, []any{(b.TMS + ts.BucketMS) / 1000, b.Waiting + b.Running})
		}
		series = append(series, map[string]any{"name": loadName, "type": "line", "yAxisIndex": 1, "symbol": "none",
			"data": data, "areaStyle": map[string]any{"opacity": 0.15}, "lineStyle": map[string]any{"color": colorLoad, "width": 1}, "itemStyle": map[string]any{"color": colorLoad}})
	}
	// The table: one row per bucket of the longest series.
	var longest *sim.Timeseries
	for _, l := range lines {
		if l.ts != nil && (longest == nil || len(l.ts.Buckets) > len(longest.Buckets)) {
			longest = l.ts
		}
	}
	if longest == nil {
		c.Empty = "The runs' time series are not available."
		return c
	}
	for i, b := range longest.Buckets {
		row := []string{format.Number((b.TMS + longest.BucketMS) / 1000)}
		for _, l := range lines {
			cell := format.Dash
			if l.ts != nil && i < len(l.ts.Buckets) {
				cell = format.Number(float64(held(l.ts.Buckets[i])))
			}
			row = append(row, cell)
		}
		cell := format.Dash
		if ts := load; ts != nil && i < len(ts.Buckets) {
			cell = format.Number(float64(ts.Buckets[i].Waiting + ts.Buckets[i].Running))
		}
		c.Table.Rows = append(c.Table.Rows, append(row, cell))
	}
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "axis"},
		"xAxis":     map[string]any{"type": "value", "name": "Time (s)", "nameLocation": "middle", "nameGap": 28},
		"yAxis": []any{
			map[string]any{"type": "value", "name": "Workers holding GPUs", "minInterval": 1},
			map[string]any{"type": "value", "name": "Requests in flight", "splitLine": map[string]any{"show": false}},
		},
		"series": series,
	}
	return withOption(c, option)
}

// DiagnoseFleet draws a diagnose plan's fleets over time: the scenario's autoscaler, the ideal
// fleet (the run on the offered rate) and the static fleet (nil: not available), with the load
// of the scenario's run.
func DiagnoseFleet(scenario, ideal, static *sim.Timeseries) templates.Chart {
	c := templates.Chart{ID: idDiagnoseFleet, Title: "Workers holding GPUs over time: the scenario's autoscaler, the ideal fleet and a static fleet",
		Table: templates.Table{Caption: "Workers holding GPUs at the end of each bucket", Columns: []string{"t (s)", "The scenario's autoscaler", "The ideal fleet", "Static fleet", "Requests in flight (the scenario)"}}}
	return fleetsOverTime(c, []fleetLine{{"The scenario's autoscaler", colorYours, scenario}, {"The ideal fleet", colorFeasible, ideal}, {"Static fleet", colorFixed, static}},
		scenario, "Load: requests in flight (the scenario)")
}

func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}
