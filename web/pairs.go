package web

import (
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// pairOrder returns a scenario and its counterpart ordered as the compare page shows them:
// A has the toggle on (hinted, guard on: blue), B has it off (no-hint, guard off: orange).
func pairOrder(sc *sim.Scenario, kind string) (a, b *sim.Scenario, err error) {
	other, err := sim.Counterpart(sc, kind)
	if err != nil {
		return nil, nil, badRequest(fmt.Sprintf("kind must be hints or guard (got %q)", kind))
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
