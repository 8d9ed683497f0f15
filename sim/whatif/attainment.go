package whatif

import (
	"math"

	"github.com/scalein-planner/scalein/sim"
)

// SLO attainment as a plan constraint (issue 27): constraints.min_attainment.

// checkMinAttainment checks constraints.min_attainment against the base scenario: a share in
// (0, 1], and an slo to judge requests by.
func checkMinAttainment(add func(string, string, ...any), base *sim.Scenario, min *float64) {
	if min == nil {
		return
	}
	if math.IsNaN(*min) || *min <= 0 || *min > 1 {
		add("constraints.min_attainment", "must be a share of requests above 0 and at most 1, such as 0.99 for 99 %%, or left out for no attainment limit (got %v)", *min)
	}
	if base != nil && base.SLO == nil {
		add("constraints.min_attainment", `needs a scenario with an slo, which says what a request must meet: add "slo": {"ttft_ms": 3000, "tpot_ms": 100} (either limit may be left out), or leave min_attainment out`)
	}
}

// attainmentViolation says how a run's attainment (nil: no request judged) falls short of min,
// and by how much relative to it; "" when it does not.
func attainmentViolation(v *float64, min float64) (string, float64) {
	switch {
	case v == nil:
		return "no request was judged against the SLO (the run has no slo or no request), so attainment cannot meet its minimum", 1
	case *v < min:
		return "SLO attainment " + FormatShare(*v) + " is below the minimum of " + FormatShare(min), (min - *v) / min
	}
	return "", 0
}

// shareNotRoundedUp prints a share to three significant digits, except that a share under 1
// never reads "100 %" (99.99 % of requests is not all of them).
func shareNotRoundedUp(v float64) string {
	s := FormatShare(roundSignificant(v, 3))
	if v < 1 && s == "100 %" {
		return "> 99.9 %"
	}
	return s
}

// FormatShare prints a share as a percentage with up to six significant digits ("95.8333 %").
func FormatShare(v float64) string {
	return sim.FormatNumber(math.Round(v*1e6)/1e4) + " %"
}

// attainmentPhrase is a run's attainment for a recommendation: "SLO attainment 99.2 %
// (minimum 99 %)".
func attainmentPhrase(v float64, min *float64) string {
	s := "SLO attainment " + FormatShare(v)
	if min != nil {
		s += " (minimum " + FormatShare(*min) + ")"
	}
	return s
}
