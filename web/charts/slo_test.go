package charts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

func TestAttainmentOverTime(t *testing.T) {
	rep := chartsFixture()
	_, ok := AttainmentOverTime(rep)
	assert.False(t, ok, "a run without an slo has no attainment chart")

	rep.Summary.SLO = &sim.SLOSummary{}
	rep.Timeseries.Buckets[0].Attainment = msPtr(0.5)
	rep.Timeseries.Buckets[1].Attainment = msPtr(0.958)
	c, ok := AttainmentOverTime(rep)
	require.True(t, ok)
	opt := chartOption(t, c)
	data := seriesNamed(t, opt, "attainment")["data"].([]any)
	require.Len(t, data, len(rep.Timeseries.Buckets))
	assert.Equal(t, 50.0, data[0].(map[string]any)["value"].([]any)[1])
	assert.Equal(t, 95.8, data[1].(map[string]any)["value"].([]any)[1])
	if len(data) > 2 {
		assert.Nil(t, data[2].(map[string]any)["value"].([]any)[1], "a bucket where nothing arrived is a gap")
	}
	assert.Equal(t, "50", c.Table.Rows[0][1])
}

func TestLagSharesAndCapacityCurve(t *testing.T) {
	d := &whatif.DiagnoseResult{Lags: []whatif.LagShare{
		{Lag: whatif.LagWarmUp, Label: "warm-up", AttainmentPoints: 3.1, GPUHours: 1.2},
		{Lag: whatif.LagSignal, Label: "signal lag", AttainmentPoints: -0.4, GPUHours: -0.5},
	}}
	c := LagShares(d)
	opt := chartOption(t, c)
	assert.Equal(t, []any{"warm-up", "signal lag"}, opt["xAxis"].(map[string]any)["data"])
	assert.Equal(t, []any{3.1, -0.4}, seriesNamed(t, opt, "attainment it costs (points)")["data"])
	assert.Equal(t, []any{1.2, -0.5}, seriesNamed(t, opt, "GPU-hours it adds")["data"])
	assert.NotEmpty(t, LagShares(&whatif.DiagnoseResult{}).Empty)

	a := 0.995
	cc := CapacityCurve(&whatif.CapacityResult{MinAttainment: 0.99, Curve: []whatif.CapacityPoint{
		{RatePerWorker: 4, Attainment: &a, Feasible: true}, {RatePerWorker: 8, Status: whatif.StatusFailed}}})
	opt = chartOption(t, cc)
	assert.Equal(t, []any{[]any{4.0, 99.5}}, seriesNamed(t, opt, "attainment")["data"])
	assert.Len(t, cc.Table.Rows, 2)
}
