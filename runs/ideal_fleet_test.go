package runs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// Only a diagnose plan whose scenario and ideal fleet both ran links them.
func TestIdealFleetLink(t *testing.T) {
	fleets := func(scenario, ideal string) *whatif.Result {
		return &whatif.Result{Diagnose: &whatif.DiagnoseResult{Fleets: []whatif.FleetOutcome{
			{Kind: whatif.FleetScenario, RunID: "s1", Status: scenario},
			{Kind: whatif.FleetIdeal, RunID: "i1", Status: ideal},
			{Kind: whatif.FleetStatic, RunID: "x1", Status: whatif.StatusDone},
		}}}
	}
	link, ok := idealFleetLink(fleets(whatif.StatusDone, whatif.StatusDone))
	assert.True(t, ok)
	assert.Equal(t, store.IdealFleet{RunID: "s1", IdealRunID: "i1"}, link)
	_, ok = idealFleetLink(fleets(whatif.StatusDone, "failed"))
	assert.False(t, ok, "an ideal fleet that failed is not drawn")
	_, ok = idealFleetLink(&whatif.Result{})
	assert.False(t, ok, "a plan of another goal")
	_, ok = idealFleetLink(nil)
	assert.False(t, ok)
}
