package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// The API's run document shows the attempts and the worker its row records (that a worker
// records them is the service's: runs' TestWorkerRecordsItsNameAndAttempt).
func TestAPIRunShowsAttemptsAndWorker(t *testing.T) {
	s := newFakeServer(t, runs.Config{WorkerName: "test-host:4242"}, true)
	id := submitAPI(t, s, testScenario("who"))
	waitStatus(t, s, id, store.StatusDone)
	rec := get(t, s, "/api/v1/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	var out apiRun
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, 1, out.Attempts)
	assert.Equal(t, "test-host:4242", out.Worker)
}

// The queue page shows the runs by status, the job queue's counts and the workers, read-only
// (what the service counts is its own: runs' TestJobStatesCountRiverJobs).
func TestQueuePageShowsQueuedRunningAndWorkers(t *testing.T) {
	s := newFakeServer(t, runs.Config{WorkerName: "box-1:77"}, false)
	running := submitAPI(t, s, testScenario("running"))
	submitAPI(t, s, testScenario("waiting"))
	_, err := s.store.ClaimRun(context.Background(), running, "box-1:77", 3, time.Now()) // as the worker does
	require.NoError(t, err)
	s.inline().jobs = map[string]int{"running": 1, "available": 1}

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
