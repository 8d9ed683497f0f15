package runs

import (
	"context"
	"errors"

	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// A drive is a sweep's feeding or a plan's planner, run in the background by the one process
// that holds its lease (lease.go). Sweeps and plans share its life: take the lease, register,
// watch the store for a cancel made elsewhere, work, and on such a cancel cancel again the
// points submitted just after it; resumed at start and at each rescan.

// drive is one sweep or plan driven in this process.
type drive struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	points []whatif.Point // a sweep's every point, for showing the ones not yet submitted
	again  bool           // a plan asked for again while it was stopping here
}

// driveKind is what differs between a sweep and a plan.
type driveKind struct {
	name string // "sweep" or "plan": the lease's key prefix and the logs' word
	// replace: asked for again while driven here, the drive is stopped and started anew (a
	// sweep starts over from the first point its request could not submit). Otherwise it is
	// started again once it stops, if the store still has it unfinished (a plan cancelled and
	// asked for again before it stopped).
	replace    bool
	cancelled  func(ctx context.Context, s *Service, id string) (bool, error)
	unfinished func(s *Service, id string) bool
	// points lists the runs of the sweep or plan, and whether the store still says cancelled.
	points func(ctx context.Context, s *Service, id string) (runIDs []string, cancelled bool, err error)
}

var sweepDrive = &driveKind{name: "sweep", replace: true,
	cancelled: func(ctx context.Context, s *Service, id string) (bool, error) { return s.store.SweepCancelled(ctx, id) },
	points: func(ctx context.Context, s *Service, id string) ([]string, bool, error) {
		sw, points, err := s.store.GetSweep(ctx, id)
		if err != nil {
			return nil, false, err
		}
		ids := make([]string, len(points))
		for i, p := range points {
			ids[i] = p.RunID
		}
		return ids, sw.Cancelled, nil
	}}

var planDrive = &driveKind{name: "plan",
	cancelled: func(ctx context.Context, s *Service, id string) (bool, error) {
		status, err := s.store.PlanStatus(ctx, id)
		return status == store.StatusCancelled, err
	},
	unfinished: func(s *Service, id string) bool { return s.planUnfinished(id) },
	points: func(ctx context.Context, s *Service, id string) ([]string, bool, error) {
		plan, points, err := s.store.GetPlan(ctx, id)
		if err != nil {
			return nil, false, err
		}
		ids := make([]string, len(points))
		for i, p := range points {
			ids[i] = p.RunID
		}
		return ids, plan.Status == store.StatusCancelled, nil
	}}

func (k *driveKind) key(id string) string { return k.name + ":" + id }

// startDrive runs work for the sweep or plan id in the background, unless another process
// holds its lease or this one is shutting down. points are a sweep's, for feedingPoints.
func (s *Service) startDrive(k *driveKind, id string, points []whatif.Point, work func(ctx context.Context)) {
	key := k.key(id)
	hold, ok := s.lockDrive(key)
	if !ok {
		return // another process drives it
	}
	s.mu.Lock()
	old := s.drives[key]
	if s.stopped || (old != nil && !k.replace) {
		if old != nil && !s.stopped {
			old.again = true
		}
		s.mu.Unlock()
		s.unlockDrive(hold)
		return
	}
	ctx, cancel := context.WithCancelCause(s.runsCtx)
	d := &drive{cancel: cancel, done: make(chan struct{}), points: points}
	s.drives[key] = d
	s.driving.Add(1)
	s.mu.Unlock()
	if old != nil {
		old.cancel(errCancelledByUser)
	}
	go func() {
		defer s.driving.Done()
		again := false
		defer func() {
			if again && k.unfinished(s, id) {
				s.startDrive(k, id, points, work)
			}
		}()
		defer close(d.done)
		defer s.unlockDrive(hold)
		defer func() {
			s.mu.Lock()
			if s.drives[key] == d {
				delete(s.drives, key)
			}
			again = d.again
			s.mu.Unlock()
			cancel(nil)
		}()
		if old != nil {
			<-old.done
		}
		s.watchCancelled(ctx, cancel, func(ctx context.Context) (bool, error) { return k.cancelled(ctx, s, id) })
		work(ctx)
		if errors.Is(context.Cause(ctx), errCancelledElsewhere) {
			// Cancelled through another process, whose cancel may have missed the runs
			// submitted here just after it: they are cancelled again (shared ones spared).
			s.cancelPointsAfter(k, id)
		}
	}()
}

// stopDrive stops the drive of the sweep or plan id here, if any, and waits until it has
// stopped, so that nothing is submitted for it after it returns.
func (s *Service) stopDrive(ctx context.Context, k *driveKind, id string) error {
	s.mu.Lock()
	d := s.drives[k.key(id)]
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	d.cancel(errCancelledByUser)
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// cancelDrive cancels the drive of the sweep or plan id here, if any, without waiting.
func (s *Service) cancelDrive(k *driveKind, id string) {
	s.mu.Lock()
	d := s.drives[k.key(id)]
	s.mu.Unlock()
	if d != nil {
		d.cancel(errCancelledByUser)
	}
}

// cancelPointsAfter cancels a cancelled sweep's or plan's unfinished runs again, unless it has
// been asked for again meanwhile.
func (s *Service) cancelPointsAfter(k *driveKind, id string) {
	ctx, cancel := storeCtx()
	defer cancel()
	ids, cancelled, err := k.points(ctx, s, id)
	if err == nil && !cancelled {
		return
	}
	if err == nil {
		sweepID, planID := id, ""
		if k == planDrive {
			sweepID, planID = "", id
		}
		err = s.cancelPoints(ctx, ids, sweepID, planID)
	}
	if err != nil {
		s.log.Error("cancelling a cancelled "+k.name+"'s runs failed", k.name, id, "err", err)
	}
}

// Drives says whether this process drives the sweep or plan id (feeds it, or runs its planner).
func (s *Service) Drives(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drives[sweepDrive.key(id)] != nil || s.drives[planDrive.key(id)] != nil
}

// stopDriving stops every sweep and plan driven here.
func (s *Service) stopDriving(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.drives {
		d.cancel(cause)
	}
}

// cancelPoints stops the unfinished runs of a cancelled sweep or plan (the other id is ""),
// except those something else still waits on: another sweep or plan that lists them, or a
// user who submitted them directly (runs are shared: the same scenario is the same run).
func (s *Service) cancelPoints(ctx context.Context, ids []string, sweepID, planID string) error {
	for _, id := range ids {
		// The check and the cancel are one statement: a run taken up meanwhile is spared.
		cancelled, jobID, err := s.store.CancelUnlessWanted(ctx, id, sweepID, planID, s.now())
		if err != nil {
			return err
		}
		if !cancelled {
			continue
		}
		if err := s.jobs.cancel(ctx, jobID); err != nil {
			s.log.Warn("cancelling the job of a run failed", "run", id, "job", jobID, "err", err)
		}
		s.live.cancelRunning(id)
	}
	return nil
}
