package runs

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// TestQueueOnPostgres runs the queue's main paths on PostgreSQL (riverdatabasesql with a pgx
// listener): a real run to done, a cancel that stops a running run, the bounded queue, and
// (issue 19 M9) a run whose end came during an outage, recorded once the database is back, on
// its first attempt. (Moved from web, where it went through HTTP; web's TestPostgresOutage
// keeps the statuses the pages answer during an outage.)
func TestQueueOnPostgres(t *testing.T) {
	t.Parallel() // its own cluster; it mostly waits for the outage and the queue
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := context.Background()
	cluster := pgtest.Require(t)
	st, err := store.Open(ctx, cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	// The real simulator first, then (once blocking is set) the fake that holds runs running.
	var blocking atomic.Pointer[runtest.BlockingRun]
	simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		if fake := blocking.Load(); fake != nil {
			return fake.Run(ctx, sc, opt)
		}
		return sim.Run(ctx, sc, opt)
	}
	s := newTestService(t, Config{Store: st, Workers: 1, QueueSize: 1, WorkerName: "pg-host:1", Simulate: simulate}, true)

	id := submit(t, s, runtest.Scenario("pg real"))
	run := waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, "pg-host:1", run.Worker)
	assert.Equal(t, 1, run.Attempts)
	assert.NotEmpty(t, run.SummaryJSON)
	report, err := st.GetReportJSON(ctx, id)
	require.NoError(t, err)
	assert.NotEmpty(t, report)

	fake := runtest.NewBlockingRun()
	blocking.Store(fake)
	running := submit(t, s, runtest.Scenario("pg blocked"))
	fake.WaitStarted(t)
	waiting := submit(t, s, runtest.Scenario("pg waiting")) // fills the queue of one
	_, err = s.Submit(ctx, mustParse(t, runtest.Scenario("pg refused")))
	require.ErrorIs(t, err, ErrQueueFull)

	// live is not checked: River's remote cancel may stop the worker before CancelRun does.
	_, err = s.CancelRun(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, waitStatus(t, s, running, store.StatusCancelled).Status)
	// The waiting run starts once the cancelled one has stopped.
	fake.WaitStarted(t)

	// It ends while the database is away: its end is recorded once the database is back, and
	// the outage costs it no attempt.
	require.NoError(t, cluster.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = cluster.Resume()
		}
	}()
	close(fake.Release)
	time.Sleep(500 * time.Millisecond) // the worker tries to record the end while the database is away
	require.NoError(t, cluster.Resume())
	resumed = true
	run = waitStatus(t, s, waiting, store.StatusDone)
	assert.Equal(t, 1, run.Attempts, "the outage must not cost the run an attempt")
}
