package runs

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/store"
)

// The life of a run in the queue, on the service itself (moved from web's tests, which now
// check only the statuses and pages these give).

// The queue bound counts the runs waiting for a worker, not the one running: with a queue of
// one, a second run waits beside a running one and a third is refused, while the same
// scenario again needs no room.
func TestQueueBoundCountsWaitingRuns(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, QueueSize: 1, Simulate: fake.Run}, true)
	defer close(fake.Release)
	ctx := context.Background()

	submit(t, s, runtest.Scenario("one")) // taken by the worker
	fake.WaitStarted(t)
	submit(t, s, runtest.Scenario("two")) // fills the queue
	_, err := s.Submit(ctx, mustParse(t, runtest.Scenario("three")))
	require.ErrorIs(t, err, ErrQueueFull)

	subs, err := s.Submit(ctx, mustParse(t, runtest.Scenario("two")))
	require.NoError(t, err, "an identical scenario is not new work")
	assert.False(t, subs[0].Created)
}

// CancelRun ends a queued run at once and stops a running one in this process (live), whose
// worker records nothing over the cancel; the same scenario submitted again is queued again.
func TestCancelRunningAndQueuedRuns(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run}, true)
	defer close(fake.Release)
	ctx := context.Background()

	running := submit(t, s, runtest.Scenario("running"))
	fake.WaitStarted(t)
	queued := submit(t, s, runtest.Scenario("queued"))

	live, err := s.CancelRun(ctx, queued)
	require.NoError(t, err)
	assert.False(t, live, "a queued run is not running here")
	assert.Equal(t, store.StatusCancelled, waitStatus(t, s, queued, store.StatusCancelled).Status)
	assert.Equal(t, "cancelled by a user before it started", waitStatus(t, s, queued, store.StatusCancelled).Error)

	live, err = s.CancelRun(store.WithOwner(ctx, "alice"), running)
	require.NoError(t, err)
	assert.True(t, live, "the running run is stopped in this process")
	run := waitStatus(t, s, running, store.StatusCancelled)
	assert.Equal(t, "cancelled by alice before it finished", run.Error)
	require.Eventually(t, func() bool { _, held := s.Progress(running); return !held }, 5*time.Second, 5*time.Millisecond)
	run = waitStatus(t, s, running, store.StatusCancelled)
	assert.Contains(t, run.Error, "cancelled", "the stopped attempt wrote nothing over the cancel")

	live, err = s.CancelRun(ctx, running)
	require.NoError(t, err)
	assert.False(t, live, "a run that ended is left as it is")

	subs, err := s.Submit(ctx, mustParse(t, runtest.Scenario("queued")))
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, subs[0].Run.Status, "resubmitting a cancelled scenario runs it again")
}

func TestWallTimeLimitFailsTheRun(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, RunTimeout: 50 * time.Millisecond, Simulate: fake.Run}, true)
	id := submit(t, s, runtest.Scenario("slow"))
	run := waitStatus(t, s, id, store.StatusFailed)
	assert.Contains(t, run.Error, "wall-time limit of 50ms")
}

// Shutdown puts the running run back in the queue; a new process on the same database
// finishes it and the one that waited, with the real simulator.
func TestShutdownRequeuesAndRestartFinishes(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "restart.db")
	st1, err := store.Open(context.Background(), dbPath)
	require.NoError(t, err)
	fake := runtest.NewBlockingRun()
	first, err := New(Config{Store: st1, Workers: 1, Simulate: fake.Run})
	require.NoError(t, err)
	require.NoError(t, first.Start(context.Background()))
	runningID := submit(t, first, runtest.Scenario("interrupted"))
	fake.WaitStarted(t)
	queuedID := submit(t, first, runtest.Scenario("waiting"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, first.Shutdown(ctx))
	run, err := st1.GetRunStatus(ctx, runningID)
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, run.Status, "a run interrupted by shutdown goes back to queued")
	require.NoError(t, st1.Close())

	second := newTestService(t, Config{Store: openStore(t, dbPath)}, true)
	waitStatus(t, second, runningID, store.StatusDone)
	waitStatus(t, second, queuedID, store.StatusDone)
}

// A run left running by a process that died is run again at the next start, as its second
// attempt.
func TestRestartAfterCrashRunsStrandedRuns(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "crash.db")
	st := openStore(t, dbPath)
	crashed := newTestService(t, Config{Store: st}, false) // never started: like a crash before running
	id := submit(t, crashed, runtest.Scenario("stranded"))
	require.NoError(t, st.StartRun(context.Background(), id, time.Now())) // it was "running" when the process died

	next := newTestService(t, Config{Store: openStore(t, dbPath)}, true)
	run := waitStatus(t, next, id, store.StatusDone)
	assert.Equal(t, 2, run.Attempts)
}

// Reserve (the exports' and uploads' share of the memory budget) waits while the total budget
// is taken, and gets its bytes once they are given back.
func TestReserveWaitsForTheTotalBudget(t *testing.T) {
	s := newTestService(t, Config{MaxRunMemory: 1 << 20, MaxTotalMemory: 4 << 20}, false)
	hold, err := s.Reserve(context.Background(), s.Limits().MaxTotalMemory) // every byte taken
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Reserve(ctx, 1)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no byte is left")
	hold()
	again, err := s.Reserve(context.Background(), 1<<20)
	require.NoError(t, err)
	again()
}

// A worker records its name and the attempt on the run's row (the API's run document shows
// them).
func TestWorkerRecordsItsNameAndAttempt(t *testing.T) {
	s := newTestService(t, Config{Workers: 1, WorkerName: "test-host:4242"}, true)
	id := submit(t, s, runtest.Scenario("who"))
	run := waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, 1, run.Attempts)
	assert.Equal(t, "test-host:4242", run.Worker)
}

// JobStates counts River's jobs by state, Retrying lists none while nothing failed, and the
// rows say which worker runs what: what the queue page shows.
func TestJobStatesCountRiverJobs(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, WorkerName: "box-1:77", Simulate: fake.Run}, true)
	defer close(fake.Release)
	ctx := context.Background()
	submit(t, s, runtest.Scenario("running"))
	fake.WaitStarted(t)
	submit(t, s, runtest.Scenario("waiting"))

	states, err := s.JobStates(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, states["running"])
	assert.Equal(t, 1, states["available"])
	retrying, err := s.Retrying(ctx, 10)
	require.NoError(t, err)
	assert.Empty(t, retrying)
	queue, err := s.store.QueueState(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{store.StatusRunning: 1, store.StatusQueued: 1}, queue.ByStatus)
	assert.Equal(t, map[string]int{"box-1:77": 1}, queue.Running, "the running run's row names its worker")
}
