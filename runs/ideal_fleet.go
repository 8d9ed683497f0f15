package runs

import (
	"context"
	"time"

	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// RecordIdealFleet keeps what a finished diagnose plan found about its scenario's run: the link
// to the run of the ideal fleet (store.IdealFleet), which the run's page then draws on its
// fleet chart with one lookup, without reading any plan. A plan of another goal, or one whose
// scenario or ideal fleet did not run to the end, records nothing.
func RecordIdealFleet(ctx context.Context, st *store.Store, planID string, res *whatif.Result, now time.Time) error {
	link, ok := idealFleetLink(res)
	if !ok {
		return nil
	}
	link.PlanID, link.CreatedAt = planID, now
	return st.PutIdealFleet(ctx, link)
}

// idealFleetLink is the scenario's run and the ideal fleet's run of a diagnose plan's result.
func idealFleetLink(res *whatif.Result) (store.IdealFleet, bool) {
	if res == nil || res.Diagnose == nil {
		return store.IdealFleet{}, false
	}
	var link store.IdealFleet
	for _, f := range res.Diagnose.Fleets {
		if f.Status != whatif.StatusDone || f.RunID == "" {
			continue
		}
		switch f.Kind {
		case whatif.FleetScenario:
			link.RunID = f.RunID
		case whatif.FleetIdeal:
			link.IdealRunID = f.RunID
		}
	}
	return link, link.RunID != "" && link.IdealRunID != "" && link.RunID != link.IdealRunID
}
