package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// A sweep may have more points (-max-sweep-points) than the queue holds (-queue). Its points are
// submitted in order, as many at a time as the queue takes; the rest are fed in the background
// as room frees up, the way a plan waits for room rather than fail. A point is recorded in the
// store once its run is submitted, so the recorded points are always a prefix of the sweep, and
// a restart resumes feeding after the last recorded one.

// feedSweep submits points[from:] in order and records them as the sweep's points. It tries as
// many points at once as remain, halves the batch when the queue is full, and doubles it again
// after a success. With wait false it returns at the first full queue (next says how far it
// got); with wait true it waits QueueFullRetry and tries again until every point is in.
// allDone says whether every point it submitted was already done (a reused run).
func (s *Service) feedSweep(ctx context.Context, id string, points []whatif.Point, from int, wait bool) (next int, allDone bool, err error) {
	next, allDone = from, true
	batch := len(points) - from
	for next < len(points) {
		k := min(batch, len(points)-next)
		scenarios := make([]*sim.Scenario, k)
		for i := range k {
			scenarios[i] = points[next+i].Scenario
		}
		subs, err := s.submitPoints(ctx, scenarios...)
		if errors.Is(err, ErrQueueFull) {
			if k > 1 {
				batch = k / 2
				continue
			}
			if !wait {
				return next, false, nil
			}
			select { // the queue is full: wait for room rather than fail the sweep
			case <-ctx.Done():
				return next, false, context.Cause(ctx)
			case <-time.After(QueueFullRetry):
			}
			continue
		}
		if err != nil {
			return next, false, err
		}
		stored := make([]store.SweepPoint, k)
		for i, sub := range subs {
			vals, err := json.Marshal(points[next+i].Values)
			if err != nil {
				return next, false, err
			}
			stored[i] = store.SweepPoint{ValuesJSON: vals, RunID: sub.Run.ID}
			if sub.Run.Status != store.StatusDone {
				allDone = false
			}
		}
		if err := s.store.AddSweepPoints(ctx, id, next, stored); err != nil {
			return next, false, err
		}
		next += k
		batch = min(2*k, len(points))
	}
	return next, allDone, nil
}

// startSweepFeed feeds points[from:] of the sweep in the background, unless another process
// drives the sweep (drive.go). A feeding of the same sweep already running here is stopped
// first (a sweep asked again starts over from the point its request could not submit).
//
// The feeding goes through a database outage (throughOutage), as a plan's driver does, and
// goes on from the first point not yet recorded: submitting a point again finds its run (same
// scenario, same id) and recording it again changes nothing (AddSweepPoints skips an index
// recorded already). It used to stop at the first error, leaving the rest of the sweep to a
// restart (SQLite has no rescan) or to a rescan after the drive lock was lost (PostgreSQL).
func (s *Service) startSweepFeed(id string, points []whatif.Point, from int) {
	s.startDrive(sweepDrive, id, points, func(ctx context.Context) {
		n := from
		err := s.throughOutage(ctx, "feeding sweep "+id, func() (err error) {
			n, _, err = s.feedSweep(ctx, id, points, n, true)
			return err
		})
		switch {
		case err == nil:
			s.log.Info("sweep fed", "sweep", id, "points", n)
		case ctx.Err() != nil: // cancelled (here or elsewhere), asked again, or shutting down (resumed at the next start)
		default:
			s.log.Error("feeding a sweep's points stopped", "sweep", id, "submitted", n, "points", len(points), "err", err)
		}
	})
}

// feedingPoints returns every point of a sweep being fed here, or nil.
func (s *Service) feedingPoints(id string) []whatif.Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.drives[sweepDrive.key(id)]; d != nil {
		return d.points
	}
	return nil
}

// AxesPoints is the number of points the axes give (the product of their value counts).
func AxesPoints(axes []whatif.Axis) int {
	n := 1
	for _, ax := range axes {
		n *= len(ax.Values)
	}
	return n
}

// expandStored expands a stored sweep's points again (deterministic: the same scenarios, so the
// same run ids, as when it was asked for).
func (s *Service) expandStored(scenarioJSON, axesJSON []byte) ([]whatif.Point, error) {
	var axes []whatif.Axis
	if err := decodeNumbers(axesJSON, &axes); err != nil {
		return nil, fmt.Errorf("stored axes: %w", err)
	}
	base, err := sim.Parse(scenarioJSON, sim.ParseEnv{Traces: s.store})
	if err != nil {
		return nil, fmt.Errorf("the stored scenario is no longer valid: %w", err)
	}
	// The sweep was accepted when asked for; a lower -max-sweep-points since does not drop it.
	return whatif.Expand(base, axes, sim.ParseEnv{Traces: s.store}, max(s.cfg.MaxSweepPoints, AxesPoints(axes)))
}

// resumeSweeps starts feeding every sweep left with points not yet submitted that no process
// feeds: at start, the ones a previous process left; on PostgreSQL, at each rescan, the ones
// whose feeder died.
func (s *Service) resumeSweeps(ctx context.Context) error {
	feeds, err := s.store.ActiveSweeps(ctx)
	if err != nil {
		return err
	}
	for _, f := range feeds {
		var axes []whatif.Axis
		if err := decodeNumbers(f.AxesJSON, &axes); err != nil || f.Recorded >= AxesPoints(axes) {
			continue
		}
		if s.feedingPoints(f.ID) != nil {
			continue // fed here already
		}
		hold, ok := s.lockDrive(sweepDrive.key(f.ID))
		if !ok {
			continue // fed by another process
		}
		points, err := s.expandStored(f.ScenarioJSON, f.AxesJSON)
		if err != nil {
			if s.firstResumeFailure(f.ID) { // logged once, not at every rescan
				s.log.Error("a sweep's remaining points cannot be submitted", "sweep", f.ID, "err", err)
			}
		} else {
			s.log.Info("sweep resumed", "sweep", f.ID, "from", f.Recorded)
			s.startSweepFeed(f.ID, points, f.Recorded)
		}
		s.unlockDrive(hold)
	}
	return nil
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// firstResumeFailure records that resuming the sweep failed and says whether it is the first
// time in this process.
func (s *Service) firstResumeFailure(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resumeFailed == nil {
		s.resumeFailed = map[string]bool{}
	}
	first := !s.resumeFailed[id]
	s.resumeFailed[id] = true
	return first
}
