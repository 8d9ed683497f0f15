package web

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/web/form"
)

// TestFullQueueRefusesBeforeTheMemoryEstimate is issue 19 M8 through the handlers: with the
// queue full, the run API, the pair API and the form answer 429 for a scenario whose estimate
// would be refused with 400/422, so the queue check came first and no estimate was computed.
// The stored scenario still gets its run back.
func TestFullQueueRefusesBeforeTheMemoryEstimate(t *testing.T) {
	s := newFakeServer(t, runs.Config{QueueSize: 1, MaxRunMemory: 1 << 30, MaxTotalMemory: 2 << 30}, false)
	rec := postJSON(t, s, "/api/v1/runs", testScenario("fills the queue"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())

	rec = postJSON(t, s, "/api/v1/runs", hostileScenario("hostile"))
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "hints", "scenario": `+hostileScenario("hostile pair")+`}`)
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	rec = postForm(t, s, "/runs", url.Values{form.RawJSONField: {hostileScenario("hostile form")}})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())

	rec = postJSON(t, s, "/api/v1/runs", testScenario("fills the queue"))
	require.Equal(t, http.StatusOK, rec.Code, "a resubmission reuses its run: %s", rec.Body.String())
}
