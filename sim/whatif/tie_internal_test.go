package whatif

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Within TuneTieTolerance of the fewest GPU-hours, the recommendation is the feasible candidate
// with the fewest settings changed; outside it, or infeasible, GPU-hours decide.
func TestTuneTiesGoToFewerChangedSettings(t *testing.T) {
	cand := func(label string, gpuh float64, changed int, feasible bool) Candidate {
		return Candidate{Label: label, Status: StatusDone, Feasible: feasible, changed: changed,
			Fleet: &TuneFigures{FleetFigures: FleetFigures{GPUHours: gpuh}}}
	}
	labels := func(cs []Candidate) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.Label
		}
		return out
	}
	cs := []Candidate{
		cand("three changes", 10.00, 3, true),
		cand("two changes", 10.05, 2, true),
		cand("one change, 2 % more", 10.20, 1, true),
		cand("no change, infeasible", 9.0, 0, false),
		cand("one change", 10.09, 1, true),
	}
	rankTune(cs)
	assert.Equal(t, []string{"one change", "three changes", "two changes", "one change, 2 % more", "no change, infeasible"}, labels(cs))
	for i, c := range cs {
		assert.Equal(t, i+1, c.Rank)
	}

	// Nothing within the tolerance changes fewer: the fewest GPU-hours stays first.
	cs = []Candidate{cand("a", 10, 1, true), cand("b", 10.05, 1, true), cand("c", 11, 0, true)}
	rankTune(cs)
	assert.Equal(t, []string{"a", "b", "c"}, labels(cs))
}
