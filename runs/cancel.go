package runs

import (
	"context"
	"errors"

	"github.com/scalein-planner/scalein/store"
)

// CancelRun ends a queued or running run as cancelled in the store and cancels its job; a
// worker running it stops at once in this process (live=true), or within takeoverPoll in
// another, and cannot record anything afterwards. A run that already ended is left as it is.
func (s *Service) CancelRun(ctx context.Context, id string) (live bool, err error) {
	run, err := s.store.GetRunStatus(ctx, id)
	if err != nil {
		return false, err
	}
	if run.Status != store.StatusQueued && run.Status != store.StatusRunning {
		return false, nil
	}
	msg := "cancelled by " + canceller(ctx) + " before it started"
	if run.Status == store.StatusRunning {
		msg = "cancelled by " + canceller(ctx) + " before it finished"
	}
	err = s.store.EndRun(ctx, id, store.StatusCancelled, msg, s.now())
	if err != nil && !errors.Is(err, store.ErrConflict) { // ErrConflict: it ended meanwhile
		return false, err
	}
	if err := s.jobs.cancel(ctx, run.JobID); err != nil {
		s.log.Warn("cancelling the job of a run failed", "run", id, "job", run.JobID, "err", err)
	}
	return s.live.cancelRunning(id), nil
}

// canceller names who cancels in the message a cancelled run or plan keeps: the user the
// request carries on a server with users (store.WithOwner, set by the web layer), else "a user".
func canceller(ctx context.Context) string {
	if u := store.OwnerFrom(ctx); u != "" {
		return u
	}
	return "a user"
}
