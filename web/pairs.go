package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// pairKinds is what a pair's kind may be, for messages.
const pairKinds = "hints, guard, autoscaler, or with prefill and decode pools load-failure, lease or prefill-drain"

// isPairKind reports whether kind names a counterpart.
func isPairKind(kind string) bool {
	switch kind {
	case sim.CounterpartHints, sim.CounterpartGuard, sim.CounterpartAutoscaler,
		sim.CounterpartLoadFailure, sim.CounterpartLease, sim.CounterpartPrefillDrain:
		return true
	}
	return false
}

// poolPairOrder orders the pairs of a scenario with prefill and decode pools
// (docs/model.md#model-5) by the setting they compare, whichever side the scenario is on: A is
// vLLM's default (load_failure_policy fail; the heartbeat lease of vLLM ≥ 0.22; the wait
// drain), B the other (recompute; the fixed 480 s lease of older vLLM; the skip drain). The
// prefill-drain runs are three: extra is the fixed drain, run beside the pair.
func poolPairOrder(sc *sim.Scenario, kind string) (a, b *sim.Scenario, extra []*sim.Scenario, err error) {
	if sc.Disaggregation == nil {
		return nil, nil, nil, &Error{Status: http.StatusUnprocessableEntity, Title: "No prefill and decode pools",
			Message: "the " + kind + " pair compares settings of prefill and decode pools, and this scenario has none: choose Prefill + decode in the form's Pools section (or add \"disaggregation\": {…}), or pair by hints or guard"}
	}
	if kind == sim.CounterpartPrefillDrain {
		vs, err := sim.PrefillDrainVariants(sc)
		if err != nil {
			return nil, nil, nil, badRequest(strings.TrimPrefix(err.Error(), "sim: "))
		}
		byMode := map[string]*sim.Scenario{}
		for _, v := range vs {
			byMode[v.Disaggregation.PrefillDrain.Mode] = v
		}
		return byMode[sim.DrainWait], byMode[sim.DrainSkip], []*sim.Scenario{byMode[sim.DrainFixed]}, nil
	}
	other, err := sim.Counterpart(sc, kind)
	if err != nil {
		return nil, nil, nil, badRequest(strings.TrimPrefix(err.Error(), "sim: "))
	}
	first := sc.Disaggregation.LoadFailurePolicy == sim.LoadFailureFail
	if kind == sim.CounterpartLease {
		first = sc.Disaggregation.Lease.Mode == sim.LeaseHeartbeat
	}
	if first {
		return sc, other, nil, nil
	}
	return other, sc, nil, nil
}

// pairOrder returns a scenario and its counterpart ordered as the compare page shows them:
// A has the toggle on (hinted, guard on, the autoscaler: blue), B has it off (no-hint, guard
// off, the fixed fleet: orange).
//
// The autoscaler pair's fixed fleet is the baseline: baseline workers when above 0, else the
// autoscaler's max_workers (sim.FixedFleet).
func pairOrder(sc *sim.Scenario, kind string, baseline int) (a, b *sim.Scenario, err error) {
	if kind == sim.CounterpartAutoscaler {
		if sc.Autoscaler == nil && sc.PoolAutoscalers == nil {
			return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Title: "No autoscaler to compare",
				Message: "the autoscaler pair compares a scenario's autoscaler with a fixed fleet of its max_workers (or baseline_workers), and this scenario has no autoscaler: choose Autoscaler in the scale-in section (or add \"autoscaler\": {…}), or pair by hints or guard"}
		}
		other, err := sim.FixedFleet(sc, baseline)
		if err != nil {
			return nil, nil, badRequest(strings.TrimPrefix(err.Error(), "sim: "))
		}
		return sc, other, nil
	}
	if kind == sim.CounterpartLoadFailure || kind == sim.CounterpartLease || kind == sim.CounterpartPrefillDrain {
		a, b, _, err := poolPairOrder(sc, kind)
		return a, b, err
	}
	other, err := sim.Counterpart(sc, kind)
	if err != nil {
		return nil, nil, badRequest(fmt.Sprintf("kind must be %s (got %q)", pairKinds, kind))
	}
	on := sc.Router.Hints
	if kind == sim.CounterpartGuard {
		on = sc.KVCR.RejectDrainingSources
	}
	if on {
		return sc, other, nil
	}
	return other, sc, nil
}
