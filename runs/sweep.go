package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// SweepRequest is a sweep as asked for: the body of POST /api/v1/sweeps, or what the sweep form
// builds.
type SweepRequest struct {
	Name     string          `json:"name"`
	Scenario json.RawMessage `json:"scenario"`
	Axes     []whatif.Axis   `json:"axes"`
}

// SweepView is a sweep as its page and GET /api/v1/sweeps/{id} show it, with its points in
// row-major order (the ones not yet submitted included).
type SweepView struct {
	ID     string           `json:"id"`
	Name   string           `json:"name"`
	Status string           `json:"status"`
	URL    string           `json:"url"`
	CSVURL string           `json:"csv_url"`
	Done   int              `json:"done"`
	Axes   []whatif.Axis    `json:"axes"`
	Points []SweepPointView `json:"points"`
	// CreatedBy is who created the sweep, on a server with users: the web server fills it in.
	CreatedBy string `json:"created_by,omitempty"`
}

// SweepPointView is one point of a SweepView.
type SweepPointView struct {
	Values   []any           `json:"values"`
	RunID    string          `json:"run_id"`
	URL      string          `json:"url"`
	Status   string          `json:"status"`
	Error    string          `json:"error,omitempty"`
	Progress float64         `json:"progress"`
	Headline json.RawMessage `json:"headline"`
}

// CreateSweep checks a sweep request whole (the name, the base scenario, the axes, every
// point's memory) and starts the sweep. A request that does not validate gives a
// *RequestError, or the scenario's *sim.ValidationError; asked again, the same sweep starts
// over.
func (s *Service) CreateSweep(ctx context.Context, req SweepRequest) (Created, error) {
	checked, err := s.check.Sweep(req)
	if err != nil {
		return Created{}, err
	}
	id, points, allDone, err := s.createSweep(ctx, checked)
	if err != nil {
		return Created{}, err
	}
	status := store.StatusQueued
	if allDone {
		status = store.StatusDone
	}
	return Created{ID: id, Status: status, Points: points, Done: allDone}, nil
}

// createSweep stores a checked sweep and submits its points: as many as the queue takes now,
// the rest in the background as room frees up (sweep_feed.go). It returns the sweep id, the
// number of points, and whether every point was already done.
func (s *Service) createSweep(ctx context.Context, checked CheckedSweep) (id string, points int, allDone bool, err error) {
	ctx = store.WithoutRunQuota(ctx) // a sweep's points count against the quota of sweep points
	id, pts := checked.Sweep.ID, checked.Points
	// A sweep asked again stops feeding the old way and starts over: every point is submitted
	// again (a cancelled or failed one is queued again; a queued or done one is left as it is).
	if err := s.stopDrive(ctx, sweepDrive, id); err != nil {
		return "", 0, false, err
	}
	if _, err := s.store.CreateSweep(ctx, checked.Sweep, nil, s.now()); err != nil {
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

// CancelSweep stops feeding the sweep's points and cancels the unfinished ones submitted. A
// sweep that has ended stays as it ended, as a plan does (issue 19 L2: a done sweep used to
// turn cancelled).
func (s *Service) CancelSweep(ctx context.Context, id string) error {
	sw, err := s.Sweep(ctx, id)
	if err != nil {
		return err
	}
	if IsFinal(sw.Status) {
		return nil
	}
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

// sweepPoints returns every point of a stored sweep, the ones not yet submitted included (the
// queue was full): from the feeding in this process, or expanded again from the stored request.
func (s *Service) sweepPoints(sw store.Sweep) ([]whatif.Point, error) {
	var axes []whatif.Axis
	if err := decodeNumbers(sw.AxesJSON, &axes); err != nil {
		return nil, err
	}
	if pending := s.feedingPoints(sw.ID); len(pending) == AxesPoints(axes) {
		return pending, nil
	}
	return s.expandStored(sw.ScenarioJSON, sw.AxesJSON)
}

// Sweep reads a sweep as its page and the API show it: each point with its live progress when
// this process runs it, and the points not yet submitted (the queue was full) as queued, or
// cancelled once the sweep is, with the run ids their runs will have.
func (s *Service) Sweep(ctx context.Context, id string) (SweepView, error) {
	sw, points, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return SweepView{}, notFoundAs("sweep", err)
	}
	var axes []whatif.Axis
	if err := decodeNumbers(sw.AxesJSON, &axes); err != nil {
		return SweepView{}, fmt.Errorf("sweep %s: stored axes: %w", id, err)
	}
	if want := AxesPoints(axes); len(points) < want {
		pendingStatus := store.StatusQueued
		if sw.Cancelled {
			pendingStatus = store.StatusCancelled
		}
		pending, err := s.sweepPoints(sw)
		if err != nil {
			// Show the submitted points; the log says why the others cannot be.
			s.log.Error("a sweep's points not yet submitted cannot be listed", "sweep", id, "err", err)
			pending = nil
		}
		for i := len(points); i < len(pending); i++ {
			vals, err := json.Marshal(pending[i].Values)
			if err != nil {
				return SweepView{}, err
			}
			points = append(points, store.SweepPoint{Index: i, ValuesJSON: vals, RunID: pending[i].Scenario.ID(), Status: pendingStatus})
		}
	}
	return SweepViewOf(sw, points, func(runID string) (float64, bool) {
		w, ok := s.live.watch(runID)
		return w.Fraction, ok
	})
}

// SweepViewOf is the view of a stored sweep with its points, the ones not yet submitted
// included; progress gives the live progress of a point's run when this process runs it (nil:
// none does). A fake of the service (web's tests) shows its sweeps through it too.
func SweepViewOf(sw store.Sweep, points []store.SweepPoint, progress func(runID string) (float64, bool)) (SweepView, error) {
	id := sw.ID
	out := SweepView{ID: sw.ID, Name: sw.Name, URL: "/sweeps/" + sw.ID, CSVURL: "/sweeps/" + sw.ID + "/sweep.csv"}
	if err := decodeNumbers(sw.AxesJSON, &out.Axes); err != nil {
		return SweepView{}, fmt.Errorf("sweep %s: stored axes: %w", id, err)
	}
	out.Points = make([]SweepPointView, len(points))
	out.Status, out.Done = sweepStatus(sw, points)
	for i, p := range points {
		v := SweepPointView{RunID: p.RunID, URL: "/runs/" + p.RunID, Status: p.Status, Error: p.Error, Progress: p.Progress, Headline: p.HeadlineJSON}
		if p.Status == store.StatusDone {
			v.Progress = 1
		} else if progress != nil {
			if f, ok := progress(p.RunID); ok {
				v.Progress = f
			}
		}
		if err := decodeNumbers(p.ValuesJSON, &v.Values); err != nil {
			return SweepView{}, fmt.Errorf("sweep %s point %d: stored values: %w", id, i, err)
		}
		if len(v.Headline) == 0 {
			v.Headline = json.RawMessage("null")
		}
		out.Points[i] = v
	}
	return out, nil
}

// sweepStatus sums up the points: cancelled once a user cancelled it (until asked again),
// otherwise running while any point is unfinished, then failed if any point failed.
func sweepStatus(sw store.Sweep, points []store.SweepPoint) (status string, done int) {
	queued, running, failed, cancelled := 0, 0, 0, 0
	for _, p := range points {
		switch p.Status {
		case store.StatusDone:
			done++
		case store.StatusQueued:
			queued++
		case store.StatusRunning:
			running++
		case store.StatusFailed:
			failed++
		case store.StatusCancelled:
			cancelled++
		}
	}
	switch {
	case sw.Cancelled:
		return store.StatusCancelled, done
	case running > 0 || (queued > 0 && done+failed+cancelled > 0):
		return store.StatusRunning, done
	case queued > 0:
		return store.StatusQueued, done
	case failed > 0:
		return store.StatusFailed, done
	case cancelled > 0:
		return store.StatusCancelled, done
	}
	return store.StatusDone, done
}
