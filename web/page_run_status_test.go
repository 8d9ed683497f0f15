package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// The status badge says what the progress bar says: a run this process is running reads
// "running" on both, even while its stored row still says queued.
func TestRunStatusBadgeAgreesWithTheBar(t *testing.T) {
	s := newPageServer(t)
	rec := postJSON(t, s, "/api/v1/runs", testScenario("badge"))
	require.Equal(t, http.StatusAccepted, rec.Code)
	sc, err := sim.Parse([]byte(testScenario("badge")), sim.ParseEnv{})
	require.NoError(t, err)
	s.runs.(*fakeRuns).live = map[string]runs.RunState{sc.ID(): {Status: store.StatusRunning, Fraction: 0.072}}

	for _, path := range []string{"/runs/" + sc.ID(), "/compare?a=" + sc.ID() + "&b=" + sc.ID()} {
		page := get(t, s, path)
		require.Equal(t, http.StatusOK, page.Code, path)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(page.Body.String()))
		require.NoError(t, err)
		badge := doc.Find(`[data-testid="status"][data-status-run="` + sc.ID() + `"]`).First()
		assert.Equal(t, "running", badge.Text(), path)
		assert.Equal(t, "running, 7.2 %", doc.Find(`[data-testid="progress-`+sc.ID()+`"] [data-progress-text]`).First().Text(), path)
	}
}
