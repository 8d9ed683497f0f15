package whatif_test

import (
	"math"
	"testing"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 (M1, L4, L7): every number of a plan request is finite and bounded before it is
// marshalled or expanded, and a missing goal is reported once, at the goal.
func TestNormalizeBounds(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	inf, negInf := math.Inf(1), math.Inf(-1)
	cases := []struct {
		name      string
		req       whatif.Request
		wantPaths []string
		wantText  string
	}{
		{"ttft +Inf", whatif.Request{Goal: whatif.Goal{Remove: 1}, Constraints: whatif.Constraints{TTFTP99MS: &inf}}, []string{"constraints.ttft_p99_ms"}, "finite"},
		{"ttft -Inf", whatif.Request{Goal: whatif.Goal{Remove: 1}, Constraints: whatif.Constraints{TTFTP99MS: &negInf}}, []string{"constraints.ttft_p99_ms"}, "finite"},
		{"last wave past the virtual-time limit", whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 2.5e9},
			Search: whatif.Search{Waves: []int{2}, GapsMS: []float64{1e9}}}, []string{"goal.start_ms"}, "after the simulator's virtual-time limit"},
		{"start at 1e10 with default waves", whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 1e10}}, []string{"goal.start_ms"}, ""},
		{"no goal: one error, at the goal", whatif.Request{}, []string{"goal.remove"}, "at least 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := whatif.Normalize(base, tc.req)
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			var paths []string
			for _, fe := range ve.Errors {
				paths = append(paths, fe.Path)
			}
			assert.Equal(t, tc.wantPaths, paths, ve.Error())
			assert.Contains(t, ve.Errors[0].Message, tc.wantText)
		})
	}
	// A last wave just inside the limit is accepted.
	_, err := whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 1e9}, Search: whatif.Search{Waves: []int{2}, GapsMS: []float64{1e9}}})
	require.NoError(t, err)
}

// Sentences go through the one number formatter: no binary-float tails.
func TestFormatMSUsesTheNumberFormatter(t *testing.T) {
	assert.Equal(t, "482.880296 s", whatif.FormatMS(482880.29551))
	assert.Equal(t, "0.1 ms", whatif.FormatMS(0.1))
	assert.Equal(t, "30 s", whatif.FormatMS(30000))
	assert.Equal(t, "12\u202f345 s", whatif.FormatMS(12345000))
}

// Issue 19 L7: an index on a single value says so instead of `has no field ""`.
func TestAxisIndexOnASingleValue(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	_, err := whatif.Expand(base, []whatif.Axis{{Path: "kvcr.bandwidth_gbps[0]", Values: []any{1}}}, sim.ParseEnv{}, 10)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kvcr.bandwidth_gbps is a single value, not a list; remove [0]")
	assert.NotContains(t, err.Error(), `no field ""`)
}
