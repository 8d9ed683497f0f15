package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// progressSaveInterval bounds how often a run's progress is written to the store; the event
// streams get every update from memory.
const progressSaveInterval = time.Second

// errWallTime is the cause of a run's context when it exceeds Config.RunTimeout.
type errWallTime struct{ limit time.Duration }

func (e errWallTime) Error() string {
	return fmt.Sprintf("run exceeded its wall-time limit of %s; shrink the workload or the fleet", e.limit)
}

// worker takes runs off the queue until it is closed.
func (s *Server) worker() {
	defer s.workers.Done()
	for {
		id, ok := s.queue.next()
		if !ok {
			return
		}
		s.execute(id)
	}
}

// storeCtx is the context for the store writes that record a run's end: they must happen even
// when the run's own context was cancelled.
func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// preparedRun is a stored run read and parsed before it starts, with its memory estimate; a
// run that cannot start has failMsg instead.
type preparedRun struct {
	scenario *sim.Scenario
	estimate int64
	failMsg  string
}

// prepare reads and parses a queued run and estimates its memory. A scenario over the per-run
// budget (stored before the budget was lowered) will fail with the admission message.
func (s *Server) prepare(ctx context.Context, id string) preparedRun {
	run, err := s.store.GetRun(ctx, id)
	if err != nil {
		return preparedRun{failMsg: "the run's record could not be read: " + err.Error()}
	}
	scenario, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	if err != nil {
		return preparedRun{failMsg: "the stored scenario no longer validates: " + err.Error()}
	}
	est := sim.EstimateMemory(scenario)
	if err := est.Check(s.cfg.MaxRunMemory, "this server"); err != nil {
		return preparedRun{failMsg: "refused before it started: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	return preparedRun{scenario: scenario, estimate: est.Bytes}
}

// execute runs one queued run to its end and records the outcome. The run waits (still queued)
// until its memory estimate fits the total budget beside the runs already running.
func (s *Server) execute(id string) {
	ctx, cancelStore := storeCtx()
	defer cancelStore()
	prep := s.prepare(ctx, id)
	if prep.failMsg == "" {
		release, err := s.budget.acquire(s.runsCtx, prep.estimate)
		if err != nil {
			// Shutting down: the run stays queued in the store for the next start.
			s.queue.finish(id, "")
			return
		}
		defer release()
	}
	if err := s.store.StartRun(ctx, id, s.now()); err != nil {
		// Cancelled or already handled meanwhile: nothing to run.
		s.log.Warn("run not started", "run", id, "err", err)
		s.queue.finish(id, "")
		return
	}
	runCtx, cancel := context.WithCancelCause(s.runsCtx)
	defer cancel(nil)
	s.queue.setRunning(id, cancel)
	s.budget.track(id, prep.estimate, cancel)
	defer s.budget.untrack(id)

	status, msg, report, headline := s.simulate(runCtx, id, prep)

	ctx, cancelStore2 := storeCtx()
	defer cancelStore2()
	var err error
	switch status {
	case store.StatusDone:
		err = s.store.FinishRun(ctx, id, report, headline, s.now())
	case store.StatusQueued:
		err = s.store.Requeue(ctx, id)
	default:
		err = s.store.EndRun(ctx, id, status, msg, s.now())
	}
	if err != nil {
		s.log.Error("recording the end of a run failed", "run", id, "status", status, "err", err)
	}
	s.log.Info("run ended", "run", id, "status", status, "error", msg)
	s.queue.finish(id, status)
}

// simulate parses the stored scenario and runs it under the wall-time limit. It returns the
// final status (queued when the server is shutting down), the error message, and for a done
// run the report and headline JSON.
func (s *Server) simulate(runCtx context.Context, id string, prep preparedRun) (status, msg string, report, headline []byte) {
	if prep.failMsg != "" {
		return store.StatusFailed, prep.failMsg, nil, nil
	}
	scenario := prep.scenario

	limited, cancelLimit := context.WithTimeoutCause(runCtx, s.cfg.RunTimeout, errWallTime{s.cfg.RunTimeout})
	defer cancelLimit()
	var lastSave time.Time
	opt := sim.RunOptions{
		Traces:       s.store,
		MaxEvents:    s.cfg.MaxEvents,
		MaxVirtualMS: s.cfg.MaxVirtualMS,
		Progress: func(p float64) {
			s.queue.setProgress(id, p)
			if now := time.Now(); now.Sub(lastSave) >= progressSaveInterval {
				lastSave = now
				ctx, cancel := storeCtx()
				defer cancel()
				if err := s.store.SetProgress(ctx, id, p); err != nil {
					s.log.Warn("saving progress failed", "run", id, "err", err)
				}
			}
		},
	}
	rep, err := s.safeRun(limited, scenario, opt)
	if err != nil {
		cause := context.Cause(limited)
		var wall errWallTime
		var mem errMemoryBudget
		switch {
		case errors.Is(cause, errShuttingDown):
			return store.StatusQueued, "", nil, nil
		case errors.Is(cause, errCancelledByUser):
			return store.StatusCancelled, "cancelled by a user before it finished", nil, nil
		case errors.As(cause, &wall):
			return store.StatusFailed, wall.Error(), nil, nil
		case errors.As(cause, &mem):
			return store.StatusFailed, mem.Error(), nil, nil
		case errors.Is(err, sim.ErrLimit):
			return store.StatusFailed, err.Error() + "; shrink the workload or the fleet, or raise the server's limits", nil, nil
		default:
			return store.StatusFailed, err.Error(), nil, nil
		}
	}
	report, err = json.Marshal(rep)
	if err != nil {
		return store.StatusFailed, "encoding the report failed: " + err.Error(), nil, nil
	}
	headline, err = json.Marshal(sim.Headline(rep))
	if err != nil {
		return store.StatusFailed, "encoding the headline failed: " + err.Error(), nil, nil
	}
	return store.StatusDone, "", report, headline
}

// safeRun calls the simulator and turns a panic into an error, so one bad run cannot take the
// server down.
func (s *Server) safeRun(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (rep *sim.Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("simulator panic", "panic", v)
			rep, err = nil, fmt.Errorf("internal error in the simulator (%v); please report this scenario", v)
		}
	}()
	return s.run(ctx, sc, opt)
}
