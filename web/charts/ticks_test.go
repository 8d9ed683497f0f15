package charts

import (
	"math"
	"math/rand/v2"
	"testing"

	gecharts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// Issue 35: a value axis ends on a round maximum just above the data, in even steps.
func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct{ v, minStep, max, step float64 }{
		{9, 1, 10, 2},      // the day's peak of 9 workers: not an axis to 100
		{10, 1, 10, 2},     // a peak on a round number ends there
		{11, 1, 12, 2},     // 12, not 20
		{3, 1, 3, 1},       // a few workers: a tick each
		{1, 1, 1, 1},       // one worker
		{526, 1, 600, 100}, // workers removed over a day
		{2900, 1, 3000, 500},
		{159, 0, 200, 50}, // TTFT p99 in ms
		{0.03, 0, 0.03, 0.005},
		{100, 0, 100, 20}, // a share in %
		{0, 1, 0, 0},
		{-3, 0, 0, 0},
	} {
		m, s := niceAxis(tc.v, tc.minStep)
		assert.InDelta(t, tc.max, m, 1e-12, "max for %v", tc.v)
		assert.InDelta(t, tc.step, s, 1e-12, "step for %v", tc.v)
	}
	// On any value: the maximum covers it, is a whole number of steps (at most maxValueTicks),
	// exceeds it by less than a step, and the step is 1, 2 or 5 × 10^k.
	rng := rand.New(rand.NewPCG(35, 1))
	for range 5000 {
		v := math.Pow(10, rng.Float64()*10-4)
		m, s := niceAxis(v, 0)
		require.GreaterOrEqual(t, m, v*(1-1e-12), "%v", v)
		require.Less(t, m-v, s*(1+1e-9), "%v: %v in steps of %v", v, m, s)
		n := m / s
		require.InDelta(t, math.Round(n), n, 1e-6, "%v: %v in steps of %v", v, m, s)
		require.LessOrEqual(t, math.Round(n), float64(maxValueTicks))
		mant := s / math.Pow(10, math.Floor(math.Log10(s)+1e-9))
		require.Contains(t, []float64{1, 2, 5}, math.Round(mant*1e6)/1e6, "step %v", s)
		require.InDelta(t, s, axisStep(m, 0), s*1e-9, "axisStep recovers the step of %v", m)
	}
}

// Issue 35: a time axis ticks on round times evenly, as many as its width has room for.
func TestTimeTickStep(t *testing.T) {
	const day = 24 * hourMS
	for _, tc := range []struct {
		span, plotPX, want float64
		ladder             []float64
	}{
		{day, 1000, 2 * hourMS, clockLadderMS}, // a full-width chart at 1,280 px: every 2 h
		{day, 430, 4 * hourMS, clockLadderMS},  // a half-width chart
		{day, 256, 6 * hourMS, clockLadderMS},  // a phone
		{day, 200, 12 * hourMS, clockLadderMS},
		{hourMS, 1000, 5 * minuteMS, clockLadderMS},
		{2 * hourMS, 1000, 10 * minuteMS, clockLadderMS}, // zoomed in on two hours
		{2 * hourMS, 256, 30 * minuteMS, clockLadderMS},
		{15 * minuteMS, 1000, minuteMS, secondsLadderMS},
		{60, 1000, 5, msLadder(60)},
		{day * 10, 1000, 24 * hourMS, clockLadderMS}, // past the ladder: its last step
	} {
		got := timeTickStep(tc.span, tc.plotPX, tc.ladder)
		assert.Equal(t, tc.want, got, "%v ms over %v px", tc.span, tc.plotPX)
		if tc.span/tc.want <= tc.plotPX/minTickGapPX {
			assert.GreaterOrEqual(t, tc.plotPX/(tc.span/got), float64(minTickGapPX), "labels keep their gap")
		}
	}
	// Every step of the clock ladder divides a day evenly, so ticks land on the same clock
	// times every day; every step of the seconds ladder divides an hour.
	for _, s := range clockLadderMS {
		assert.Zero(t, math.Mod(24*hourMS, s), "%v", s)
	}
	for _, s := range secondsLadderMS {
		assert.Zero(t, math.Mod(hourMS, s), "%v", s)
	}
}

// The time axis of a day's chart carries the step, the ladder charts.js refits from, and no
// label at the run's end when the end is not a tick (it would print over the last one).
func TestTimeAxisTicksInTheOption(t *testing.T) {
	for _, tc := range []struct {
		maxMS    float64
		showLast bool
	}{{86_400_000, true}, {86_415_000, false}} {
		line := gecharts.NewLine()
		line.SetGlobalOptions(cartesian{title: "t", yName: "workers", yMax: 10, xMaxMS: tc.maxMS, zoom: true, tooltip: "axis", integerY: true}.globalOpts()...)
		line.AddSeries("s", []opts.LineData{{Value: []any{0, 1}}, {Value: []any{tc.maxMS, 9}}})
		opt := chartOption(t, templates.Chart{ID: "t", OptionJSON: encodeOption(line, wholeAxis)})
		x := chartAxis(t, opt, "xAxis")
		assert.Equal(t, 2.0*hourMS, x["interval"])
		assert.Len(t, x["tickLadderMS"], len(clockLadderMS))
		assert.Equal(t, tc.showLast, x["axisLabel"].(map[string]any)["showMaxLabel"], "max %v", tc.maxMS)
		y := chartAxis(t, opt, "yAxis")
		assert.Equal(t, 10.0, y["max"])
		assert.Equal(t, 2.0, y["interval"], "ticks divide the maximum evenly")
	}
}

// The plan pages' fleets over time share the run pages' time axis: a day in h:mm on round hours.
func TestFleetsOverTimeTickOnRoundTimes(t *testing.T) {
	day := &sim.Timeseries{BucketMS: 3_600_000}
	for h := range 24 {
		day.Buckets = append(day.Buckets, sim.Bucket{TMS: float64(h) * 3_600_000, Active: 2})
	}
	opt := chartOption(t, TuneFleet(day, day, day))
	x := opt["xAxis"].(map[string]any)
	assert.Equal(t, "clockMS", x["axisLabel"].(map[string]any)["formatter"])
	assert.Equal(t, 86_400_000.0, x["max"])
	assert.Equal(t, 2.0*hourMS, x["interval"])
	assert.NotNil(t, x["tickLadderMS"])
}
