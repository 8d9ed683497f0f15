package charts

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// The charts of SLO attainment (issue 27): over a run's time, against a capacity plan's rate,
// and the diagnose plan's lag shares.
const (
	idAttainmentOverTime = "attainment-over-time"
	idCapacityCurve      = "capacity-curve"
	idLagShares          = "lag-shares"
	colorAttainment      = "#0f766e"
	colorGPUHours        = "#64748b"
)

// AttainmentOverTime is the share of the requests that arrived in each bucket and met the slo,
// in %, with gaps where none arrived; ok is false for a run without an slo.
func AttainmentOverTime(rep *sim.Report) (templates.Chart, bool) {
	if rep == nil || rep.Summary.SLO == nil {
		return templates.Chart{}, false
	}
	const title = "SLO attainment over time (by arrival)"
	pct := func(b sim.Bucket) *float64 {
		if b.Attainment == nil {
			return nil
		}
		v := math.Round(*b.Attainment*1e5) / 1e3
		return &v
	}
	runs := []runView{{rep: rep}}
	table := timeTable("Share of the requests that arrived in each bucket and met the SLO", runs, []bucketColumn{
		{"Attainment (%)", func(b sim.Bucket) string { return format.TableOpt(pct(b)) }},
	})
	ts := rep.Timeseries
	pts := make([]opts.LineData, 0, len(ts.Buckets))
	drawn := false
	for _, b := range ts.Buckets {
		var v any // null: a gap
		if p := pct(b); p != nil {
			v, drawn = *p, true
		}
		pts = append(pts, opts.LineData{Value: []any{b.TMS + ts.BucketMS/2, v}})
	}
	if !drawn {
		return emptyChart(idAttainmentOverTime, title, "No request finished, so no bucket has an attainment to draw.", table), true
	}
	cart := cartesian{title: title, yName: "Met the SLO (%)", yMax: 100, xMaxMS: runEndMS(rep), zoom: true, tooltip: "axis"}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	line.AddSeries("attainment", pts,
		charts.WithLineChartOpts(opts.LineChart{ConnectNulls: opts.Bool(false), ShowSymbol: opts.Bool(true), SymbolSize: 3}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorAttainment}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: colorAttainment, Width: 2}))
	return templates.Chart{ID: idAttainmentOverTime, Title: title, OptionJSON: encodeOption(line, wholeAxis), Table: table, HeightPX: chartHeightPX}, true
}

// CapacityCurve plots a capacity plan's probes: attainment (%) against the rate per worker,
// the goal as a dotted line.
func CapacityCurve(c *whatif.CapacityResult) templates.Chart {
	out := templates.Chart{ID: idCapacityCurve, Title: "Attainment against the rate per worker",
		Table: templates.Table{Caption: "Capacity probes", Columns: []string{"Requests/s per worker", "Attainment (%)", "Meets the goal"}}}
	yes := map[bool]string{true: "yes", false: "no"}
	var data [][]any
	for _, p := range c.Curve {
		att := "—"
		if p.Attainment != nil {
			v := roundTo(*p.Attainment*100, 3)
			att = format.Number(v)
			data = append(data, []any{p.RatePerWorker, v})
		}
		out.Table.Rows = append(out.Table.Rows, []string{format.Number(p.RatePerWorker), att, yes[p.Feasible]})
	}
	if len(data) == 0 {
		out.Empty = "No probe finished."
		return out
	}
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "axis"},
		"xAxis":     map[string]any{"type": "log", "name": "Requests/s per worker", "nameLocation": "middle", "nameGap": 28},
		"yAxis":     map[string]any{"type": "value", "name": "Met the SLO (%)", "min": 0, "max": 100},
		"series": []any{map[string]any{"name": "attainment", "type": "line", "data": data, "symbolSize": 8,
			"itemStyle": map[string]any{"color": colorAttainment}, "lineStyle": map[string]any{"color": colorAttainment},
			"markLine": map[string]any{"symbol": "none", "silent": true, "lineStyle": map[string]any{"type": "dotted", "color": colorInfeasible},
				"label": map[string]any{"formatter": "goal " + whatif.FormatShare(c.MinAttainment)},
				"data":  []any{map[string]any{"yAxis": c.MinAttainment * 100}}}}},
	}
	return withOption(out, option)
}

// LagShares draws each lag's Shapley share: the attainment points removing it gains (bars on
// the left axis) and the GPU-hours it adds (bars on the right axis).
func LagShares(d *whatif.DiagnoseResult) templates.Chart {
	out := templates.Chart{ID: idLagShares, Title: "What each lag costs (Shapley values)",
		Table: templates.Table{Caption: "Each lag's share of the gap to the run without lags",
			Columns: []string{"Lag", "Attainment it costs (points)", "GPU-hours it adds"}}}
	if len(d.Lags) == 0 {
		out.Empty = "A run with some lags removed did not finish, so the lags are not attributed."
		return out
	}
	var names []string
	var pts, gpu []float64
	for _, l := range d.Lags {
		names = append(names, l.Label)
		pts = append(pts, roundTo(l.AttainmentPoints, 3))
		gpu = append(gpu, roundTo(l.GPUHours, 4))
		out.Table.Rows = append(out.Table.Rows, []string{l.Label, format.Number(roundTo(l.AttainmentPoints, 3)), format.Number(roundTo(l.GPUHours, 4))})
	}
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridLeftPX},
		"tooltip":   map[string]any{"trigger": "axis"},
		"xAxis":     map[string]any{"type": "category", "data": names},
		"yAxis": []any{
			map[string]any{"type": "value", "name": "Attainment (points)"},
			map[string]any{"type": "value", "name": "GPU-hours"},
		},
		"series": []any{
			map[string]any{"name": "attainment it costs (points)", "type": "bar", "data": pts, "yAxisIndex": 0, "itemStyle": map[string]any{"color": colorAttainment}},
			map[string]any{"name": "GPU-hours it adds", "type": "bar", "data": gpu, "yAxisIndex": 1, "itemStyle": map[string]any{"color": colorGPUHours}},
		},
	}
	return withOption(out, option)
}
