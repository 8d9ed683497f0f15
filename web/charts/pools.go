package charts

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const (
	idPoolFleet = "pool-fleet"
	// Prefill in greens, decode in blues: a pool's states share its hue, lighter for draining
	// and starting.
	colorPrefillActive   = "#15803d"
	colorPrefillDraining = "#f59e0b"
	colorPrefillStarting = "#86efac"
	colorDecodeActive    = "#1d4ed8"
	colorDecodeDraining  = "#b45309"
	colorDecodeStarting  = "#93c5fd"
)

// poolSeries are the per-pool gauges of the time series (docs/model.md#model-5), in stacking order.
var poolSeries = []struct {
	name  string
	color string
	value func(sim.Bucket) int64
}{
	{"prefill active", colorPrefillActive, func(b sim.Bucket) int64 { return b.PrefillActive }},
	{"prefill draining", colorPrefillDraining, func(b sim.Bucket) int64 { return b.PrefillDraining }},
	{"prefill starting", colorPrefillStarting, func(b sim.Bucket) int64 { return b.PrefillStarting }},
	{"decode active", colorDecodeActive, func(b sim.Bucket) int64 { return b.DecodeActive }},
	{"decode draining", colorDecodeDraining, func(b sim.Bucket) int64 { return b.DecodeDraining }},
	{"decode starting", colorDecodeStarting, func(b sim.Bucket) int64 { return b.DecodeStarting }},
}

// PoolFleet draws a run with prefill and decode pools (docs/model.md#model-5): each pool's
// active, draining and starting workers over time, stacked prefill under decode, so the
// height is every worker holding a GPU and each band is one pool's state. The table beside it
// has every bucket's six gauges and the handoffs landed and failed in it. ok is false for a
// run without pools.
func PoolFleet(rep *sim.Report) (templates.Chart, bool) {
	if rep == nil || rep.Summary.Disaggregation == nil {
		return templates.Chart{}, false
	}
	const title = "Prefill and decode workers over time"
	cols := make([]bucketColumn, 0, len(poolSeries)+2)
	for _, s := range poolSeries {
		cols = append(cols, bucketColumn{s.name + " (workers)", func(b sim.Bucket) string { return format.TableInt(s.value(b)) }})
	}
	cols = append(cols,
		bucketColumn{"handoffs landed", func(b sim.Bucket) string { return format.TableInt(b.HandoffsLanded) }},
		bucketColumn{"handoffs failed", func(b sim.Bucket) string { return format.TableInt(b.HandoffsFailed) }})
	runs := []runView{{rep: rep}}
	table := timeTable("Workers of each pool at the end of each bucket, and the handoffs that landed or failed in it", runs, cols)
	if len(rep.Timeseries.Buckets) == 0 {
		return emptyChart(idPoolFleet, title, "The run has no time series to draw.", table), true
	}
	ax := axisRange(runs, func(r *sim.Report) float64 {
		m := float64(len(r.Workers))
		for _, b := range r.Timeseries.Buckets {
			var sum int64
			for _, s := range poolSeries {
				sum += s.value(b)
			}
			m = math.Max(m, float64(sum))
		}
		return m
	})
	cart := cartesian{title: title, yName: "workers", yMax: ax.yMax, xMaxMS: ax.xMaxMS, zoom: true, tooltip: "axis", integerY: true}
	line := charts.NewLine()
	line.SetGlobalOptions(cart.globalOpts()...)
	for _, s := range poolSeries {
		line.AddSeries(s.name, stepPoints(rep.Timeseries, s.value),
			charts.WithLineChartOpts(opts.LineChart{Step: "end", ShowSymbol: opts.Bool(false), Stack: "pools"}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Color: s.color, Opacity: opts.Float(0.45)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: s.color, Width: 1}))
	}
	return templates.Chart{ID: idPoolFleet, Title: title, OptionJSON: encodeOption(line, wholeAxis), Table: table, HeightPX: chartHeightPX}, true
}
