package web

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// TestQueueOnPostgres runs the queue's main paths on PostgreSQL (riverdatabasesql with a pgx
// listener): a real run to done, a cancel that stops a running run, the bounded queue's 429.
func TestQueueOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := pgtest.Require(t)
	st, err := store.Open(context.Background(), cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	// The real simulator first, then (once blocking is set) the fake that holds runs running.
	var blocking atomic.Pointer[blockingRun]
	simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		if fake := blocking.Load(); fake != nil {
			return fake.Run(ctx, sc, opt)
		}
		return sim.Run(ctx, sc, opt)
	}
	s := newTestServer(t, runs.Config{Store: st, Workers: 1, QueueSize: 1, WorkerName: "pg-host:1", Simulate: simulate}, true)

	id := submitAPI(t, s, testScenario("pg real"))
	run := waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, "pg-host:1", run.Worker)
	assert.Equal(t, 1, run.Attempts)
	assert.NotEmpty(t, run.SummaryJSON)
	report, err := st.GetReportJSON(context.Background(), id)
	require.NoError(t, err)
	assert.NotEmpty(t, report)

	fake := newBlockingRun()
	blocking.Store(fake)
	defer close(fake.Release)
	running := submitAPI(t, s, testScenario("pg blocked"))
	fake.WaitStarted(t)
	submitAPI(t, s, testScenario("pg waiting")) // fills the queue of one
	rec := postJSON(t, s, "/api/v1/runs", testScenario("pg refused"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)

	rec = postForm(t, s, "/runs/"+running+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, store.StatusCancelled, waitStatus(t, s, running, store.StatusCancelled).Status)
	// The waiting run starts once the cancelled one has stopped.
	fake.WaitStarted(t)
}
