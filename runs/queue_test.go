package runs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/store"
)

// A cancel made by another process only reaches the running worker through the run's row:
// the worker notices within takeoverPoll and stops, and records nothing.
func TestCancelFromAnotherProcessStopsTheWorker(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run}, false)
	require.NoError(t, s.Start(context.Background()))
	defer close(fake.Release)
	id := submit(t, s, runtest.Scenario("elsewhere"))
	fake.WaitStarted(t)

	begin := time.Now()
	require.NoError(t, s.store.EndRun(context.Background(), id, store.StatusCancelled, "cancelled by a user elsewhere", time.Now()))
	require.Eventually(t, func() bool { _, live := s.Progress(id); return !live }, 5*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(begin), 3*takeoverPoll, "the worker stops promptly")
	run := waitStatus(t, s, id, store.StatusCancelled)
	assert.Equal(t, "cancelled by a user elsewhere", run.Error, "the stopped attempt wrote nothing over the cancel")
}

func TestRescueAfterMustExceedRunTimeout(t *testing.T) {
	st := openStore(t, t.TempDir()+"/r.db")
	_, err := New(Config{Store: st, RunTimeout: time.Minute, RescueAfter: time.Minute})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-rescue-after")
	_, err = New(Config{Store: st, NoWorkers: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "postgres")
}

// The commands cancel the context Start got when a signal arrives, then call Shutdown: the
// running run must go back to the queue, not fail with "context canceled".
func TestSignalThenShutdownRequeues(t *testing.T) {
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run}, false)
	ctx, signal := context.WithCancel(context.Background())
	require.NoError(t, s.Start(ctx))
	id := submit(t, s, runtest.Scenario("signalled"))
	fake.WaitStarted(t)
	signal()
	time.Sleep(50 * time.Millisecond) // what River would do with a cancelled Start context
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(stopCtx))
	run, err := s.store.GetRunStatus(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, run.Status, run.Error)
}
