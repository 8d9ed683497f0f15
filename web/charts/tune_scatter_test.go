package charts

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// tuneCandidate is a finished setting with GPU-hours, an attainment (nil: no slo) and a TTFT p99.
func tuneCandidate(i int, gpuh float64, attainment *float64, ttftMS float64, feasible bool) whatif.Candidate {
	return whatif.Candidate{Label: fmt.Sprintf("target %d, window 5 min", i), ScenarioID: fmt.Sprintf("sc%d", i), RunID: fmt.Sprintf("run%d", i),
		Rank: i, Feasible: feasible, Status: "done", Fleet: &whatif.TuneFigures{FleetFigures: whatif.FleetFigures{GPUHours: gpuh}},
		Headline: []sim.Figure{{Key: sim.HeadlineSLOAttainment, Unit: sim.UnitShare, Value: attainment}, {Key: sim.HeadlineTTFTP99MS, Unit: "ms", Value: &ttftMS}}}
}

func share(v float64) *float64 { return &v }

// scatterPoints lists a series' points: x, y and the item itself.
func scatterPoints(t *testing.T, opt map[string]any, series string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range seriesNamed(t, opt, series)["data"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

func xy(p map[string]any) (float64, float64) {
	v := p["value"].([]any)
	return v[0].(float64), v[1].(float64)
}

// Issue 35: a tune plan's scatter puts every setting at (GPU-hours, attainment %), marks the
// recommended one and the scenario's own settings, draws infeasible settings apart and the
// least attainment as a line, and links every point to its run.
func TestTuneScatterAgainstAttainment(t *testing.T) {
	cands := []whatif.Candidate{
		tuneCandidate(1, 41.3, share(0.995), 120, true),
		tuneCandidate(2, 44.0, share(0.999), 90, true),
		tuneCandidate(3, 38.2, share(0.962), 300, false),
		tuneCandidate(4, 47.9, share(0.9995), 80, true),
	}
	cands[2].Violations = []string{"attainment 96.2 % below 99 %"}
	fixed := tuneCandidate(10, 96, share(1), 60, true)
	fixed.Label = "fixed fleet of 4 workers"
	yours := tuneCandidate(11, 52.5, share(0.993), 130, true)
	c := TuneScatter(cands, []whatif.Candidate{fixed, yours}, whatif.Constraints{MinAttainment: share(0.99)}, "sc1")
	require.Empty(t, c.Empty)
	assert.Equal(t, "Settings: GPU-hours against SLO attainment", c.Title)
	opt := chartOption(t, c)

	rec := scatterPoints(t, opt, "Recommended")
	require.Len(t, rec, 1)
	assert.Equal(t, "/runs/run1", rec[0]["url"])
	assert.Contains(t, rec[0]["tip"], "Recommended: target 1, window 5 min")
	assert.Contains(t, rec[0]["tip"], "41.30 GPU-h · 99.5 %")
	x, y := xy(rec[0])
	assert.Equal(t, 41.3, x)
	assert.InDelta(t, 99.5, y, 1e-9, "attainment in %")
	inf := scatterPoints(t, opt, "Infeasible")
	require.Len(t, inf, 1)
	assert.Contains(t, inf[0]["tip"], "infeasible: attainment 96.2 % below 99 %")
	assert.Equal(t, "triangle", seriesNamed(t, opt, "Infeasible")["symbol"])
	assert.Equal(t, "#ffffff", seriesNamed(t, opt, "Infeasible")["itemStyle"].(map[string]any)["color"], "infeasible points are hollow")
	assert.Len(t, scatterPoints(t, opt, "Feasible"), 2, "the recommended point is not drawn twice")
	assert.Equal(t, "/runs/run11", scatterPoints(t, opt, "Your settings")[0]["url"])
	assert.Equal(t, "/runs/run10", scatterPoints(t, opt, "Fixed fleet")[0]["url"])

	// Positions follow the values: sorting the points by x sorts them by GPU-hours, and by y
	// by attainment.
	var pts []map[string]any
	for _, s := range []string{"Feasible", "Infeasible", "Recommended", "Your settings", "Fixed fleet"} {
		pts = append(pts, scatterPoints(t, opt, s)...)
	}
	require.Len(t, pts, 6)
	byName := map[string]whatif.Candidate{}
	for _, cd := range append(cands, fixed, yours) {
		byName[cd.Label] = cd
	}
	slices.SortFunc(pts, func(a, b map[string]any) int { ax, _ := xy(a); bx, _ := xy(b); return int(ax*1000 - bx*1000) })
	for i := 1; i < len(pts); i++ {
		assert.Less(t, byName[pts[i-1]["name"].(string)].Fleet.GPUHours, byName[pts[i]["name"].(string)].Fleet.GPUHours)
	}
	for _, p := range pts {
		_, y := xy(p)
		assert.InDelta(t, *sim.FigureValue(byName[p["name"].(string)].Headline, sim.HeadlineSLOAttainment)*100, y, 1e-9)
	}

	// Axes: GPU-hours from a round number below the cheapest to one above the dearest;
	// attainment up to 100 % from a round number below the lowest point.
	xAxis, yAxis := opt["xAxis"].(map[string]any), opt["yAxis"].(map[string]any)
	assert.Equal(t, "GPU-hours (GPU-h)", xAxis["name"])
	assert.Equal(t, "SLO attainment (%)", yAxis["name"])
	assert.Equal(t, 100.0, yAxis["max"])
	assert.LessOrEqual(t, yAxis["min"], 96.2)
	assert.Greater(t, yAxis["min"], 80.0, "the attainment axis does not start at 0")
	assert.LessOrEqual(t, xAxis["min"], 38.2)
	assert.Greater(t, xAxis["min"], 0.0, "GPU-hours start near the cheapest setting")
	assert.GreaterOrEqual(t, xAxis["max"], 96.0)
	line := seriesNamed(t, opt, "Pareto front")["markLine"].(map[string]any)
	assert.Equal(t, 99.0, line["data"].([]any)[0].(map[string]any)["yAxis"], "the least attainment is drawn")
	assert.Equal(t, "least attainment 99 %", line["label"].(map[string]any)["formatter"])

	// The table says the same, with the marks and the runs.
	require.Len(t, c.Table.Rows, 6)
	assert.Equal(t, []string{"1", "target 1, window 5 min", "41.30 GPU-h", "99.5 %", "yes", "no", "recommended", "run1"}, c.Table.Rows[0])
	assert.Equal(t, "your settings", c.Table.Rows[5][6])
}

// Without an slo the scatter measures TTFT p99, with the plan's limit as the line.
func TestTuneScatterAgainstTTFT(t *testing.T) {
	cands := []whatif.Candidate{tuneCandidate(1, 10, nil, 120, true), tuneCandidate(2, 12, nil, 340, false)}
	limit := 200.0
	c := TuneScatter(cands, nil, whatif.Constraints{TTFTP99MS: &limit}, "")
	opt := chartOption(t, c)
	assert.Equal(t, "TTFT p99 (ms)", opt["yAxis"].(map[string]any)["name"])
	assert.Equal(t, 400.0, opt["yAxis"].(map[string]any)["max"])
	assert.Empty(t, scatterPoints(t, opt, "Recommended"))
	line := seriesNamed(t, opt, "Pareto front")["markLine"].(map[string]any)
	assert.Equal(t, 200.0, line["data"].([]any)[0].(map[string]any)["yAxis"])

	empty := TuneScatter([]whatif.Candidate{{Label: "not run"}}, nil, whatif.Constraints{}, "")
	assert.NotEmpty(t, empty.Empty)
	assert.Len(t, empty.Table.Rows, 1, "the table still lists the setting")
}

func TestNiceRange(t *testing.T) {
	for _, tc := range []struct{ lo, hi, min, max, step float64 }{
		{41.3, 47.9, 40, 48, 2},
		{38.2, 96, 20, 100, 20},
		{0.5, 0.5, 0.5, 0.55, 0.01},
		{0, 0, 0, 1, 0.2},
	} {
		lo, hi, step := niceRange(tc.lo, tc.hi)
		assert.InDelta(t, tc.min, lo, 1e-9, "%v–%v", tc.lo, tc.hi)
		assert.InDelta(t, tc.max, hi, 1e-9, "%v–%v", tc.lo, tc.hi)
		assert.InDelta(t, tc.step, step, 1e-9, "%v–%v", tc.lo, tc.hi)
	}
}
