package runs

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"

	// Registers the "pgx" database/sql driver the test cuts connections through.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// A plan goes through a PostgreSQL outage the way its runs do (the soak test of issue 29: a
// 10 s outage failed six plans): its driver waits for the database and goes on, finding again
// the runs it had submitted, and the plan ends done with the result of a quiet run.
func TestPlanSurvivesAPostgresOutage(t *testing.T) {
	t.Parallel() // its own cluster; it mostly waits through the outage
	if testing.Short() {
		t.Skip("-short")
	}
	pgtest.SlowOnly(t, "a PostgreSQL outage of several seconds")
	ctx := context.Background()
	req := PlanRequest{Scenario: fourWorkers(t), Goal: whatif.Goal{Remove: 2, StartMS: 100}}

	// The quiet run, on SQLite.
	quiet := newTestService(t, Config{Workers: 2, QueueSize: 16}, true)
	p, err := quiet.CreatePlan(ctx, req)
	require.NoError(t, err)
	want := waitPlanFor(t, quiet, p.ID, store.StatusDone, time.Minute)

	// The same plan on PostgreSQL, stopped for 4 s (and its connections cut for 2 s after) once the plan has submitted its first runs
	// (they are held until then, so the outage falls in the middle of the plan).
	cluster := pgtest.Require(t)
	st, err := store.Open(ctx, cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	held := make(chan struct{})
	simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return sim.Run(ctx, sc, opt)
	}
	s := newTestService(t, Config{Store: st, Workers: 2, QueueSize: 16, Simulate: simulate, DriveRescan: 200 * time.Millisecond}, true)
	p, err = s.CreatePlan(ctx, req)
	require.NoError(t, err)
	eventually(t, "the plan submitted its first runs", func() bool {
		_, points, err := s.store.GetPlan(ctx, p.ID)
		return err == nil && len(points) > 0
	})

	require.NoError(t, cluster.Pause())
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = cluster.Resume()
		}
	})
	time.Sleep(4 * time.Second)
	require.NoError(t, cluster.Resume())
	resumed = true
	// A server coming back finds the connections of before cut (the soak's failed plans were
	// recorded as failed right after the outage): for 2 s every connection to it is cut
	// every 100 ms, while the database itself answers.
	admin, err := sql.Open("pgx", cluster.DSN("postgres"))
	require.NoError(t, err)
	defer admin.Close()
	for range 20 {
		_, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`)
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
	}
	close(held)

	got := waitPlanFor(t, s, p.ID, store.StatusDone, 2*time.Minute)
	assert.JSONEq(t, string(want.ResultJSON), string(got.ResultJSON), "the plan's result equals the quiet run's")
}

// waitPlanFor polls the store until the plan reaches want, riding out the store's errors (the
// database may be coming back), and fails the test when the plan ends otherwise or after limit.
func waitPlanFor(t *testing.T, s *Service, id, want string, limit time.Duration) store.Plan {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		plan, _, err := s.store.GetPlan(context.Background(), id)
		if err == nil && plan.Status == want {
			return plan
		}
		if err == nil && IsFinal(plan.Status) {
			t.Fatalf("plan %s ended %s (%s), want %s", id, plan.Status, plan.Error, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %s is %s (%v), want %s after %v", id, plan.Status, err, want, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
