package runs

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// The life of a sweep on the service itself: its points fed through the queue, cancelled,
// resumed, reused (moved from web's API tests, which now check only the statuses and pages).

// fourWorkersDraining is fourWorkers with a scale-in of two workers at 100 ms.
func fourWorkersDraining(t *testing.T) json.RawMessage {
	t.Helper()
	return json.RawMessage(strings.Replace(string(fourWorkers(t)), `"workload"`, `"scale_in": [{"at_ms": 100, "count": 2}], "workload"`, 1))
}

// waitSweep polls the sweep's view until its status is one of want (or fails after 20 s).
func waitSweep(t *testing.T, s *Service, id string, want ...string) SweepView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sw, err := s.Sweep(context.Background(), id)
		require.NoError(t, err)
		for _, w := range want {
			if sw.Status == w {
				return sw
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweep %s is %s, want %v: %+v", id, sw.Status, want, sw.Points)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recordedPoints is how many points of the sweep are recorded (submitted) in the store.
func recordedPoints(t *testing.T, st *store.Store, id string) int {
	t.Helper()
	_, pts, err := st.GetSweep(context.Background(), id)
	require.NoError(t, err)
	return len(pts)
}

// A sweep may have more points than the queue holds: the points that fit are submitted at
// once, the rest as room frees up, in row-major order, and every point is an ordinary run whose
// report and headline are those of a direct run of the point's own scenario.
func TestSweepLargerThanQueue(t *testing.T) {
	t.Parallel() // its own store and service; it waits on the queue more than it computes
	ctx := context.Background()
	s := newTestService(t, Config{QueueSize: 4, Workers: 2}, true)
	scenario := fourWorkersDraining(t)
	axes := axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5]}, {"path": "kvcr.reject_draining_sources", "values": [true, false]}]`)
	created, err := s.CreateSweep(ctx, SweepRequest{Scenario: scenario, Axes: axes})
	require.NoError(t, err)
	assert.Equal(t, 10, created.Points)
	assert.False(t, created.Done)
	require.Len(t, waitSweep(t, s, created.ID, store.StatusQueued, store.StatusRunning, store.StatusDone).Points, 10, "points not yet submitted are listed too")

	sw := waitSweep(t, s, created.ID, store.StatusDone)
	require.Len(t, sw.Points, 10)
	base, err := sim.Parse(scenario, sim.ParseEnv{})
	require.NoError(t, err)
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	assert.Equal(t, 10, recordedPoints(t, s.store, created.ID), "every point is recorded once fed")
	for i, p := range sw.Points {
		assert.Equal(t, points[i].Values, p.Values, "point %d in row-major order", i)
		assert.Equal(t, points[i].Scenario.ID(), p.RunID, "point %d", i)
		assert.Equal(t, store.StatusDone, p.Status, "point %d", i)
		run, err := s.store.GetRun(ctx, p.RunID)
		require.NoError(t, err)
		rep, err := sim.Run(ctx, points[i].Scenario, sim.RunOptions{})
		require.NoError(t, err)
		var got sim.Report
		require.NoError(t, json.Unmarshal(run.SummaryJSON, &got))
		assert.Equal(t, rep.Digest, got.Digest, "point %d", i)
		var figs []sim.Figure
		require.NoError(t, json.Unmarshal(p.Headline, &figs))
		assert.Equal(t, sim.Headline(rep), figs, "point %d", i)
	}

	// Asked again, every point is done: answered at once.
	again, err := s.CreateSweep(ctx, SweepRequest{Scenario: scenario, Axes: axes})
	require.NoError(t, err)
	assert.Equal(t, created.ID, again.ID)
	assert.True(t, again.Done)
	assert.Equal(t, store.StatusDone, again.Status)
}

// Without workers, a sweep larger than the queue stops at the queue's bound; cancelling it stops
// the feeding, and a sweep left half-fed by a stopped server is fed by the next one.
func TestSweepFeedCancelAndRestart(t *testing.T) {
	t.Parallel() // its own store and service; it waits on the queue more than it computes
	ctx := context.Background()
	st := openStore(t, t.TempDir()+"/feed.db")
	a := newTestService(t, Config{Store: st, QueueSize: 2}, false) // never started: nothing runs
	created, err := a.CreateSweep(ctx, SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5]}]`)})
	require.NoError(t, err)
	id := created.ID
	assert.Equal(t, 2, recordedPoints(t, st, id), "as many points as the queue holds are submitted")
	sw, err := a.Sweep(ctx, id)
	require.NoError(t, err)
	require.Len(t, sw.Points, 5)
	assert.Equal(t, store.StatusQueued, sw.Status)
	assert.Equal(t, []any{json.Number("5")}, sw.Points[4].Values)

	require.NoError(t, a.CancelSweep(ctx, id))
	sw = waitSweep(t, a, id, store.StatusCancelled)
	for i, p := range sw.Points {
		assert.Equal(t, store.StatusCancelled, p.Status, "point %d", i)
	}
	// The queue has room again, but a cancelled sweep is not fed.
	time.Sleep(QueueFullRetry + 500*time.Millisecond)
	assert.Equal(t, 2, recordedPoints(t, st, id))

	// Another sweep on the same queue: two points fit, the third waits for room.
	other, err := a.CreateSweep(ctx, SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [6, 7, 8]}]`)})
	require.NoError(t, err)
	assert.Equal(t, 2, recordedPoints(t, st, other.ID))
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, a.Shutdown(stopCtx))

	b := newTestService(t, Config{Store: st, QueueSize: 2}, true)
	done := waitSweep(t, b, other.ID, store.StatusDone)
	require.Len(t, done.Points, 3)
	assert.Equal(t, 3, recordedPoints(t, st, other.ID), "the restarted server fed the rest")
	assert.Equal(t, store.StatusCancelled, waitSweep(t, b, id, store.StatusCancelled).Status, "a cancelled sweep stays cancelled")
}

// Cancelling a running sweep cancels its points; asked for again, it resumes: every point is
// queued again and it finishes.
func TestSweepCancelAndResume(t *testing.T) {
	ctx := context.Background()
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run}, true)
	req := SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2, 3]}]`)}
	created, err := s.CreateSweep(ctx, req)
	require.NoError(t, err)
	id := created.ID
	fake.WaitStarted(t)
	assert.Equal(t, store.StatusRunning, waitSweep(t, s, id, store.StatusRunning).Status)

	require.NoError(t, s.CancelSweep(ctx, id))
	sw := waitSweep(t, s, id, store.StatusCancelled)
	for _, p := range sw.Points {
		waitStatus(t, s, p.RunID, store.StatusCancelled)
		// The queue forgets a run just after the store records its end; a resubmission in
		// between is ignored by this queue (a race of the hand-written queue, not of sweeps).
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, held := s.Progress(p.RunID); !held {
				break
			}
		}
	}

	// Asking again resumes it: every point is queued again.
	again, err := s.CreateSweep(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, id, again.ID)
	assert.False(t, again.Done)
	fake.WaitStarted(t)
	close(fake.Release)
	waitSweep(t, s, id, store.StatusDone)
}

// A sweep whose points a stopped server left queued is finished by the next one.
func TestSweepResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir()+"/restart.db")
	a := newTestService(t, Config{Store: st}, false) // never started: the points stay queued
	created, err := a.CreateSweep(ctx, SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2]}]`)})
	require.NoError(t, err)
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, a.Shutdown(stopCtx))

	b := newTestService(t, Config{Store: st}, true)
	assert.Len(t, waitSweep(t, b, created.ID, store.StatusDone).Points, 2)
}

// Issue 19 L2: cancelling a sweep that has ended leaves it as it ended, as for plans.
func TestCancelDoneSweepIsANoOp(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{Workers: 2}, true)
	created, err := s.CreateSweep(ctx, SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2]}]`)})
	require.NoError(t, err)
	waitSweep(t, s, created.ID, store.StatusDone)
	require.NoError(t, s.CancelSweep(ctx, created.ID))
	sw, err := s.Sweep(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, sw.Status)
	for _, p := range sw.Points {
		assert.Equal(t, store.StatusDone, p.Status)
	}
}

// Issue 19: a sweep point equal to a stored run but for the name suffix the sweep gives it is
// not simulated again: its run (a permalink of its own) gets the stored report, relabelled.
func TestSweepPointReusesARunThatSimulatesTheSame(t *testing.T) {
	ctx := context.Background()
	var simulated atomic.Int32
	count := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		simulated.Add(1)
		return sim.Run(ctx, sc, opt)
	}
	s := newTestService(t, Config{Workers: 1, Simulate: count}, true)

	scenario := string(fourWorkersDraining(t))
	direct := strings.Replace(scenario, `"bandwidth_gbps": 10`, `"bandwidth_gbps": 40`, 1)
	require.NotEqual(t, scenario, direct)
	first := submit(t, s, direct)
	waitStatus(t, s, first, store.StatusDone)
	require.EqualValues(t, 1, simulated.Load())

	created, err := s.CreateSweep(ctx, SweepRequest{Scenario: json.RawMessage(direct), Axes: axesOf(t, `[{"path": "kvcr.bandwidth_gbps", "values": [40, 5]}]`)})
	require.NoError(t, err)
	sw := waitSweep(t, s, created.ID, store.StatusDone)
	require.Len(t, sw.Points, 2)
	point := sw.Points[0].RunID
	assert.NotEqual(t, first, point, "the sweep point keeps a permalink of its own")
	assert.EqualValues(t, 2, simulated.Load(), "only the new value (5) is simulated")

	a, err := s.LoadReport(ctx, first)
	require.NoError(t, err)
	b, err := s.LoadReport(ctx, point)
	require.NoError(t, err)
	assert.Contains(t, b.Name, "kvcr.bandwidth_gbps=40", "the point keeps its own name")
	assert.Equal(t, point, b.ScenarioID)
	assert.Equal(t, a.Summary, b.Summary)
	assert.Equal(t, a.Workers, b.Workers)
	a.Relabel(b.Name, b.ScenarioID)
	assert.Equal(t, a.Digest, b.Digest, "the relabelled report's digest is that of its own name")
}
