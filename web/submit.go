package web

import (
	"context"
	"errors"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// submitted is one scenario after submission: its run record and whether it was queued now
// (false: an identical scenario was already stored, and its run is reused).
type submitted struct {
	Run     store.Run
	Created bool
}

// submit stores and queues scenarios, all or none: queue slots are reserved first so a full
// queue refuses the whole submission before anything is written. An identical scenario reuses
// its run (the id is content-addressed); one that failed or was cancelled is queued again.
func (s *Server) submit(ctx context.Context, scenarios ...*sim.Scenario) ([]submitted, error) {
	// Every way in (form, API, pairs, sweeps, plans) meets the per-run memory budget here.
	for _, sc := range scenarios {
		if err := s.admit(sc); err != nil {
			return nil, err
		}
	}
	need := 0
	for _, sc := range scenarios {
		existing, err := s.store.GetRunStatus(ctx, sc.ID())
		switch {
		case errors.Is(err, store.ErrNotFound):
			need++
		case err != nil:
			return nil, fmt.Errorf("submit: look up run %s: %w", sc.ID(), err)
		case existing.Status == store.StatusFailed || existing.Status == store.StatusCancelled:
			need++
		}
	}
	if err := s.queue.reserve(need); err != nil {
		return nil, err
	}
	reserved := need
	defer func() { s.queue.release(reserved) }()

	out := make([]submitted, 0, len(scenarios))
	for _, sc := range scenarios {
		run, created, err := s.store.CreateRun(ctx, sc.ID(), sc.Name, sc.CanonicalJSON(), s.now())
		if err != nil {
			return nil, fmt.Errorf("submit: store run %s: %w", sc.ID(), err)
		}
		if created {
			if reserved > 0 {
				s.queue.pushReserved(run.ID)
				reserved--
			} else {
				// Someone else's failed run was retried between our check and now; it was
				// accepted, so queue it beyond the bound rather than strand it.
				s.queue.pushRecovered(run.ID)
			}
		}
		out = append(out, submitted{Run: run, Created: created})
	}
	return out, nil
}

// pairOrder returns a scenario and its counterpart ordered as the compare page shows them:
// A has the toggle on (hinted, guard on: blue), B has it off (no-hint, guard off: orange).
func pairOrder(sc *sim.Scenario, kind string) (a, b *sim.Scenario, err error) {
	other, err := sim.Counterpart(sc, kind)
	if err != nil {
		return nil, nil, badRequest(fmt.Sprintf("kind must be hints or guard (got %q)", kind))
	}
	on := sc.Router.Hints
	if kind == "guard" {
		on = sc.KVCR.RejectDrainingSources
	}
	if on {
		return sc, other, nil
	}
	return other, sc, nil
}
