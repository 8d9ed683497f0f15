package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// submitted is one scenario after submission: its run record and whether it was queued now
// (false: an identical scenario was already stored, and its run is reused).
type submitted = store.Submitted

// Submit is the one way scenarios become runs (the form, the API, pairs, sweeps and plans): it
// stores and queues them, all or none, in one transaction, each run's row with its job. A full
// queue (more than Config.QueueSize runs waiting) refuses the whole submission with
// ErrQueueFull before anything is written. An identical scenario reuses its run (the id is
// content-addressed); one that failed or was cancelled is queued again. The runs are recorded
// as asked for directly by a user, so cancelling a sweep or plan that shares them leaves them
// alone; sweeps and plans use submitPoints.
func (s *Service) Submit(ctx context.Context, scenarios ...*sim.Scenario) ([]submitted, error) {
	return s.submitRuns(ctx, true, scenarios)
}

// submitPoints is Submit for the points of a sweep or the candidates of a plan.
func (s *Service) submitPoints(ctx context.Context, scenarios ...*sim.Scenario) ([]submitted, error) {
	return s.submitRuns(ctx, false, scenarios)
}

func (s *Service) submitRuns(ctx context.Context, direct bool, scenarios []*sim.Scenario) ([]submitted, error) {
	// Every way in (form, API, pairs, sweeps, plans) meets the per-run memory budget here.
	for _, sc := range scenarios {
		if err := s.Admit(sc); err != nil {
			return nil, err
		}
	}
	runs := make([]store.NewRun, len(scenarios))
	for i, sc := range scenarios {
		runs[i] = store.NewRun{ID: sc.ID(), Name: sc.Name, ScenarioJSON: sc.CanonicalJSON(), Direct: direct, SimKey: sc.SimulationKey()}
	}
	out, err := s.store.SubmitRuns(ctx, runs, s.cfg.QueueSize, s.now(), s.jobs.enqueue)
	if errors.Is(err, store.ErrQueueFull) {
		return nil, ErrQueueFull
	}
	if err != nil {
		return nil, fmt.Errorf("submit: %w", err)
	}
	return out, nil
}

// QueueFullRetry is how long a plan, or a sweep being fed, waits before submitting again when
// the queue is full.
const QueueFullRetry = time.Second
