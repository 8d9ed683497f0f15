package web

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// Issue 19 M9: while PostgreSQL is down, pages and the API answer 503 with Retry-After and
// "database unavailable" (not 500), the liveness probe still answers, and everything answers
// again once it is back. That a run whose end came during the outage is recorded once the
// database is back, on its first attempt, is the service's (runs' TestQueueOnPostgres).
func TestPostgresOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := pgtest.Require(t)
	st, err := store.Open(context.Background(), cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	s := newFakeServer(t, runs.Config{Store: st}, false)
	id := submitAPI(t, s, testScenario("through an outage"))

	require.NoError(t, cluster.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = cluster.Resume()
		}
	}()
	for _, target := range []string{"/api/v1/runs", "/api/v1/runs/" + id, "/runs", "/runs/" + id} {
		rec := get(t, s, target)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, target)
		assert.Equal(t, "5", rec.Header().Get("Retry-After"), target)
		assert.Contains(t, rec.Body.String(), "database unavailable", target)
	}
	rec := postJSON(t, s, "/api/v1/runs", testScenario("during the outage"))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Equal(t, http.StatusServiceUnavailable, get(t, s, "/healthz").Code)
	assert.Equal(t, http.StatusOK, get(t, s, "/livez").Code, "liveness must not depend on the database")

	require.NoError(t, cluster.Resume())
	resumed = true
	assert.Equal(t, http.StatusOK, get(t, s, "/api/v1/runs").Code)
	assert.Equal(t, http.StatusOK, get(t, s, "/runs/"+id).Code)
	assert.Equal(t, http.StatusOK, get(t, s, "/healthz").Code)
}
