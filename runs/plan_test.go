package runs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// waitPlan polls the store until the plan reaches want (or fails the test after 30 s).
func waitPlan(t *testing.T, s *Service, id, want string) store.Plan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		plan, _, err := s.store.GetPlan(context.Background(), id)
		require.NoError(t, err)
		if plan.Status == want {
			return plan
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %s is %s (%s), want %s", id, plan.Status, plan.Error, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A plan whose run a user cancelled directly fails (its ranking would be wrong) and says how to
// run it again; asked for again, it runs the cancelled run and finishes. (Moved from web's API
// test.)
func TestPlanWithACancelledRunFails(t *testing.T) {
	ctx := context.Background()
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run}, true)
	req := PlanRequest{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 2, StartMS: 100},
		Search: whatif.Search{Selections: []string{"highest_id"}, Waves: []int{1}}}
	plan, err := s.CreatePlan(ctx, req)
	require.NoError(t, err)
	require.Equal(t, store.StatusQueued, plan.Status)
	require.False(t, plan.Done)
	fake.WaitStarted(t)
	_, points, err := s.store.GetPlan(ctx, plan.ID)
	require.NoError(t, err)
	require.Len(t, points, 1)
	_, err = s.CancelRun(ctx, points[0].RunID)
	require.NoError(t, err)

	failed := waitPlan(t, s, plan.ID, store.StatusFailed)
	assert.Contains(t, failed.Error, "was cancelled, so the candidates cannot be ranked; ask for the plan again")

	again, err := s.CreatePlan(ctx, req)
	require.NoError(t, err)
	require.Equal(t, plan.ID, again.ID, "the same plan, asked for again")
	fake.WaitStarted(t)
	close(fake.Release)
	waitPlan(t, s, plan.ID, store.StatusDone)
	assert.Equal(t, store.StatusDone, runStatus(t, s, points[0].RunID))
}
