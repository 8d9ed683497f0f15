package runs

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// The life of a plan on the service itself: its planner driven through the queue, its runs
// reused, cancelled, resumed (moved from web's API tests, which now check only the statuses
// and pages).

// waitPlanView polls the plan's view until it reaches want (or fails the test after 30 s).
func waitPlanView(t *testing.T, s *Service, id, want string) PlanView {
	t.Helper()
	waitPlan(t, s, id, want)
	p, err := s.Plan(context.Background(), id)
	require.NoError(t, err)
	return p
}

func ptr[T any](v T) *T { return &v }

// A drain plan runs its candidates as ordinary runs and recommends the one that drains the two
// idle workers at once; every run it asked for is listed, none reused on a fresh database.
func TestPlanRunsToARecommendation(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{Workers: 2}, true)
	req := PlanRequest{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 2, StartMS: 100},
		Constraints: whatif.Constraints{TTFTP99MS: ptr(50.0), MaxKilled: ptr(int64(0))}}
	created, err := s.CreatePlan(ctx, req)
	require.NoError(t, err)
	assert.False(t, created.Done)

	p := waitPlanView(t, s, created.ID, store.StatusDone)
	require.NotNil(t, p.Recommended, p.Reason)
	best := p.Candidates[0]
	assert.Equal(t, best.RunID, p.Recommended.RunID)
	assert.Equal(t, 100.0, *sim.FigureValue(best.Headline, "latest_removal_ms"), "drain the two idle workers at once (by hand)")
	assert.Equal(t, 0.0, *sim.FigureValue(best.Headline, "requests_killed"))
	assert.Len(t, p.Submitted, p.Runs, "every run the planner asked for is listed")
	assert.Zero(t, p.Reused)

	// The recommended run is an ordinary run whose report drains workers 0 and 1.
	run, err := s.store.GetRun(ctx, p.Recommended.RunID)
	require.NoError(t, err)
	var rep sim.Report
	require.NoError(t, json.Unmarshal(run.SummaryJSON, &rep))
	require.Len(t, rep.ScaleIn, 1)
	assert.ElementsMatch(t, []int{0, 1}, rep.ScaleIn[0].Drained)

	// The same request is the same plan, answered at once.
	again, err := s.CreatePlan(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, created.ID, again.ID)
	assert.True(t, again.Done)
}

// A second identical plan (under another name, so another plan) reuses every run.
func TestPlanReusesRuns(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{Workers: 2}, true)
	goal := whatif.Goal{Remove: 1, StartMS: 100}
	created, err := s.CreatePlan(ctx, PlanRequest{Scenario: fourWorkers(t), Goal: goal})
	require.NoError(t, err)
	first := waitPlanView(t, s, created.ID, store.StatusDone)

	created, err = s.CreatePlan(ctx, PlanRequest{Name: "again", Scenario: fourWorkers(t), Goal: goal, Search: whatif.Search{MaxRuns: 63}})
	require.NoError(t, err)
	second := waitPlanView(t, s, created.ID, store.StatusDone)
	assert.Equal(t, second.Runs, second.Reused, "every run reused")
	assert.Equal(t, first.Recommended.RunID, second.Recommended.RunID)
}

// Issue 19 H2: a plan whose candidate batch is larger than the queue bound submits it in
// pieces that fit (it used to retry the whole batch forever).
func TestPlanBatchLargerThanQueue(t *testing.T) {
	t.Parallel() // its own store and service; it waits on the queue more than it computes
	ctx := context.Background()
	s := newTestService(t, Config{QueueSize: 2, Workers: 2}, true)
	created, err := s.CreatePlan(ctx, PlanRequest{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 2, StartMS: 100},
		Constraints: whatif.Constraints{TTFTP99MS: ptr(50.0)}, Search: whatif.Search{BisectGrace: ptr(false)}})
	require.NoError(t, err)
	p := waitPlanView(t, s, created.ID, store.StatusDone)
	assert.Greater(t, len(p.Candidates), 2, "the explore batch must be larger than the queue for this test to mean anything")
	assert.Greater(t, p.Runs, 2)
}

// A plan left running by a stopped server is resumed by the next and finishes; a running plan
// cancelled stops with its runs; asked for again (even at once, before its planner has
// stopped), it runs again with its runs queued again.
func TestPlanCancelAndRestart(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir()+"/plan-restart.db")
	a := newTestService(t, Config{Store: st}, false) // no workers: the plan waits on its runs
	req := PlanRequest{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 2, StartMS: 100}}
	created, err := a.CreatePlan(ctx, req)
	require.NoError(t, err)
	id := created.ID
	waitPlan(t, a, id, store.StatusRunning)

	// A restart resumes it and it finishes.
	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, a.Shutdown(stopCtx))
	b := newTestService(t, Config{Store: st, Workers: 2}, true)
	require.NotNil(t, waitPlanView(t, b, id, store.StatusDone).Recommended)

	// Cancelling a running plan stops it and its runs.
	c := newTestService(t, Config{}, false)
	created, err = c.CreatePlan(ctx, req)
	require.NoError(t, err)
	id = created.ID
	waitPlan(t, c, id, store.StatusRunning)
	deadline := time.Now().Add(10 * time.Second)
	for {
		pl, err := c.Plan(ctx, id)
		require.NoError(t, err)
		if len(pl.Submitted) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, c.CancelPlan(ctx, id))
	pl := waitPlanView(t, c, id, store.StatusCancelled)
	require.NotEmpty(t, pl.Submitted)
	for _, r := range pl.Submitted {
		waitStatus(t, c, r.RunID, store.StatusCancelled)
	}

	// Asked for again, it runs again: its runs are queued again. Cancelled and asked for again
	// at once, before its planner has stopped, it runs again too.
	for range 2 {
		again, err := c.CreatePlan(ctx, req)
		require.NoError(t, err)
		assert.Equal(t, id, again.ID)
		assert.False(t, again.Done)
		waitPlan(t, c, id, store.StatusRunning)
		for _, r := range pl.Submitted {
			waitStatus(t, c, r.RunID, store.StatusQueued)
		}
		require.NoError(t, c.CancelPlan(ctx, id))
	}
	_, err = c.CreatePlan(ctx, req)
	require.NoError(t, err)
	waitPlan(t, c, id, store.StatusRunning)
	for _, r := range pl.Submitted {
		waitStatus(t, c, r.RunID, store.StatusQueued)
	}
}

// Finding M2: a plan's runs count against its owner's quota of queued runs. The driver submits
// only within the owner's remaining quota and waits for room, so a tune plan of up to 10 runs
// never has more than the quota's 3 queued or running, the owner's own run included; another
// user is not held back by it.
func TestPlanRunsStayWithinTheOwnersQuota(t *testing.T) {
	t.Parallel() // its own store and service; it waits on the queue more than it computes
	fake := runtest.NewBlockingRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.Run, QuotaQueuedRuns: 3}, true)
	defer close(fake.Release)
	quota := store.Quota{QueuedRuns: 3}
	alice := store.WithQuota(store.WithOwner(context.Background(), "alice"), quota)
	_, err := s.Submit(alice, mustParse(t, runtest.Scenario("alice's own")))
	require.NoError(t, err)
	lull, err := os.ReadFile("../sim/whatif/testdata/lull.json")
	require.NoError(t, err)
	_, err = s.CreatePlan(alice, PlanRequest{Scenario: lull, Goal: whatif.Goal{Tune: "autoscaler"}, Search: whatif.Search{MaxRuns: 10}})
	require.NoError(t, err)

	peak := 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		u, err := s.store.UsageOf(context.Background(), "alice")
		require.NoError(t, err)
		peak = max(peak, u.UnfinishedRuns)
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, 3, peak, "the plan fills the quota and goes no further while the runs are held")

	bob := store.WithQuota(store.WithOwner(context.Background(), "bob"), quota)
	_, err = s.Submit(bob, mustParse(t, runtest.Scenario("bob's own")))
	assert.NoError(t, err, "bob has his own quota")
}
