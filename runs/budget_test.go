package runs

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/require"
)

// A queued run starts only while the running runs' estimates leave room in the total budget.
func TestTotalBudgetHoldsQueuedRuns(t *testing.T) {
	small := sim.EstimateMemory(mustParse(t, runtest.Scenario("a"))).Bytes
	// Room for one run at a time, with two workers.
	br := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 2, MaxRunMemory: small * 3 / 2, MaxTotalMemory: small * 3 / 2, Simulate: br.Run}, false)
	require.NoError(t, s.Start(context.Background()))
	a := submit(t, s, runtest.Scenario("a"))
	require.Equal(t, "a", br.WaitStarted(t))
	b := submit(t, s, runtest.Scenario("b"))
	select {
	case name := <-br.Started:
		t.Fatalf("run %s started while the budget was taken", name)
	case <-time.After(300 * time.Millisecond):
	}
	got, err := s.store.GetRunStatus(context.Background(), b)
	require.NoError(t, err)
	require.Equal(t, store.StatusQueued, got.Status)
	br.Release <- struct{}{}
	waitStatus(t, s, a, store.StatusDone)
	require.Equal(t, "b", br.WaitStarted(t))
	br.Release <- struct{}{}
	waitStatus(t, s, b, store.StatusDone)
}

// The backstop stops a run whose heap grows past its budget; the service keeps working runs.
func TestBackstopFailsARunWhoseHeapCrossesItsBudget(t *testing.T) {
	br := runtest.NewBlockingRun()
	s := newTestService(t, Config{MaxRunMemory: 64 << 20, MaxTotalMemory: 128 << 20, Simulate: br.Run}, false)
	var heap atomic.Int64
	heap.Store(10 << 20)
	s.heapBytes = heap.Load
	s.liveHeapBytes = heap.Load
	require.NoError(t, s.Start(context.Background()))
	id := submit(t, s, runtest.Scenario("grows"))
	br.WaitStarted(t)
	time.Sleep(2 * memorySampleInterval)
	heap.Store(10<<20 + 65<<20) // the run's heap crosses 64 MiB
	run := waitStatus(t, s, id, store.StatusFailed)
	require.Contains(t, run.Error, "past the 67 MB this server allows per run")

	// Garbage that a collection frees does not stop a run.
	heap.Store(10 << 20)
	time.Sleep(2 * memorySampleInterval)
	s.heapBytes = func() int64 { return 500 << 20 }
	id2 := submit(t, s, runtest.Scenario("garbage only"))
	br.WaitStarted(t)
	time.Sleep(4 * memorySampleInterval)
	got, err := s.store.GetRunStatus(context.Background(), id2)
	require.NoError(t, err)
	require.Equal(t, store.StatusRunning, got.Status)
	br.Release <- struct{}{}
	waitStatus(t, s, id2, store.StatusDone)
}

// The real heap: a run that allocates past its budget is failed with the reason.
func TestBackstopWithTheRealHeap(t *testing.T) {
	allocate := func(ctx context.Context, sc *sim.Scenario, _ sim.RunOptions) (*sim.Report, error) {
		var hold [][]byte
		for len(hold) < 400 { // up to 400 MiB, 1 MiB every 2 ms
			hold = append(hold, make([]byte, 1<<20))
			for i := range hold[len(hold)-1] {
				hold[len(hold)-1][i] = 1
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		}
		return nil, fmt.Errorf("the backstop did not stop a run holding %d MiB", len(hold))
	}
	s := newTestService(t, Config{MaxRunMemory: 32 << 20, MaxTotalMemory: 64 << 20, Simulate: allocate}, false)
	require.NoError(t, s.Start(context.Background()))
	id := submit(t, s, runtest.Scenario("real heap"))
	run := waitStatus(t, s, id, store.StatusFailed)
	require.True(t, strings.HasPrefix(run.Error, "stopped: the server's heap grew by"), run.Error)
}

// A run whose process died under it is started again until it has been started MaxAttempts
// times; then it is failed with "interrupted N times". (The kill -9 test of
// the real binary is cmd/scalein's TestKilledServerFailsARunAfterThreeStarts.)
func TestInterruptedRunsAreStartedAtMostMaxAttemptsTimes(t *testing.T) {
	st := openStore(t, t.TempDir()+"/runs.db")
	ctx := context.Background()
	a := newTestService(t, Config{Store: st}, false) // never started: the run stays queued
	id := submit(t, a, runtest.Scenario("crashes"))
	// Three processes each claimed the run and died: the row says running, attempt 3.
	for range 3 {
		_, err := st.ClaimRun(ctx, id, "dead-worker", 0, time.Now())
		require.NoError(t, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	require.NoError(t, a.Shutdown(sctx))
	cancel()

	br := runtest.NewBlockingRun()
	s := newTestService(t, Config{Store: st, MaxAttempts: 3, Simulate: br.Run}, false)
	require.NoError(t, s.Start(ctx))
	run := waitStatus(t, s, id, store.StatusFailed)
	require.Equal(t, 3, run.Attempts)
	require.Contains(t, run.Error, "interrupted 3 times")
	select {
	case <-br.Started:
		t.Fatal("a run interrupted 3 times was started a fourth time")
	case <-time.After(200 * time.Millisecond):
	}
}

// A run that waits for the total memory budget longer than a job's timeout is put aside
// (snoozed) rather than failed: it starts once the budget frees, on its first River attempt, so
// a long wait can never use up the attempts that bound a crash loop.
func TestWaitingForTheBudgetUsesNoAttempt(t *testing.T) {
	t.Parallel() // it mostly sleeps through an attempt's time limit
	est := sim.EstimateMemory(mustParse(t, runtest.Scenario("a"))).Bytes
	s := newTestService(t, Config{Workers: 1, RunTimeout: time.Second, MaxRunMemory: est * 3 / 2, MaxTotalMemory: est * 3 / 2}, true)
	hold, err := s.budget.acquire(context.Background(), s.budget.total)
	require.NoError(t, err)
	id := submit(t, s, runtest.Scenario("a"))
	time.Sleep(s.jobTimeout() + time.Second) // longer than one attempt may last
	got, err := s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, store.StatusQueued, got.Status)
	hold()
	waitStatus(t, s, id, store.StatusDone)
	job, err := s.jobs.client.JobGet(context.Background(), got.JobID)
	require.NoError(t, err)
	require.Equal(t, 1, job.Attempt, "waiting for memory took no attempt")
	got, err = s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempts)
}
