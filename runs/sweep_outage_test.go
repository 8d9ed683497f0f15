package runs

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// A sweep's feeder goes through a lost database as a plan's driver does: it waits for the
// database and feeds on from the points it had recorded, rather than stopping. It used to stop
// at the first error with "feeding a sweep's points stopped", and only a restart (SQLite) or a
// rescan after the drive lock was lost (PostgreSQL) fed the rest; the rescan is set to an hour
// here so that only the feeder itself can finish the sweep.
func TestSweepFeedSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel() // its own stores; it mostly waits through the outages
	if testing.Short() {
		t.Skip("-short")
	}
	pgtest.SlowOnly(t, "database outages of 5 s and more")
	t.Run("SQLiteWriterBusy", func(t *testing.T) {
		t.Parallel()
		// Another connection holds SQLite's write lock past the store's busy timeout (5 s), so
		// a submission that starts waiting for it early enough fails as busy. The job queue
		// shares the store's one write connection, so whether the feeder's try or the queue's
		// poll meets the lock first varies: on the code before the fix this failed one run in
		// four; the PostgreSQL case below, 2 of 2.
		path := filepath.Join(t.TempDir(), "test.db")
		st := openStore(t, path)
		testSweepFeedOutage(t, st, func() func() {
			db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate&_busy_timeout=5000") // a temporary path: no ? or # to escape
			require.NoError(t, err)
			tx, err := db.Begin()
			require.NoError(t, err)
			return func() {
				_ = tx.Rollback()
				_ = db.Close()
			}
		}, 7*time.Second)
	})
	t.Run("PostgresStopped", func(t *testing.T) {
		t.Parallel()
		cluster := pgtest.Require(t)
		st, err := store.Open(context.Background(), cluster.NewDatabase(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		testSweepFeedOutage(t, st, func() func() {
			require.NoError(t, cluster.Pause())
			return func() { require.NoError(t, cluster.Resume()) }
		}, 3*time.Second)
	})
}

// testSweepFeedOutage starts a sweep of six points on st with room for three (one run held
// running, two queued), takes the database away (down returns what brings it back) for d while
// the feeder waits for room, then lets the runs go and requires every point recorded and done.
func testSweepFeedOutage(t *testing.T, st *store.Store, down func() (up func()), d time.Duration) {
	ctx := context.Background()
	held := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(held)
		}
	}
	t.Cleanup(release)
	simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return sim.Run(ctx, sc, opt)
	}
	s := newTestService(t, Config{Store: st, Workers: 1, QueueSize: 2, Simulate: simulate, DriveRescan: time.Hour}, true)
	created, err := s.CreateSweep(ctx, SweepRequest{Scenario: fourWorkers(t), Axes: axesOf(t, `[{"path": "kvcr.latency_ms", "values": [1, 2, 3, 4, 5, 6]}]`)})
	require.NoError(t, err)
	recorded := func() []store.SweepPoint {
		_, pts, err := s.store.GetSweep(ctx, created.ID)
		if err != nil {
			return nil
		}
		return pts
	}
	eventually(t, "one point running and two queued", func() bool { return len(recorded()) == 3 })
	require.True(t, s.Drives(created.ID), "the rest is fed in the background")

	up := down()
	time.Sleep(d)
	up()
	release()

	deadline := time.Now().Add(time.Minute)
	for {
		pts := recorded()
		done := len(pts) == 6
		for _, p := range pts {
			if run, err := s.store.GetRunStatus(ctx, p.RunID); err != nil || run.Status != store.StatusDone {
				done = false
			}
		}
		if done {
			break
		}
		require.False(t, time.Now().After(deadline), "after the outage the sweep has %d of its 6 points recorded, and the feeder runs: %v", len(pts), s.Drives(created.ID))
		time.Sleep(100 * time.Millisecond)
	}
}
