package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestAPIRunShowsAttemptsAndWorker(t *testing.T) {
	s := newTestServer(t, Config{Workers: 1, WorkerName: "test-host:4242"}, true)
	id := submitAPI(t, s, testScenario("who"))
	waitStatus(t, s, id, store.StatusDone)
	rec := get(t, s, "/api/v1/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	var out apiRun
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, 1, out.Attempts)
	assert.Equal(t, "test-host:4242", out.Worker)
}

// A cancel made by another process only reaches the running worker through the run's row:
// the worker notices within takeoverPoll and stops, and records nothing.
func TestCancelFromAnotherProcessStopsTheWorker(t *testing.T) {
	s := newTestServer(t, Config{Workers: 1}, false)
	fake := newBlockingRun()
	s.run = fake.run
	require.NoError(t, s.Start(context.Background()))
	defer close(fake.release)
	id := submitAPI(t, s, testScenario("elsewhere"))
	fake.waitStarted(t)

	begin := time.Now()
	require.NoError(t, s.store.EndRun(context.Background(), id, store.StatusCancelled, "cancelled by a user elsewhere", time.Now()))
	require.Eventually(t, func() bool { _, live := s.live.watch(id); return !live }, 5*time.Second, 10*time.Millisecond)
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

func TestQueuePageShowsQueuedRunningAndWorkers(t *testing.T) {
	s := newTestServer(t, Config{Workers: 1, WorkerName: "box-1:77"}, false)
	fake := newBlockingRun()
	s.run = fake.run
	require.NoError(t, s.Start(context.Background()))
	defer close(fake.release)
	submitAPI(t, s, testScenario("running"))
	fake.waitStarted(t)
	submitAPI(t, s, testScenario("waiting"))

	rec := get(t, s, "/admin/queue")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src", "the site's CSP applies")
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, "1", byTestID(doc, "queue-runs-running").Text())
	assert.Equal(t, "1", byTestID(doc, "queue-runs-queued").Text())
	assert.Equal(t, "1", byTestID(doc, "queue-jobs-running").Text())
	assert.Equal(t, "1", byTestID(doc, "queue-jobs-available").Text())
	assert.Equal(t, "1", byTestID(doc, "queue-worker-0").Text())
	assert.Contains(t, byTestID(doc, "queue-worker-table").Text(), "box-1:77")
	assert.Equal(t, 1, byTestID(doc, "queue-retrying-empty").Length())
	assert.Equal(t, "box-1:77", byTestID(doc, "queue-setting-name").Text())

	// Read-only: nothing but GET.
	rec = postForm(t, s, "/admin/queue", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

// The commands cancel the context Start got when a signal arrives, then call Shutdown: the
// running run must go back to the queue, not fail with "context canceled".
func TestSignalThenShutdownRequeues(t *testing.T) {
	s := newTestServer(t, Config{Workers: 1}, false)
	fake := newBlockingRun()
	s.run = fake.run
	ctx, signal := context.WithCancel(context.Background())
	require.NoError(t, s.Start(ctx))
	id := submitAPI(t, s, testScenario("signalled"))
	fake.waitStarted(t)
	signal()
	time.Sleep(50 * time.Millisecond) // what River would do with a cancelled Start context
	stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(stopCtx))
	run, err := s.store.GetRunStatus(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, run.Status, run.Error)
}
