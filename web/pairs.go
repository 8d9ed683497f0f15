package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// pairKinds is what a pair's kind may be, for messages.
const pairKinds = "hints, guard or autoscaler"

// isPairKind reports whether kind names a counterpart.
func isPairKind(kind string) bool {
	return kind == sim.CounterpartHints || kind == sim.CounterpartGuard || kind == sim.CounterpartAutoscaler
}

// pairOrder returns a scenario and its counterpart ordered as the compare page shows them:
// A has the toggle on (hinted, guard on, the autoscaler: blue), B has it off (no-hint, guard
// off, the fixed fleet: orange).
//
// The autoscaler pair's fixed fleet is the baseline: baseline workers when above 0, else the
// autoscaler's max_workers (sim.FixedFleet).
func pairOrder(sc *sim.Scenario, kind string, baseline int) (a, b *sim.Scenario, err error) {
	if kind == sim.CounterpartAutoscaler {
		if sc.Autoscaler == nil {
			return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Title: "No autoscaler to compare",
				Message: "the autoscaler pair compares a scenario's autoscaler with a fixed fleet of its max_workers (or baseline_workers), and this scenario has no autoscaler: choose Autoscaler in the scale-in section (or add \"autoscaler\": {…}), or pair by hints or guard"}
		}
		other, err := sim.FixedFleet(sc, baseline)
		if err != nil {
			return nil, nil, badRequest(strings.TrimPrefix(err.Error(), "sim: "))
		}
		return sc, other, nil
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
