package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

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

// storeCtx is the context for the store writes that record a run's end: they must happen even
// when the run's own context was cancelled.
func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// simulate parses the claimed run's stored scenario and runs it under the wall-time limit. It
// returns the final status (queued when the process is shutting down), the error message, and
// for a done run the report (compressed, ready to store), summary and headline JSON. Progress goes to the live followers at once and
// to the run's row at most once per progressSaveInterval; a save that finds the row is no
// longer this attempt's (cancelled elsewhere, taken over) stops the run through cancel.
func (s *Server) simulate(runCtx context.Context, run store.Run, prep preparedRun, attempt int, cancel context.CancelCauseFunc) (status, msg string, report *store.ReportWriter, summary, headline []byte) {
	id := run.ID
	if prep.failMsg != "" {
		return store.StatusFailed, prep.failMsg, nil, nil, nil
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
			s.live.setProgress(id, p)
			if now := time.Now(); now.Sub(lastSave) >= progressSaveInterval {
				lastSave = now
				ctx, cancelStore := storeCtx()
				defer cancelStore()
				err := s.store.SetProgressClaimed(ctx, id, attempt, p)
				switch {
				case errors.Is(err, store.ErrConflict):
					cancel(errTakenOver)
				case err != nil:
					s.log.Warn("saving progress failed", "run", id, "err", err)
				}
			}
		},
	}
	rep, err := s.reuseOrRun(limited, id, scenario, opt)
	if err != nil {
		cause := context.Cause(limited)
		var wall errWallTime
		var mem errMemoryBudget
		switch {
		case errors.Is(cause, errShuttingDown), s.runsCtx.Err() != nil:
			return store.StatusQueued, "", nil, nil, nil
		case errors.Is(cause, errCancelledByUser), errors.Is(cause, errTakenOver), errors.Is(cause, river.ErrJobCancelledRemotely):
			return store.StatusCancelled, "cancelled by a user before it finished", nil, nil, nil
		case errors.As(cause, &wall):
			return store.StatusFailed, wall.Error(), nil, nil, nil
		case errors.As(cause, &mem):
			return store.StatusFailed, mem.Error(), nil, nil, nil
		case errors.Is(err, sim.ErrLimit):
			return store.StatusFailed, err.Error() + "; shrink the workload or the fleet, or raise the server's limits", nil, nil, nil
		default:
			return store.StatusFailed, err.Error(), nil, nil, nil
		}
	}
	// Encoded into its gzip chunks row by row: the report's JSON is never held whole.
	report = store.NewReportWriter()
	if err := encodeReport(report, rep); err != nil {
		return store.StatusFailed, "encoding the report failed: " + err.Error(), nil, nil, nil
	}
	summary, err = encodeSummary(rep)
	if err != nil {
		return store.StatusFailed, "encoding the report's summary failed: " + err.Error(), nil, nil, nil
	}
	headline, err = json.Marshal(sim.Headline(rep))
	if err != nil {
		return store.StatusFailed, "encoding the headline failed: " + err.Error(), nil, nil, nil
	}
	return store.StatusDone, "", report, summary, headline
}

// preparedRun is a stored run's scenario, parsed before the run is claimed, with its memory
// estimate; a run that cannot start has failMsg instead.
type preparedRun struct {
	scenario *sim.Scenario
	estimate int64
	failMsg  string
	// unavailable: the database could not be read; the run is neither started nor failed.
	unavailable bool
}

// prepare reads and parses a queued run and estimates its memory. A scenario over the per-run
// budget (stored before the budget was lowered) fails with the admission message.
func (s *Server) prepare(ctx context.Context, id string) preparedRun {
	run, err := s.store.GetRun(ctx, id)
	if store.IsUnavailable(err) {
		return preparedRun{unavailable: true}
	}
	if err != nil {
		return preparedRun{failMsg: "the run's record could not be read: " + err.Error()}
	}
	scenario, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	if err != nil {
		if _, again := s.store.GetRunStatus(ctx, id); store.IsUnavailable(again) {
			return preparedRun{unavailable: true} // its trace could not be read, not a bad scenario
		}
		return preparedRun{failMsg: "the stored scenario no longer validates: " + err.Error()}
	}
	est := s.estimates.estimate(scenario)
	if err := est.Check(s.cfg.MaxRunMemory, "this server"); err != nil {
		return preparedRun{failMsg: "refused before it started: " + strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	return preparedRun{scenario: scenario, estimate: est.Bytes}
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
