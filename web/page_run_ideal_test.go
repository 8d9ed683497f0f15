package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// Issue 35: once a diagnose plan of a run has finished, the run's own fleet chart draws the
// ideal fleet it was measured against, and says where it comes from; the page cached before
// the plan is built again.
func TestRunPageDrawsTheIdealFleetOfADiagnosePlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	rec := postJSON(t, s, "/api/v1/runs", diagnoseScenario())
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sc, err := sim.Parse([]byte(diagnoseScenario()), sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, sc.ID(), store.StatusDone)
	before := parseHTML(t, get(t, s, "/runs/"+sc.ID()).Body)
	require.Equal(t, 1, before.Find("#fleet").Length(), "an autoscaler run has its fleet chart")
	assert.NotContains(t, before.Find("#fleet").AttrOr("data-echarts-option", ""), "ideal fleet", "no plan, no ideal fleet")
	assert.Equal(t, 0, byTestID(before, "ideal-fleet-note").Length())

	rec = postJSON(t, s, "/api/v1/plans", planBody(diagnoseScenario(), `"goal": {"diagnose": {"rate_per_worker_per_s": 50}}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	p := waitPlan(t, s, createdID(t, rec, rec.Body.Bytes()), store.StatusDone)
	require.NotNil(t, p.Diagnose, p.Reason)
	var scenarioRun, idealRun string
	for _, f := range p.Diagnose.Fleets {
		switch f.Kind {
		case whatif.FleetScenario:
			scenarioRun = f.RunID
		case whatif.FleetIdeal:
			idealRun = f.RunID
		}
	}
	require.Equal(t, sc.ID(), scenarioRun, "the plan's scenario fleet is the run of the scenario itself")
	require.NotEmpty(t, idealRun)

	link, err := s.store.IdealFleetOf(context.Background(), sc.ID())
	require.NoError(t, err, "the finished plan recorded the link")
	assert.Equal(t, store.IdealFleet{RunID: sc.ID(), IdealRunID: idealRun, PlanID: p.ID, CreatedAt: link.CreatedAt}, link)

	// A cached page trusts its version for pageRecheck, is then served once more while its
	// version is checked in the background, and the new version rebuilds it.
	time.Sleep(pageRecheck + 100*time.Millisecond)
	body := get(t, s, "/runs/"+sc.ID()).Body.String()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(body, "ideal-fleet-note") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		body = get(t, s, "/runs/"+sc.ID()).Body.String()
	}
	after := parseHTML(t, strings.NewReader(body))
	opt := after.Find("#fleet").AttrOr("data-echarts-option", "")
	assert.Contains(t, opt, `"name":"ideal fleet (diagnose plan)"`, "the cached page was built again, with the ideal fleet")
	note := byTestID(after, "ideal-fleet-note")
	require.Equal(t, 1, note.Length())
	assert.Equal(t, "/plans/"+p.ID, note.Find("a").Eq(0).AttrOr("href", ""))
	assert.Equal(t, "/runs/"+idealRun, note.Find("a").Eq(1).AttrOr("href", ""))

	// The ideal fleet's own run has no ideal fleet of its own.
	ideal := parseHTML(t, get(t, s, "/runs/"+idealRun).Body)
	assert.Equal(t, 0, byTestID(ideal, "ideal-fleet-note").Length())
	assert.NotContains(t, ideal.Find("#fleet").AttrOr("data-echarts-option", ""), "ideal fleet (diagnose plan)")
}
