package charts

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/calibrate"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// maxScatterPoints bounds the points drawn per pass class; larger classes are thinned evenly
// (every k-th pass), which keeps the page light and the picture the same.
const maxScatterPoints = 2000

var classColors = map[string]string{
	calibrate.ClassPrefill: "#2563eb",
	calibrate.ClassDecode:  "#16a34a",
	calibrate.ClassMixed:   "#d97706",
}

// Calibration plots each pass's measured duration against the fitted model's prediction,
// one series per pass class, with the line where they agree.
func Calibration(id string, t sim.Timing, passes []calibrate.Pass) templates.Chart {
	const title = "Measured against predicted pass time"
	byClass := map[string][]calibrate.Pass{}
	for _, p := range passes {
		byClass[p.Class()] = append(byClass[p.Class()], p)
	}
	table := templates.Table{Caption: "Passes by class: mean measured and predicted time",
		Columns: []string{"class", "passes", "mean measured (ms)", "mean predicted (ms)"}}
	var top float64
	scatter := charts.NewScatter()
	for _, class := range []string{calibrate.ClassPrefill, calibrate.ClassDecode, calibrate.ClassMixed} {
		ps := byClass[class]
		if len(ps) == 0 {
			continue
		}
		step := max(1, (len(ps)+maxScatterPoints-1)/maxScatterPoints)
		var data []opts.ScatterData
		var sumY, sumP float64
		for i, p := range ps {
			y, pred := 1000*p.WallTimeS, calibrate.Predict(t, p)
			sumY += y
			sumP += pred
			top = math.Max(top, math.Max(y, pred))
			if i%step == 0 {
				data = append(data, opts.ScatterData{Value: []any{round6(y), round6(pred)}, SymbolSize: 5})
			}
		}
		n := float64(len(ps))
		table.Rows = append(table.Rows, []string{class, format.TableInt(int64(len(ps))), format.Number(sumY / n), format.Number(sumP / n)})
		scatter.AddSeries(class, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: classColors[class], Opacity: opts.Float(0.6)}))
	}
	if top == 0 {
		return emptyChart(id, title, "No pass to draw.", table)
	}
	axisMax := niceAxisMax(top)
	cart := cartesian{title: title, xName: "measured (ms)", yName: "predicted (ms)", xMaxMS: axisMax, yMax: axisMax, tooltip: "item"}
	scatter.SetGlobalOptions(cart.globalOpts()...)
	line := charts.NewLine()
	line.AddSeries("measured = predicted", []opts.LineData{{Value: []any{0, 0}}, {Value: []any{axisMax, axisMax}}},
		charts.WithLineStyleOpts(opts.LineStyle{Color: colorHistogram, Type: "dashed"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: colorHistogram}))
	scatter.Overlap(line)
	return templates.Chart{ID: id, Title: title, OptionJSON: encodeOption(scatter, noZoom), Table: table, HeightPX: 420}
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
