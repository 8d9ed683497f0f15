package charts

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const (
	idPlanScatter   = "plan-scatter"
	colorFeasible   = "#16a34a"
	colorInfeasible = "#dc2626"
	colorPareto     = "#334155"
)

// PlanScatter plots every finished candidate: latest removal deadline (x) against TTFT p99 (y),
// feasible and infeasible apart, with the Pareto front (no candidate better on both) as a line.
func PlanScatter(cands []whatif.Candidate) templates.Chart {
	c := templates.Chart{ID: idPlanScatter, Title: "Candidates: latest removal deadline against TTFT p99",
		Table: templates.Table{Caption: "Candidates", Columns: []string{"Rank", "Schedule", "Latest removal (ms)", "TTFT p99 (ms)", "Feasible", "Pareto"}}}
	type pt struct {
		x, y  float64
		label string
	}
	var feasible, infeasible, front [][]any
	var pareto []pt
	for _, cd := range cands {
		x, y := sim.FigureValue(cd.Headline, sim.HeadlineLatestRemovalMS), sim.FigureValue(cd.Headline, sim.HeadlineTTFTP99MS)
		yes := map[bool]string{true: "yes", false: "no"}
		c.Table.Rows = append(c.Table.Rows, []string{format.Number(float64(cd.Rank)), cd.Label, format.WithUnit(x, ""), format.WithUnit(y, ""), yes[cd.Feasible], yes[cd.Pareto]})
		if x == nil || y == nil {
			continue
		}
		item := []any{*x, *y, cd.Label}
		if cd.Feasible {
			feasible = append(feasible, item)
		} else {
			infeasible = append(infeasible, item)
		}
		if cd.Pareto {
			pareto = append(pareto, pt{*x, *y, cd.Label})
		}
	}
	if len(feasible)+len(infeasible) == 0 {
		c.Empty = "No candidate has both a removal deadline and a TTFT p99 to plot."
		return c
	}
	slices.SortFunc(pareto, func(a, b pt) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y)) })
	for _, p := range pareto {
		front = append(front, []any{p.x, p.y, p.label})
	}
	scatter := func(name, color string, data [][]any, symbol string) map[string]any {
		if data == nil {
			data = [][]any{}
		}
		return map[string]any{"name": name, "type": "scatter", "data": data, "symbolSize": 11, "symbol": symbol,
			"itemStyle": map[string]any{"color": color}, "encode": map[string]any{"x": 0, "y": 1, "tooltip": []int{2, 0, 1}}}
	}
	option := map[string]any{
		"animation": false,
		"legend":    map[string]any{"top": legendTopPX},
		"grid":      map[string]any{"top": gridTopPX, "bottom": gridBottomNoZoom, "left": gridLeftPX, "right": gridRightPX},
		"tooltip":   map[string]any{"trigger": "item"},
		"xAxis":     map[string]any{"type": "value", "name": "Latest removal deadline (ms)", "nameLocation": "middle", "nameGap": 28, "scale": true},
		"yAxis":     map[string]any{"type": "value", "name": "TTFT p99 (ms)", "scale": true},
		"series": []any{
			scatter("Feasible", colorFeasible, feasible, "circle"),
			scatter("Infeasible", colorInfeasible, infeasible, "triangle"),
			map[string]any{"name": "Pareto front", "type": "line", "data": front, "step": "end", "symbol": "none",
				"lineStyle": map[string]any{"color": colorPareto, "type": "dashed"}, "itemStyle": map[string]any{"color": colorPareto}},
		},
	}
	b, err := json.Marshal(option)
	if err != nil {
		c.Empty = "The chart could not be built: " + err.Error()
		return c
	}
	c.OptionJSON = string(b)
	return c
}
