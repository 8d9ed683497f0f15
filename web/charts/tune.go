package charts

import (
	"encoding/json"
	"math"

	"github.com/scalein-planner/scalein/sim"
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
	// The data are ms from the start, on the run pages' time axis (round clock times, timeAxis).
	var endMS float64
	for _, l := range lines {
		if l.ts != nil && len(l.ts.Buckets) > 0 {
			last := l.ts.Buckets[len(l.ts.Buckets)-1]
			endMS = max(endMS, last.TMS+l.ts.BucketMS)
		}
	}
	for _, l := range lines {
		if l.ts == nil {
			continue
		}
		data := make([][]any, 0, len(l.ts.Buckets))
		for _, b := range l.ts.Buckets {
			data = append(data, []any{b.TMS + l.ts.BucketMS, held(b)})
		}
		series = append(series, map[string]any{"name": l.name, "type": "line", "step": "end", "symbol": "none", "data": data,
			"lineStyle": map[string]any{"color": l.color}, "itemStyle": map[string]any{"color": l.color}})
	}
	if ts := load; ts != nil {
		data := make([][]any, 0, len(ts.Buckets))
		for _, b := range ts.Buckets {
			data = append(data, []any{b.TMS + ts.BucketMS, b.Waiting + b.Running})
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
		"legend":    map[string]any{"top": legendTopPX, "type": "scroll"}, // one row: a phone scrolls it
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "axis"},
		"xAxis":     timeAxisOption(endMS),
		"yAxis": []any{
			// Names beside the axes, not above them, where the legend is.
			map[string]any{"type": "value", "name": "Workers holding GPUs", "minInterval": 1, "nameLocation": "middle", "nameGap": 40},
			map[string]any{"type": "value", "name": "Requests in flight", "splitLine": map[string]any{"show": false}, "nameLocation": "middle", "nameGap": 40},
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

// timeAxisOption is a time axis from 0 to maxMS as the run pages draw it (timeAxis, its
// labels' formatter and round ticks, patchTimeAxis), for charts built as plain maps.
func timeAxisOption(maxMS float64) map[string]any {
	name, formatter := timeAxis(maxMS)
	axis := map[string]any{"type": "value", "name": name, "nameLocation": "middle", "nameGap": 28, "min": 0, "max": maxMS,
		"axisLabel": map[string]any{"show": true}}
	if formatter != "" {
		axis["axisLabel"].(map[string]any)["formatter"] = formatter
	}
	patchTimeAxis(axis)
	return axis
}
