package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
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
	s := newTestServer(t, Config{Store: st, Workers: 1, QueueSize: 1, WorkerName: "pg-host:1"}, true)

	id := submitAPI(t, s, testScenario("pg real"))
	run := waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, "pg-host:1", run.Worker)
	assert.Equal(t, 1, run.Attempts)
	assert.NotEmpty(t, run.ReportJSON)

	fake := newBlockingRun()
	s.run = fake.run
	defer close(fake.release)
	running := submitAPI(t, s, testScenario("pg blocked"))
	fake.waitStarted(t)
	submitAPI(t, s, testScenario("pg waiting")) // fills the queue of one
	rec := postJSON(t, s, "/api/v1/runs", testScenario("pg refused"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)

	rec = postForm(t, s, "/runs/"+running+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, store.StatusCancelled, waitStatus(t, s, running, store.StatusCancelled).Status)
	// The waiting run starts once the cancelled one has stopped.
	fake.waitStarted(t)
}
