package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

func TestAPIRunShowsAttemptsAndWorker(t *testing.T) {
	s := newTestServer(t, runs.Config{Workers: 1, WorkerName: "test-host:4242"}, true)
	id := submitAPI(t, s, testScenario("who"))
	waitStatus(t, s, id, store.StatusDone)
	rec := get(t, s, "/api/v1/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	var out apiRun
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	assert.Equal(t, 1, out.Attempts)
	assert.Equal(t, "test-host:4242", out.Worker)
}

func TestQueuePageShowsQueuedRunningAndWorkers(t *testing.T) {
	fake := newBlockingRun()
	s := newTestServer(t, runs.Config{Workers: 1, WorkerName: "box-1:77", Simulate: fake.Run}, false)
	require.NoError(t, s.startRuns(context.Background()))
	defer close(fake.Release)
	submitAPI(t, s, testScenario("running"))
	fake.WaitStarted(t)
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
