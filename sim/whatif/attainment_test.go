package whatif_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// sloTuneRunner is fakeTuneRunner with an SLO attainment that falls as the target rises:
// 1 − 0.04 f for f = target/32, and 0.999 for the fixed fleet.
type sloTuneRunner struct{ fakeTuneRunner }

func (f *sloTuneRunner) Run(ctx context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	out, err := f.fakeTuneRunner.Run(ctx, scs)
	for i, sc := range scs {
		v := 0.999
		if sc.Autoscaler != nil {
			v = 1 - 0.04*sc.Autoscaler.Target/32
		}
		out[i].Headline = append(out[i].Headline, sim.Figure{Key: sim.HeadlineSLOAttainment, Unit: sim.UnitShare, Value: &v})
	}
	return out, err
}

func withSLO(t *testing.T) *sim.Scenario {
	base := autoscaled(t)
	limit := 3000.0
	base.SLO = &sim.SLO{TTFTMS: &limit}
	return base
}

// By hand (see TestTuneFakeKnownBest for the GPU-hours): without min_attainment the best is
// target 32 (f = 1, attainment 96 %, 7.4 GPU-hours). With min_attainment 0.965, f = 1 fails
// (96 % < 96.5 %) and f = 0.75 (target 24, 97 %) is the largest feasible target: refined and
// combined as before it uses 10 − 1.5 − 0.5 − 0.1 + 0.1 − 0.1 = 7.9 GPU-hours.
func TestTuneMinAttainment(t *testing.T) {
	res, err := whatif.Plan(context.Background(), &sloTuneRunner{}, withSLO(t), tuneRequest(800))
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	assert.Equal(t, "target 32, window 0 s, no step limit, least_loaded, grace 30 s, migration limit 2", res.Candidates[0].Label)
	assert.Contains(t, res.Recommended.Reason, ", SLO attainment 96 %,")

	req := tuneRequest(800)
	min := 0.965
	req.Constraints.MinAttainment = &min
	res, err = whatif.Plan(context.Background(), &sloTuneRunner{}, withSLO(t), req)
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	best := res.Candidates[0]
	assert.Equal(t, "target 24, window 0 s, no step limit, least_loaded, grace 30 s, migration limit 2", best.Label)
	assert.InDelta(t, 7.9, best.Fleet.GPUHours, 1e-9)
	assert.Contains(t, res.Recommended.Reason, ", SLO attainment 97 % (minimum 96.5 %),")
	assert.Equal(t, 0.965, *res.Constraints.MinAttainment)

	sawAttainmentMiss := false
	for _, c := range res.Candidates {
		v := *value(t, c.Headline, sim.HeadlineSLOAttainment)
		if c.Feasible {
			assert.GreaterOrEqual(t, v, min, c.Label)
			continue
		}
		if v < min {
			sawAttainmentMiss = true
			assert.Contains(t, strings.Join(c.Violations, "; "), "SLO attainment 9", c.Label)
			assert.Contains(t, strings.Join(c.Violations, "; "), "is below the minimum of 96.5 %", c.Label)
		}
	}
	assert.True(t, sawAttainmentMiss, "some candidate should fail only by attainment")

	// Nothing meets 99.95 %: no recommendation, and the reason names the attainment.
	min = 0.9995
	res, err = whatif.Plan(context.Background(), &sloTuneRunner{}, withSLO(t), req)
	require.NoError(t, err)
	assert.Nil(t, res.Recommended)
	assert.Contains(t, res.Reason, "is below the minimum of 99.95 %")
}

func TestMinAttainmentValidation(t *testing.T) {
	cases := []struct {
		name     string
		base     func(*testing.T) *sim.Scenario
		min      float64
		fragment string
	}{
		{"ErrNoSLO", autoscaled, 0.99, `needs a scenario with an slo`},
		{"ErrAboveOne", withSLO, 99, "at most 1, such as 0.99 for 99 %"},
		{"ErrZero", withSLO, 0, "above 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, req := range []whatif.Request{tuneRequest(800), {Goal: whatif.Goal{Remove: 1}}} {
				req.Constraints.MinAttainment = &c.min
				_, err := whatif.Plan(context.Background(), &sloTuneRunner{}, c.base(t), req)
				var ve *sim.ValidationError
				require.ErrorAs(t, err, &ve)
				found := false
				for _, fe := range ve.Errors {
					if fe.Path == "constraints.min_attainment" && strings.Contains(fe.Message, c.fragment) {
						found = true
					}
				}
				assert.True(t, found, "%v", ve)
			}
		})
	}
}
