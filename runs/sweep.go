package runs

import (
	"context"
	"encoding/json"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// CreateSweep expands the axes over base, stores the sweep and submits its points: as many as
// the queue takes now, the rest in the background as room frees up (sweep_feed.go). It returns
// the sweep id, the number of points, and whether every point was already done. Axes that do
// not validate give a *RequestError.
func (s *Service) CreateSweep(ctx context.Context, name string, base *sim.Scenario, axes []whatif.Axis) (id string, points int, allDone bool, err error) {
	ctx = store.WithoutRunQuota(ctx) // a sweep's points count against the quota of sweep points
	pts, err := whatif.Expand(base, axes, sim.ParseEnv{Traces: s.store}, s.cfg.MaxSweepPoints)
	if err != nil {
		return "", 0, false, InvalidRequest("sweep", err)
	}
	// Every point meets the per-run memory budget before anything is stored, so that a point
	// fed later is not refused for it.
	for _, p := range pts {
		if err := s.Admit(p.Scenario); err != nil {
			return "", 0, false, err
		}
	}
	axesJSON, err := json.Marshal(axes)
	if err != nil {
		return "", 0, false, err
	}
	canonical := base.CanonicalJSON()
	id = contentID("sweep", canonical, axesJSON)
	if name == "" {
		name = base.Name
	}
	// A sweep asked again stops feeding the old way and starts over: every point is submitted
	// again (a cancelled or failed one is queued again; a queued or done one is left as it is).
	if err := s.stopDrive(ctx, sweepDrive, id); err != nil {
		return "", 0, false, err
	}
	if _, err := s.store.CreateSweep(ctx, store.Sweep{ID: id, Name: name, ScenarioJSON: canonical, AxesJSON: axesJSON}, nil, s.now()); err != nil {
		return "", 0, false, err
	}
	hold, ok := s.lockDrive(sweepDrive.key(id))
	if !ok {
		// Another process feeds this sweep: queue again the points it has recorded (a
		// cancelled one runs again) and leave the rest to it.
		allDone, err = s.resubmitRecorded(ctx, id, pts)
		return id, len(pts), allDone, err
	}
	defer s.unlockDrive(hold)
	next, allDone, err := s.feedSweep(ctx, id, pts, 0, false)
	if err != nil {
		return "", 0, false, err
	}
	if next < len(pts) {
		s.startSweepFeed(id, pts, next)
	}
	return id, len(pts), allDone, nil
}

// resubmitRecorded submits again the points of a sweep recorded so far, without recording
// anything (the process feeding the sweep does that); allDone says whether every point is done.
func (s *Service) resubmitRecorded(ctx context.Context, id string, pts []whatif.Point) (allDone bool, err error) {
	_, recorded, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return false, err
	}
	scenarios := make([]*sim.Scenario, 0, len(recorded))
	for i := range recorded {
		if i < len(pts) {
			scenarios = append(scenarios, pts[i].Scenario)
		}
	}
	subs, err := s.submitPoints(ctx, scenarios...)
	if err != nil {
		return false, err
	}
	allDone = len(recorded) == len(pts)
	for _, sub := range subs {
		if sub.Run.Status != store.StatusDone {
			allDone = false
		}
	}
	return allDone, nil
}

// CancelSweep stops feeding the sweep's points and cancels the unfinished ones submitted.
func (s *Service) CancelSweep(ctx context.Context, id string) error {
	if err := s.store.CancelSweep(ctx, id); err != nil {
		return notFoundAs("sweep", err)
	}
	if err := s.stopDrive(ctx, sweepDrive, id); err != nil {
		return err
	}
	_, points, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return err
	}
	ids := make([]string, len(points))
	for i, p := range points {
		ids[i] = p.RunID
	}
	return s.cancelPoints(ctx, ids, id, "")
}

// SweepPoints returns every point of a stored sweep, the ones not yet submitted included (the
// queue was full): from the feeding in this process, or expanded again from the stored request.
func (s *Service) SweepPoints(sw store.Sweep) ([]whatif.Point, error) {
	var axes []whatif.Axis
	if err := decodeNumbers(sw.AxesJSON, &axes); err != nil {
		return nil, err
	}
	if pending := s.feedingPoints(sw.ID); len(pending) == AxesPoints(axes) {
		return pending, nil
	}
	return s.expandStored(sw.ScenarioJSON, sw.AxesJSON)
}
