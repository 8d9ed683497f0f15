package runs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// CreatePlan checks a request's origin with its other fields (hpa.ReadOrigin: only a tune plan
// of a scenario with an autoscaler, and only an object Export can write into), stores it with
// the request, so in the plan's id, and Plan shows it.
func TestCreatePlanKeepsTheOrigin(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{}, false) // never started: the plans stay queued
	manifest, err := os.ReadFile("../sim/hpa/testdata/charts/production-stack-keda.yaml")
	require.NoError(t, err)
	scenario, im, _, err := hpa.IntoScenario(fourWorkers(t), manifest, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, im.Origin)
	origin, err := json.Marshal(im.Origin)
	require.NoError(t, err)

	tune := PlanRequest{Scenario: scenario, Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}, Search: whatif.Search{MaxRuns: 4}}
	with := tune
	with.Origin = origin
	created, err := s.CreatePlan(ctx, with)
	require.NoError(t, err)
	view, err := s.Plan(ctx, created.ID)
	require.NoError(t, err)
	require.NotNil(t, view.Origin)
	assert.Equal(t, "ScaledObject", view.Origin.Kind)
	assert.Equal(t, im.Origin.Metric, view.Origin.Metric)

	tune.Origin = json.RawMessage(" null ")
	without, err := s.CreatePlan(ctx, tune)
	require.NoError(t, err)
	assert.NotEqual(t, created.ID, without.ID, "the origin is part of the plan's request")
	view, err = s.Plan(ctx, without.ID)
	require.NoError(t, err)
	assert.Nil(t, view.Origin)

	for _, bad := range []PlanRequest{
		{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 1}, Origin: origin},
		{Scenario: scenario, Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}, Origin: json.RawMessage(`{"kind": "Deployment"}`)},
		{Scenario: scenario, Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}, Origin: json.RawMessage(`{"nope": 1}`)},
	} {
		_, err := s.CreatePlan(ctx, bad)
		var re *RequestError
		require.True(t, errors.As(err, &re), "%v", err)
		require.Len(t, re.Invalid.Errors, 1)
		assert.Equal(t, "origin", re.Invalid.Errors[0].Path, string(bad.Origin))
	}
}
