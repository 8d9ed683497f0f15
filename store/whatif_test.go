package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestSweeps(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	for _, id := range []string{"run-a", "run-b"} {
		_, _, err := s.CreateRun(ctx, id, id, []byte(`{}`), t0)
		require.NoError(t, err)
	}
	sw := store.Sweep{ID: "sw1", Name: "bandwidth", ScenarioJSON: []byte(`{"a":1}`), AxesJSON: []byte(`[{"path":"x","values":[1,2]}]`)}
	points := []store.SweepPoint{{ValuesJSON: []byte(`[1]`), RunID: "run-a"}, {ValuesJSON: []byte(`[2]`), RunID: "run-b"}}

	t.Run("OK", func(t *testing.T) {
		created, err := s.CreateSweep(ctx, sw, points, t0)
		require.NoError(t, err)
		assert.True(t, created)
		got, pts, err := s.GetSweep(ctx, "sw1")
		require.NoError(t, err)
		assert.Equal(t, "bandwidth", got.Name)
		assert.False(t, got.Cancelled)
		require.Len(t, pts, 2)
		assert.Equal(t, 1, pts[1].Index)
		assert.Equal(t, "run-b", pts[1].RunID)
		assert.Equal(t, `[2]`, string(pts[1].ValuesJSON))
		assert.Equal(t, store.StatusQueued, pts[0].Status)
	})
	t.Run("CancelThenResume", func(t *testing.T) {
		require.NoError(t, s.CancelSweep(ctx, "sw1"))
		got, _, err := s.GetSweep(ctx, "sw1")
		require.NoError(t, err)
		assert.True(t, got.Cancelled)
		created, err := s.CreateSweep(ctx, sw, points, t0)
		require.NoError(t, err)
		assert.False(t, created, "the same sweep again is the existing one")
		got, _, err = s.GetSweep(ctx, "sw1")
		require.NoError(t, err)
		assert.False(t, got.Cancelled, "asking again resumes it")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, _, err := s.GetSweep(ctx, "nope")
		assert.ErrorIs(t, err, store.ErrNotFound)
		assert.ErrorIs(t, s.CancelSweep(ctx, "nope"), store.ErrNotFound)
	})
	t.Run("ErrUnknownRun", func(t *testing.T) {
		bad := sw
		bad.ID = "sw2"
		_, err := s.CreateSweep(ctx, bad, []store.SweepPoint{{ValuesJSON: []byte(`[1]`), RunID: "missing"}}, t0)
		require.Error(t, err, "a point must name a stored run")
		_, _, err = s.GetSweep(ctx, "sw2")
		assert.ErrorIs(t, err, store.ErrNotFound, "nothing of a failed sweep is stored")
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := s.CreateSweep(ctx, store.Sweep{ID: "x"}, nil, t0)
		assert.ErrorIs(t, err, store.ErrInvalid)
	})
}

// A sweep's points can be recorded in pieces as they are fed to the queue.
func TestSweepFeed(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	for _, id := range []string{"run-a", "run-b", "run-c"} {
		_, _, err := s.CreateRun(ctx, id, id, []byte(`{}`), t0)
		require.NoError(t, err)
	}
	sw := store.Sweep{ID: "fed", ScenarioJSON: []byte(`{"a":1}`), AxesJSON: []byte(`[{"path":"x","values":[1,2,3]}]`)}
	created, err := s.CreateSweep(ctx, sw, nil, t0)
	require.NoError(t, err)
	require.True(t, created)
	other := store.Sweep{ID: "off", ScenarioJSON: []byte(`{"a":2}`), AxesJSON: []byte(`[{"path":"x","values":[1]}]`)}
	_, err = s.CreateSweep(ctx, other, nil, t0.Add(time.Second))
	require.NoError(t, err)
	require.NoError(t, s.CancelSweep(ctx, "off"))

	feeds, err := s.ActiveSweeps(ctx)
	require.NoError(t, err)
	require.Len(t, feeds, 1, "a cancelled sweep is not fed")
	assert.Equal(t, "fed", feeds[0].ID)
	assert.Equal(t, 0, feeds[0].Recorded)
	assert.Equal(t, `[{"path":"x","values":[1,2,3]}]`, string(feeds[0].AxesJSON))

	require.NoError(t, s.AddSweepPoints(ctx, "fed", 0, []store.SweepPoint{{ValuesJSON: []byte(`[1]`), RunID: "run-a"}, {ValuesJSON: []byte(`[2]`), RunID: "run-b"}}))
	// Feeding point 1 again (a resumed sweep) leaves it as it is; point 2 is added.
	require.NoError(t, s.AddSweepPoints(ctx, "fed", 1, []store.SweepPoint{{ValuesJSON: []byte(`[9]`), RunID: "run-c"}, {ValuesJSON: []byte(`[3]`), RunID: "run-c"}}))
	_, pts, err := s.GetSweep(ctx, "fed")
	require.NoError(t, err)
	require.Len(t, pts, 3)
	assert.Equal(t, []string{"run-a", "run-b", "run-c"}, []string{pts[0].RunID, pts[1].RunID, pts[2].RunID})
	assert.Equal(t, `[2]`, string(pts[1].ValuesJSON))
	feeds, err = s.ActiveSweeps(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, feeds[0].Recorded)

	assert.Error(t, s.AddSweepPoints(ctx, "fed", 3, []store.SweepPoint{{ValuesJSON: []byte(`[4]`), RunID: "missing"}}), "a point must name a stored run")
	assert.ErrorIs(t, s.AddSweepPoints(ctx, "fed", -1, nil), store.ErrInvalid)
}

func TestPlans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "plans.db")
	s := mustOpenAt(t, path)
	p := store.Plan{ID: "pl1", Name: "drain 4", ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{"goal":{}}`)}
	plan, created, err := s.CreatePlan(ctx, p, t0)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, store.StatusQueued, plan.Status)

	_, created, err = s.CreatePlan(ctx, p, t0)
	require.NoError(t, err)
	assert.False(t, created)

	for _, id := range []string{"r1", "r2"} {
		_, _, err := s.CreateRun(ctx, id, id, []byte(`{}`), t0)
		require.NoError(t, err)
	}
	require.NoError(t, s.SetPlanStatus(ctx, "pl1", store.StatusRunning, "", nil, t0))
	require.NoError(t, s.AddPlanPoints(ctx, "pl1", []string{"one", "two"}, []string{"r1", "r2"}))
	require.NoError(t, s.AddPlanPoints(ctx, "pl1", []string{"one again"}, []string{"r1"}))
	_, pts, err := s.GetPlan(ctx, "pl1")
	require.NoError(t, err)
	require.Len(t, pts, 2, "a run listed twice is kept once")
	assert.Equal(t, "two", pts[1].Label)
	assert.Equal(t, store.StatusQueued, pts[1].Status)

	// A crash leaves it running; a new process finds it.
	require.NoError(t, s.Close())
	s = mustOpenAt(t, path)
	unfinished, err := s.UnfinishedPlans(ctx)
	require.NoError(t, err)
	require.Len(t, unfinished, 1)
	assert.Equal(t, "pl1", unfinished[0].ID)

	later := t0.Add(time.Minute)
	require.NoError(t, s.SetPlanStatus(ctx, "pl1", store.StatusDone, "", []byte(`{"candidates":[]}`), later))
	got, _, err := s.GetPlan(ctx, "pl1")
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, got.Status)
	assert.Equal(t, `{"candidates":[]}`, string(got.ResultJSON))
	assert.True(t, got.FinishedAt.Equal(later))
	unfinished, err = s.UnfinishedPlans(ctx)
	require.NoError(t, err)
	assert.Empty(t, unfinished)

	// A cancelled plan stays cancelled, whatever a planner still running reports; asked again,
	// it is queued again.
	require.NoError(t, s.SetPlanStatus(ctx, "pl1", store.StatusCancelled, "cancelled by a user", nil, later))
	assert.ErrorIs(t, s.SetPlanStatus(ctx, "pl1", store.StatusDone, "", []byte(`{}`), later), store.ErrConflict)
	assert.ErrorIs(t, s.SetPlanStatus(ctx, "pl1", store.StatusRunning, "", nil, later), store.ErrConflict)
	got, _, err = s.GetPlan(ctx, "pl1")
	require.NoError(t, err)
	assert.Equal(t, store.StatusCancelled, got.Status)
	plan, created, err = s.CreatePlan(ctx, p, t0)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, store.StatusQueued, plan.Status)

	assert.ErrorIs(t, s.SetPlanStatus(ctx, "pl1", "odd", "", nil, t0), store.ErrInvalid)
	assert.ErrorIs(t, s.SetPlanStatus(ctx, "nope", store.StatusDone, "", nil, t0), store.ErrNotFound)
	_, _, err = s.GetPlan(ctx, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.AddPlanPoints(ctx, "pl1", []string{"a"}, nil), store.ErrInvalid)
	_, _, err = s.CreatePlan(ctx, store.Plan{ID: "x"}, t0)
	assert.ErrorIs(t, err, store.ErrInvalid)
}

// A run is waited on elsewhere while a user submitted it directly and it has not ended and been
// queued again by a sweep or plan, while another sweep not cancelled lists it, or while another
// plan queued or running has submitted it.
func TestRunsWaitedOnElsewhere(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	submit := func(id string, direct bool) {
		t.Helper()
		_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: id, Name: id, ScenarioJSON: []byte(`{"id":"` + id + `"}`), Direct: direct}}, 0, t0, nil)
		require.NoError(t, err)
	}
	for _, id := range []string{"only-a", "a-and-b", "a-and-plan", "a-and-user"} {
		submit(id, false)
	}
	submit("a-and-user", true)  // a user asks for a sweep's run: reused, and now theirs too
	submit("user-first", true)  // a user's run a sweep asks for afterwards
	submit("user-first", false) // (the sweep's submission does not clear it)
	pt := func(id string) store.SweepPoint { return store.SweepPoint{ValuesJSON: []byte(`[0]`), RunID: id} }
	_, err := s.CreateSweep(ctx, store.Sweep{ID: "a", ScenarioJSON: []byte(`{}`), AxesJSON: []byte(`[]`)},
		[]store.SweepPoint{pt("only-a"), pt("a-and-b"), pt("a-and-plan"), pt("a-and-user"), pt("user-first")}, t0)
	require.NoError(t, err)
	_, err = s.CreateSweep(ctx, store.Sweep{ID: "b", ScenarioJSON: []byte(`{}`), AxesJSON: []byte(`[1]`)}, []store.SweepPoint{pt("a-and-b")}, t0)
	require.NoError(t, err)
	_, _, err = s.CreatePlan(ctx, store.Plan{ID: "p", ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{}`)}, t0)
	require.NoError(t, err)
	require.NoError(t, s.AddPlanPoints(ctx, "p", []string{"x"}, []string{"a-and-plan"}))

	all := []string{"only-a", "a-and-b", "a-and-plan", "a-and-user", "user-first"}
	held, err := s.RunsWaitedOnElsewhere(ctx, all, "a", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a-and-b": true, "a-and-plan": true, "a-and-user": true, "user-first": true}, held)
	// Cancelling sweep a's runs in one statement each spares the same ones.
	cancelAll := func() []string {
		t.Helper()
		var got []string
		for _, id := range all {
			cancelled, _, err := s.CancelUnlessWanted(ctx, id, "a", "", t0)
			require.NoError(t, err)
			if cancelled {
				got = append(got, id)
				run, err := s.GetRunStatus(ctx, id)
				require.NoError(t, err)
				require.Equal(t, store.StatusCancelled, run.Status)
			}
		}
		return got
	}
	assert.Equal(t, []string{"only-a"}, cancelAll())

	// Once the other sweep is cancelled and the plan has ended, only the users' runs are held.
	require.NoError(t, s.CancelSweep(ctx, "b"))
	require.NoError(t, s.SetPlanStatus(ctx, "p", store.StatusCancelled, "", nil, t0))
	held, err = s.RunsWaitedOnElsewhere(ctx, all, "a", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"a-and-user": true, "user-first": true}, held)
	assert.Equal(t, []string{"a-and-b", "a-and-plan"}, cancelAll(), "a run already cancelled is not cancelled twice")

	// A user's run that ended (cancelled) and is queued again by a sweep is the sweep's alone.
	require.NoError(t, s.EndRun(ctx, "user-first", store.StatusCancelled, "", t0))
	submit("user-first", false)
	held, err = s.RunsWaitedOnElsewhere(ctx, []string{"user-first"}, "a", "")
	require.NoError(t, err)
	assert.Empty(t, held)
}

// Migration 00009 marks the runs stored before 00008 that no sweep or plan lists as submitted
// directly, so cancelling a sweep that shares one later spares it.
func TestMigrationMarksOldStandaloneRunsDirect(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s := mustOpenAt(t, path)
	for _, id := range []string{"standalone", "swept", "planned"} {
		_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: id, Name: id, ScenarioJSON: []byte(`{"id":"` + id + `"}`)}}, 0, t0, nil)
		require.NoError(t, err)
	}
	_, err := s.CreateSweep(ctx, store.Sweep{ID: "w", ScenarioJSON: []byte(`{}`), AxesJSON: []byte(`[]`)},
		[]store.SweepPoint{{ValuesJSON: []byte(`[0]`), RunID: "swept"}}, t0)
	require.NoError(t, err)
	_, _, err = s.CreatePlan(ctx, store.Plan{ID: "p", ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{}`)}, t0)
	require.NoError(t, err)
	require.NoError(t, s.AddPlanPoints(ctx, "p", []string{"x"}, []string{"planned"}))
	// As a database migrated to 00008 only: every run reads 0, and 00009 has not run.
	_, err = s.DB().ExecContext(ctx, `UPDATE runs SET wanted_directly = 0`)
	require.NoError(t, err)
	_, err = s.DB().ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = 9`)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s = mustOpenAt(t, path)
	got := map[string]int{}
	rows, err := s.DB().QueryContext(ctx, `SELECT id, wanted_directly FROM runs`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		var v int
		require.NoError(t, rows.Scan(&id, &v))
		got[id] = v
	}
	require.NoError(t, rows.Err())
	rows.Close()
	assert.Equal(t, map[string]int{"standalone": 1, "swept": 0, "planned": 0}, got)
}

// ListPlans pages through plans newest first and counts them all.
func TestListPlans(t *testing.T) {
	ctx := context.Background()
	s := mustOpenAt(t, filepath.Join(t.TempDir(), "list.db"))
	_, total, err := s.ListPlans(ctx, 2, 0)
	require.NoError(t, err)
	assert.Zero(t, total)
	for i, id := range []string{"pa", "pb", "pc"} {
		_, _, err := s.CreatePlan(ctx, store.Plan{ID: id, Name: "plan " + id, ScenarioJSON: []byte(`{}`), RequestJSON: []byte(`{"goal":{"tune":"autoscaler"}}`)}, t0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
	}
	page, total, err := s.ListPlans(ctx, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, 3, total)
	require.Len(t, page, 2)
	assert.Equal(t, []string{"pc", "pb"}, []string{page[0].ID, page[1].ID})
	assert.JSONEq(t, `{"goal":{"tune":"autoscaler"}}`, string(page[0].RequestJSON))
	assert.Equal(t, store.StatusQueued, page[0].Status)
	page, _, err = s.ListPlans(ctx, 2, 2)
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, "pa", page[0].ID)
	_, _, err = s.ListPlans(ctx, 0, 0)
	assert.ErrorIs(t, err, store.ErrInvalid)
}
