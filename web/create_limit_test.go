package web

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// Finding L6 of 2026-12b: 30 invalid POST /api/v1/plans in a minute made the next valid one a
// 429 "you started too many runs" though none was started.
func TestInvalidCreationsDoNotCountAsStarted(t *testing.T) {
	s := newLimitedServer(t, runs.Config{}, 2, false)
	invalid := []struct{ path, body string }{
		{"/api/v1/plans", `{"scenario": {}, "goal": {"tune": "autoscaler"}}`},
		{"/api/v1/runs", `{"fleet": {"workers": -1}}`},
		{"/api/v1/sweeps", `{"axes": []}`},
		{"/api/v1/pairs", `{}`},
	}
	for i := range 5 {
		c := invalid[i%len(invalid)]
		rec := postJSON(t, s, c.path, c.body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", c.path, rec.Body.String())
	}
	for i := range 2 {
		rec := postJSON(t, s, "/api/v1/runs", testScenario("after-invalid-"+string(rune('a'+i))))
		require.Equal(t, http.StatusAccepted, rec.Code, "valid run %d after 5 invalid requests: %s", i, rec.Body.String())
	}
	rec := postJSON(t, s, "/api/v1/runs", testScenario("after-invalid-c"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, rec.Body.String(), "you started more than 2 runs")
	assert.Equal(t, "60", rec.Header().Get("Retry-After"))
}

// Requests that create nothing are still bounded (their validation costs work), with a message
// that says requests, not runs.
func TestCreationRequestsAreBounded(t *testing.T) {
	s := newLimitedServer(t, runs.Config{}, 2, false)
	for range creationRequestsPerRun * 2 {
		require.Equal(t, http.StatusBadRequest, postJSON(t, s, "/api/v1/runs", `{"fleet": {"workers": -1}}`).Code)
	}
	rec := postJSON(t, s, "/api/v1/runs", testScenario("bounded"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, rec.Body.String(), "you sent more than 8 creation requests (valid or not)")
}
