package runs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// Submit is the one way scenarios become runs (the form, the API, pairs, sweeps and plans): it
// stores and queues them, all or none, in one transaction, each run's row with its job. A full
// queue (more than Config.QueueSize runs waiting) refuses the whole submission with
// ErrQueueFull before anything is written. An identical scenario reuses its run (the id is
// content-addressed); one that failed or was cancelled is queued again. The runs are recorded
// as asked for directly by a user, so cancelling a sweep or plan that shares them leaves them
// alone; sweeps and plans use submitPoints.
func (s *Service) Submit(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error) {
	return s.submitRuns(ctx, true, scenarios)
}

// submitPoints is Submit for the points of a sweep or the candidates of a plan.
func (s *Service) submitPoints(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error) {
	return s.submitRuns(ctx, false, scenarios)
}

func (s *Service) submitRuns(ctx context.Context, direct bool, scenarios []*sim.Scenario) ([]store.Submitted, error) {
	// A direct submission meets the queue bound before any memory estimate (issue 19 M8: a
	// burst past the bound spent seconds of CPU estimating scenarios it then refused). Sweeps
	// and plans are fed only as the queue has room (sweep_feed.go, plan_driver.go).
	if direct {
		if err := s.QueueRoom(ctx, scenarios...); err != nil {
			return nil, err
		}
	}
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

// QueueRoom answers ErrQueueFull when submitting these scenarios now would pass the queue bound
// (scenarios already stored and not failed or cancelled need no room). It reads the queue and
// computes no memory estimate, so handlers call it before Admit; Submit checks again.
func (s *Service) QueueRoom(ctx context.Context, scenarios ...*sim.Scenario) error {
	ids := make([]string, len(scenarios))
	for i, sc := range scenarios {
		ids[i] = sc.ID()
	}
	err := s.store.QueueRoom(ctx, ids, s.cfg.QueueSize)
	if errors.Is(err, store.ErrQueueFull) {
		return ErrQueueFull
	}
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	return nil
}

// QueueFullRetry is how long a plan, or a sweep being fed, waits before submitting again when
// the queue is full.
const QueueFullRetry = time.Second
