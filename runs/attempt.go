package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
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
// returns the Result: the final status (queued when the process is shutting down), the error
// message, and for a done run the report (compressed, ready to store), summary and headline. Progress goes to the live followers at once and
// to the run's row at most once per progressSaveInterval; a save that finds the row is no
// longer this attempt's (cancelled elsewhere, taken over) stops the run through cancel.
func (s *Service) simulate(runCtx context.Context, run store.Run, prep preparedRun, attempt int, cancel context.CancelCauseFunc) (r Result) {
	id := run.ID
	if prep.failMsg != "" {
		return Result{Status: store.StatusFailed, Error: prep.failMsg}
	}
	scenario := prep.scenario

	limited, cancelLimit := context.WithTimeoutCause(runCtx, s.cfg.RunTimeout, errWallTime{s.cfg.RunTimeout})
	defer cancelLimit()
	save, stopSaving := s.progressSaver(id, attempt, cancel)
	var lastSave time.Time
	opt := sim.RunOptions{
		Traces:       s.store,
		MaxEvents:    s.cfg.MaxEvents,
		MaxVirtualMS: s.cfg.MaxVirtualMS,
		Progress: func(p float64) {
			s.live.setProgress(id, p)
			if now := time.Now(); now.Sub(lastSave) >= progressSaveInterval {
				lastSave = now
				save(p)
			}
		},
	}
	// The simulation and the report's encoding are batch work: they run at the simulations'
	// priority (nice.go).
	s.lowPriority(func(ownThread bool) {
		opt.OwnThread = ownThread
		r = s.simulateAndEncode(limited, id, scenario, opt)
	})
	stopSaving() // no progress is saved after the run's end is
	return r
}

// simulateAndEncode is simulate's batch work: the run (or the reuse of a report), then its
// report encoded for the store.
func (s *Service) simulateAndEncode(limited context.Context, id string, scenario *sim.Scenario, opt sim.RunOptions) Result {
	rep, err := s.reuseOrRun(limited, id, scenario, opt)
	if err != nil {
		cause := context.Cause(limited)
		var wall errWallTime
		var mem errMemoryBudget
		switch {
		case errors.Is(cause, errShuttingDown), s.runsCtx.Err() != nil:
			return Result{Status: store.StatusQueued}
		case errors.Is(cause, errCancelledByUser), errors.Is(cause, errTakenOver), errors.Is(cause, river.ErrJobCancelledRemotely):
			return Result{Status: store.StatusCancelled, Error: "cancelled by a user before it finished"}
		case errors.As(cause, &wall):
			return Result{Status: store.StatusFailed, Error: wall.Error()}
		case errors.As(cause, &mem):
			return Result{Status: store.StatusFailed, Error: mem.Error()}
		}
	}
	return ResultOf(rep, err)
}

// Result is how a simulation ended, as its run's row records it: done, with the report in gzip
// chunks, its summary and its headline; or failed (or cancelled, or queued again), with the
// message the run keeps.
type Result struct {
	Status, Error     string
	Report            *store.ReportWriter
	Summary, Headline []byte
}

// ResultOf is the result of a simulation that returned rep, or the simulator's own err (a
// limit of the simulator's, or a scenario it cannot run; the causes the worker reads from a
// run's context come first). A fake of the service (web's tests) stores its runs through it,
// so that what it stores is what a worker stores.
func ResultOf(rep *sim.Report, err error) Result {
	switch {
	case errors.Is(err, sim.ErrLimit):
		return Result{Status: store.StatusFailed, Error: err.Error() + "; shrink the workload or the fleet, or raise the server's limits"}
	case err != nil:
		return Result{Status: store.StatusFailed, Error: err.Error()}
	}
	// Encoded into its gzip chunks row by row: the report's JSON is never held whole.
	report := store.NewReportWriter()
	if err := encodeReport(report, rep); err != nil {
		return Result{Status: store.StatusFailed, Error: "encoding the report failed: " + err.Error()}
	}
	summary, err := EncodeSummary(rep)
	if err != nil {
		return Result{Status: store.StatusFailed, Error: "encoding the report's summary failed: " + err.Error()}
	}
	headline, err := json.Marshal(whatif.StoredHeadline(rep))
	if err != nil {
		return Result{Status: store.StatusFailed, Error: "encoding the headline failed: " + err.Error()}
	}
	return Result{Status: store.StatusDone, Report: report, Summary: summary, Headline: headline}
}

// Record stores the result as the end of an attempt at run id (the attempt store.ClaimRun
// gave): the report, summary and headline of a done run; a run queued again goes back to the
// queue; any other ends with its message. store.ErrConflict says the row is no longer this
// attempt's (cancelled meanwhile, or taken over).
func (r Result) Record(ctx context.Context, st *store.Store, id string, attempt int, now time.Time) error {
	switch r.Status {
	case store.StatusDone:
		return st.FinishClaimedReport(ctx, id, attempt, r.Report, r.Summary, r.Headline, now)
	case store.StatusQueued:
		return st.RequeueClaimed(ctx, id, attempt)
	default:
		return st.EndClaimed(ctx, id, attempt, r.Status, r.Error, now)
	}
}

// progressSaver saves a run's progress from a goroutine of its own, one save at a time (one
// asked for while another is under way is dropped: the next comes a second later), so the
// simulation's thread, which may run at a lowered priority (nice.go), never holds a database
// write. A save that finds the row no longer this attempt's (cancelled elsewhere, taken over)
// stops the run through cancel. stop waits for the save under way.
func (s *Service) progressSaver(id string, attempt int, cancel context.CancelCauseFunc) (save func(float64), stop func()) {
	pending := make(chan float64, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range pending {
			ctx, cancelStore := storeCtx()
			err := s.store.SetProgressClaimed(ctx, id, attempt, p)
			cancelStore()
			switch {
			case errors.Is(err, store.ErrConflict):
				cancel(errTakenOver)
			case err != nil:
				s.log.Warn("saving progress failed", "run", id, "err", err)
			}
		}
	}()
	save = func(p float64) {
		select {
		case pending <- p:
		default:
		}
	}
	stop = func() {
		close(pending)
		<-done
	}
	return save, stop
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
func (s *Service) prepare(ctx context.Context, id string) preparedRun {
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
func (s *Service) safeRun(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (rep *sim.Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("simulator panic", "panic", v)
			rep, err = nil, fmt.Errorf("internal error in the simulator (%v); please report this scenario", v)
		}
	}()
	return s.run(ctx, sc, opt)
}

// work is one attempt at a run: claim it, simulate, record the outcome, and tell River what
// became of the job.
func (s *Service) work(jobCtx context.Context, id string) error {
	// The run waits, still queued, until its memory estimate fits the budget beside the runs
	// running here (budget.go).
	ctx, cancelStore := storeCtx()
	prep := s.prepare(ctx, id)
	cancelStore()
	if prep.unavailable {
		return river.JobSnooze(outageSnooze) // not an attempt: try again once the database is back
	}
	if prep.scenario != nil {
		waitCtx, endWait := context.WithTimeout(jobCtx, budgetWait)
		release, err := s.budget.acquire(waitCtx, prep.estimate)
		endWait()
		switch {
		case err != nil && jobCtx.Err() == nil:
			return river.JobSnooze(budgetSnooze) // the budget is still taken: wait outside the slot
		case err != nil:
			return err // shutting down or cancelled: River decides what comes next
		}
		defer release()
	}
	ctx, cancelStore = storeCtx()
	s.refundLostAttempt(ctx, id)
	run, err := s.store.ClaimRun(ctx, id, s.cfg.WorkerName, s.cfg.MaxAttempts, s.now())
	cancelStore()
	switch {
	case errors.Is(err, store.ErrAttemptsExhausted):
		s.live.finish(id, store.StatusFailed)
		return river.JobCancel(err)
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		// Cancelled (or ended) before it started: nothing to run.
		s.live.finish(id, "")
		return nil
	case store.IsUnavailable(err):
		return river.JobSnooze(outageSnooze) // the store could not be reached: not an attempt
	case err != nil:
		return err // River retries
	}
	attempt := run.Attempts

	runCtx, cancel := context.WithCancelCause(jobCtx)
	defer cancel(nil)
	stopOnShutdown := context.AfterFunc(s.runsCtx, func() { cancel(context.Cause(s.runsCtx)) })
	defer stopOnShutdown()
	s.live.setRunning(id, cancel)
	go s.watchClaim(runCtx, id, attempt, cancel)
	s.budget.track(id, prep.estimate, cancel)
	defer s.budget.untrack(id)

	r := s.simulate(runCtx, run, prep, attempt, cancel)
	status := r.Status

	result, err := s.recordThroughOutage(id, attempt, r)
	switch {
	case errors.Is(err, store.ErrConflict):
		// Cancelled by a user (the row already says so) or handed to another attempt: the
		// row is not this attempt's to write.
		s.log.Info("run ended elsewhere", "run", id, "attempt", attempt, "err", err)
		result = nil
	case store.IsUnavailable(err):
		// The outcome is lost with the outage, not through the run: its next start here does
		// not count (refundLostAttempt), and River does not count a snooze either.
		s.log.Error("recording the end of a run failed: database unavailable", "run", id, "status", status, "err", err)
		s.lostAttempts.add(id, attempt)
		result = river.JobSnooze(outageSnooze)
	case err != nil:
		s.log.Error("recording the end of a run failed", "run", id, "status", status, "err", err)
		result = err
	}
	s.log.Info("run ended", "run", id, "status", status, "attempt", attempt, "error", r.Error)
	s.live.finish(id, status)
	return result
}

// record stores how an attempt at a run ended and returns what River should do with its job
// (nil: completed), and the store's error.
func (s *Service) record(id string, attempt int, r Result) (result, err error) {
	ctx, cancelStore := storeCtx()
	defer cancelStore()
	err = r.Record(ctx, s.store, id, attempt, s.now())
	switch r.Status {
	case store.StatusDone:
		return nil, err
	case store.StatusQueued: // this process is shutting down: another start finishes it
		return river.JobSnooze(time.Second), err
	case store.StatusCancelled:
		return river.JobCancel(errCancelledByUser), err
	default: // failed: the simulator's verdict is deterministic, so it is not retried
		return river.JobCancel(errors.New(r.Error)), err
	}
}

// watchClaim cancels a running run once its row is no longer this attempt's running row: a
// user cancelled it (possibly through another server process) or another worker took it over.
func (s *Service) watchClaim(ctx context.Context, id string, attempt int, cancel context.CancelCauseFunc) {
	pollStore(ctx, takeoverPoll, func() bool {
		run, err := s.store.GetRunStatus(ctx, id)
		if err != nil || (run.Status == store.StatusRunning && run.Attempts == attempt) {
			return false
		}
		if run.Status == store.StatusCancelled {
			cancel(errCancelledByUser)
		} else {
			cancel(errTakenOver)
		}
		return true
	})
}
