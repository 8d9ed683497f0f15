package runs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// Issue 19 L3: a plan's candidate counts as reused only if its run was done before the plan
// was asked for. A run the plan finished itself before an interruption (found done when the
// plan resumes) is not reused, so the stored result is the same with or without the restart.
func TestPlanReusedCountsOnlyRunsDoneBefore(t *testing.T) {
	s := newTestService(t, Config{Workers: 1}, true)
	before := submit(t, s, runtest.Scenario("done before the plan"))
	waitStatus(t, s, before, store.StatusDone)
	time.Sleep(5 * time.Millisecond) // finished_at and created_at are whole milliseconds
	since := time.Now()
	time.Sleep(5 * time.Millisecond)
	during := submit(t, s, runtest.Scenario("done by the plan before a restart"))
	waitStatus(t, s, during, store.StatusDone)

	_, _, err := s.store.CreatePlan(context.Background(), store.Plan{ID: "aaaaaaaaaaaaaaaa", Name: "p",
		ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{}`)}, since)
	require.NoError(t, err)
	r := s.planRunner("aaaaaaaaaaaaaaaa", since)
	out, err := r.Run(context.Background(), []*sim.Scenario{
		mustParse(t, runtest.Scenario("done before the plan")), mustParse(t, runtest.Scenario("done by the plan before a restart"))})
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.True(t, out[0].Reused, "done before the plan was asked for")
	assert.False(t, out[1].Reused, "done after the plan was asked for: the plan's own run")
}
