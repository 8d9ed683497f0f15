package charts

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// ttftDistributionChart draws a histogram of per-request TTFT when every run has per-request
// rows, and otherwise bars of the summary's mean and percentiles (the title says which). Compared
// runs share bins and categories.
func ttftDistributionChart(id string, views []runView) templates.Chart {
	for _, r := range views {
		if r.ttft == nil {
			return ttftPercentiles(id, views)
		}
	}
	return ttftHistogram(id, views)
}

func ttftHistogram(id string, views []runView) templates.Chart {
	const title = "TTFT distribution (histogram of requests)"
	var maxMS float64
	for _, r := range views {
		maxMS = math.Max(maxMS, r.ttft.MaxMS)
	}
	// Each run's counts re-bin exactly into this shared width (see runs.TTFTCounts).
	c, k := runs.NiceStep(maxMS)
	widthMS := runs.StepMS(c, k)
	bins := int(runs.BinOf(maxMS, c, k)) + 1
	labels := make([]string, bins)
	for i := range labels {
		labels[i] = fmt.Sprintf("%s–%s", format.Table(float64(i)*widthMS), format.Table(float64(i+1)*widthMS))
	}
	counts := make([][]int64, len(views))
	var yMax float64
	for i, r := range views {
		counts[i] = r.ttft.Rebin(c, k, bins)
		for _, n := range counts[i] {
			yMax = math.Max(yMax, float64(n))
		}
	}

	table := templates.Table{Caption: "Requests by time to first token", Columns: []string{"TTFT (ms)"}}
	for _, r := range views {
		table.Columns = append(table.Columns, runColumn(r, "requests"))
	}
	for b, label := range labels {
		row := []string{label}
		for i := range views {
			row = append(row, format.TableInt(counts[i][b]))
		}
		table.Rows = append(table.Rows, row)
	}

	cart := cartesian{title: title, xName: "TTFT (ms), bins of " + format.Table(widthMS) + " ms", xCats: labels,
		yName: "requests", yMax: niceAxisMax(yMax), tooltip: "axis", integerY: true}
	bar := charts.NewBar()
	bar.SetGlobalOptions(cart.globalOpts()...)
	bar.SetXAxis(labels)
	for i, r := range views {
		data := make([]opts.BarData, bins)
		for b, n := range counts[i] {
			data[b] = opts.BarData{Value: []any{labels[b], n}}
		}
		bar.AddSeries(seriesName(r, "requests"), data, charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOr(r.color, colorHistogram)}))
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(bar, noZoom), Table: table, HeightPX: chartHeightPX}
}

func ttftPercentiles(id string, views []runView) templates.Chart {
	const title = "TTFT distribution (summary percentiles)"
	stats := []struct {
		label string
		of    func(sim.Distribution) *float64
	}{
		{"mean", func(d sim.Distribution) *float64 { return d.Mean }},
		{"p50", func(d sim.Distribution) *float64 { return d.P50 }},
		{"p90", func(d sim.Distribution) *float64 { return d.P90 }},
		{"p99", func(d sim.Distribution) *float64 { return d.P99 }},
		{"max", func(d sim.Distribution) *float64 { return d.Max }},
	}
	labels := make([]string, len(stats))
	table := templates.Table{Caption: "Time to first token: mean and nearest-rank percentiles", Columns: []string{"statistic"}}
	for _, r := range views {
		table.Columns = append(table.Columns, runColumn(r, "TTFT (ms)"))
	}
	var yMax float64
	for i, s := range stats {
		labels[i] = s.label
		row := []string{s.label}
		for _, r := range views {
			v := s.of(r.rep.Summary.TTFTMS)
			row = append(row, format.TableOpt(v))
			if v != nil {
				yMax = math.Max(yMax, *v)
			}
		}
		table.Rows = append(table.Rows, row)
	}
	if yMax == 0 {
		return emptyChart(id, title, "No request emitted a first token, so there is no TTFT to draw.", table)
	}
	cart := cartesian{title: title, xName: "statistic", xCats: labels, yName: "TTFT (ms)", yMax: niceAxisMax(yMax), tooltip: "axis"}
	bar := charts.NewBar()
	bar.SetGlobalOptions(cart.globalOpts()...)
	bar.SetXAxis(labels)
	for _, r := range views {
		data := make([]opts.BarData, len(stats))
		for i, s := range stats {
			var v any // null: no bar
			if p := s.of(r.rep.Summary.TTFTMS); p != nil {
				v = *p
			}
			data[i] = opts.BarData{Value: []any{labels[i], v}}
		}
		bar.AddSeries(seriesName(r, "TTFT"), data, charts.WithItemStyleOpts(opts.ItemStyle{Color: colorOr(r.color, colorHistogram)}))
	}
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(bar, noZoom), Table: table, HeightPX: chartHeightPX}
}

func colorOr(c, fallback string) string {
	if c == "" {
		return fallback
	}
	return c
}
