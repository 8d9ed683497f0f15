package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestCreateRun(t *testing.T) {
	ctx := context.Background()
	scenario := []byte(`{"name":"drain two","workers":4}`)

	t.Run("OK", func(t *testing.T) {
		s := mustOpen(t)
		run, created, err := s.CreateRun(ctx, "abc", "drain two", scenario, t0)
		require.NoError(t, err)
		assert.True(t, created)
		assert.Equal(t, "abc", run.ID)
		assert.Equal(t, "drain two", run.Name)
		assert.Equal(t, store.StatusQueued, run.Status)
		assert.Equal(t, scenario, run.ScenarioJSON)
		assert.Nil(t, run.ReportJSON)
		assert.Nil(t, run.HeadlineJSON)
		assert.True(t, run.CreatedAt.Equal(t0), "created %v, want %v", run.CreatedAt, t0)
		assert.True(t, run.StartedAt.IsZero())
		assert.True(t, run.FinishedAt.IsZero())
		assert.Zero(t, run.Attempts)

		got, err := s.GetRun(ctx, "abc")
		require.NoError(t, err)
		assert.Equal(t, run, got)
	})

	t.Run("IdempotentWhileQueuedRunningOrDone", func(t *testing.T) {
		s := mustOpen(t)
		_, _, err := s.CreateRun(ctx, "abc", "first", scenario, t0)
		require.NoError(t, err)
		check := func(wantStatus string) {
			t.Helper()
			run, created, err := s.CreateRun(ctx, "abc", "second", scenario, t0.Add(time.Hour))
			require.NoError(t, err)
			assert.False(t, created)
			assert.Equal(t, wantStatus, run.Status)
			assert.Equal(t, "first", run.Name, "an existing run keeps its name")
			assert.True(t, run.CreatedAt.Equal(t0))
		}
		check(store.StatusQueued)
		require.NoError(t, s.StartRun(ctx, "abc", t0))
		check(store.StatusRunning)
		require.NoError(t, s.FinishRun(ctx, "abc", []byte(`{"r":1}`), []byte(`{"h":1}`), t0))
		check(store.StatusDone)
		_, total, err := s.ListRuns(ctx, 10, 0)
		require.NoError(t, err)
		assert.Equal(t, 1, total)
	})

	for _, end := range []string{store.StatusFailed, store.StatusCancelled} {
		t.Run("RetriesWhen"+end, func(t *testing.T) {
			s := mustOpen(t)
			_, _, err := s.CreateRun(ctx, "abc", "n", scenario, t0)
			require.NoError(t, err)
			require.NoError(t, s.StartRun(ctx, "abc", t0.Add(time.Second)))
			require.NoError(t, s.SetProgress(ctx, "abc", 0.5))
			require.NoError(t, s.EndRun(ctx, "abc", end, "boom", t0.Add(2*time.Second)))

			run, created, err := s.CreateRun(ctx, "abc", "n", scenario, t0.Add(time.Hour))
			require.NoError(t, err)
			assert.True(t, created, "resubmitting a %s run retries it", end)
			assert.Equal(t, store.StatusQueued, run.Status)
			assert.Empty(t, run.Error)
			assert.Zero(t, run.Progress)
			assert.True(t, run.StartedAt.IsZero())
			assert.True(t, run.FinishedAt.IsZero())
			assert.Equal(t, 1, run.Attempts, "attempts count across retries")
			require.NoError(t, s.StartRun(ctx, "abc", t0.Add(time.Hour)))
		})
	}

	t.Run("ErrDifferentScenarioSameID", func(t *testing.T) {
		s := mustOpen(t)
		_, _, err := s.CreateRun(ctx, "abc", "", scenario, t0)
		require.NoError(t, err)
		_, _, err = s.CreateRun(ctx, "abc", "", []byte(`{"other":true}`), t0)
		require.ErrorIs(t, err, store.ErrConflict)
		assert.Contains(t, err.Error(), "different scenario")
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		s := mustOpen(t)
		for name, tc := range map[string]struct {
			id       string
			scenario []byte
			now      time.Time
		}{
			"EmptyID":       {"", scenario, t0},
			"EmptyScenario": {"abc", nil, t0},
			"ZeroTime":      {"abc", scenario, time.Time{}},
		} {
			_, _, err := s.CreateRun(ctx, tc.id, "", tc.scenario, tc.now)
			assert.ErrorIs(t, err, store.ErrInvalid, name)
		}
	})
}

func TestGetRun(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)

	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.GetRun(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		assert.Contains(t, err.Error(), `"nope"`)
		_, err = s.GetRunStatus(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("StatusLeavesOutBlobs", func(t *testing.T) {
		_, _, err := s.CreateRun(ctx, "abc", "n", []byte(`{"s":1}`), t0)
		require.NoError(t, err)
		require.NoError(t, s.StartRun(ctx, "abc", t0.Add(time.Second)))
		require.NoError(t, s.FinishRun(ctx, "abc", []byte(`{"report":1}`), []byte(`{"headline":1}`), t0.Add(3*time.Second)))

		full, err := s.GetRun(ctx, "abc")
		require.NoError(t, err)
		status, err := s.GetRunStatus(ctx, "abc")
		require.NoError(t, err)
		assert.Nil(t, status.ScenarioJSON)
		assert.Nil(t, status.ReportJSON)
		assert.Nil(t, status.HeadlineJSON)
		assert.Nil(t, status.SummaryJSON)
		full.ScenarioJSON, full.SummaryJSON, full.HeadlineJSON = nil, nil, nil
		assert.Equal(t, full, status, "everything else matches GetRun")
	})
}

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	_, _, err := s.CreateRun(ctx, "abc", "n", []byte(`{}`), t0)
	require.NoError(t, err)

	require.NoError(t, s.StartRun(ctx, "abc", t0.Add(time.Second)))
	run, err := s.GetRunStatus(ctx, "abc")
	require.NoError(t, err)
	assert.Equal(t, store.StatusRunning, run.Status)
	assert.Equal(t, 1, run.Attempts)
	assert.True(t, run.StartedAt.Equal(t0.Add(time.Second)))

	require.NoError(t, s.SetProgress(ctx, "abc", 0.25))
	run, err = s.GetRunStatus(ctx, "abc")
	require.NoError(t, err)
	assert.InDelta(t, 0.25, run.Progress, 1e-12)

	report := []byte(`{"removal_ms":151}`)
	headline := []byte(`{"latest_removal_ms":151}`)
	require.NoError(t, s.FinishRun(ctx, "abc", report, headline, t0.Add(2*time.Second)))
	run, err = s.GetRun(ctx, "abc")
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, run.Status)
	assert.Nil(t, run.ReportJSON, "GetRun never reads the full report")
	assert.Nil(t, run.SummaryJSON, "FinishRun stores no summary")
	got, err := s.GetReportJSON(ctx, "abc")
	require.NoError(t, err)
	assert.Equal(t, report, got)
	assert.Equal(t, headline, run.HeadlineJSON)
	// A summary computed later is stored once; a second one does not replace it.
	require.NoError(t, s.SetSummary(ctx, "abc", []byte(`{"s":1}`)))
	require.NoError(t, s.SetSummary(ctx, "abc", []byte(`{"s":2}`)))
	run, err = s.GetRun(ctx, "abc")
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"s":1}`), run.SummaryJSON)
	assert.ErrorIs(t, s.SetSummary(ctx, "abc", nil), store.ErrInvalid)
	assert.InDelta(t, 1.0, run.Progress, 0)
	assert.True(t, run.FinishedAt.Equal(t0.Add(2*time.Second)))
}

func TestRunTransitionErrors(t *testing.T) {
	ctx := context.Background()
	now := t0

	// Each case brings run "r" into a state, then tries an operation that does not apply.
	type op func(s *store.Store) error
	start := func(s *store.Store) error { return s.StartRun(ctx, "r", now) }
	progress := func(s *store.Store) error { return s.SetProgress(ctx, "r", 0.5) }
	finish := func(s *store.Store) error { return s.FinishRun(ctx, "r", []byte(`{}`), nil, now) }
	fail := func(s *store.Store) error { return s.EndRun(ctx, "r", store.StatusFailed, "x", now) }
	cancel := func(s *store.Store) error { return s.EndRun(ctx, "r", store.StatusCancelled, "x", now) }
	requeue := func(s *store.Store) error { return s.Requeue(ctx, "r") }

	states := map[string][]op{
		store.StatusQueued:    nil,
		store.StatusRunning:   {start},
		store.StatusDone:      {start, finish},
		store.StatusFailed:    {start, fail},
		store.StatusCancelled: {cancel},
	}
	tests := []struct {
		name    string
		state   string
		op      op
		wantErr error // nil: allowed
	}{
		{"StartQueued", store.StatusQueued, start, nil},
		{"StartRunning", store.StatusRunning, start, store.ErrConflict},
		{"StartDone", store.StatusDone, start, store.ErrConflict},
		{"StartCancelled", store.StatusCancelled, start, store.ErrConflict},
		{"ProgressQueued", store.StatusQueued, progress, store.ErrConflict},
		{"ProgressCancelled", store.StatusCancelled, progress, store.ErrConflict},
		{"FinishQueued", store.StatusQueued, finish, store.ErrConflict},
		{"FinishDone", store.StatusDone, finish, store.ErrConflict},
		{"FinishFailed", store.StatusFailed, finish, store.ErrConflict},
		{"FailQueued", store.StatusQueued, fail, nil},
		{"CancelRunning", store.StatusRunning, cancel, nil},
		{"CancelDone", store.StatusDone, cancel, store.ErrConflict},
		{"FailCancelled", store.StatusCancelled, fail, store.ErrConflict},
		{"RequeueRunning", store.StatusRunning, requeue, nil},
		{"RequeueQueued", store.StatusQueued, requeue, nil},
		{"RequeueDone", store.StatusDone, requeue, store.ErrConflict},
		{"RequeueFailed", store.StatusFailed, requeue, store.ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustOpen(t)
			_, _, err := s.CreateRun(ctx, "r", "", []byte(`{}`), now)
			require.NoError(t, err)
			for _, step := range states[tc.state] {
				require.NoError(t, step(s))
			}
			before, err := s.GetRun(ctx, "r")
			require.NoError(t, err)
			require.Equal(t, tc.state, before.Status)

			err = tc.op(s)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			assert.Contains(t, err.Error(), `"r"`, "the error names the run")
			assert.Contains(t, err.Error(), tc.state, "the error says the current status")
			after, err := s.GetRun(ctx, "r")
			require.NoError(t, err)
			assert.Equal(t, before, after, "a refused transition changes nothing")
		})
	}

	t.Run("ErrNotFound", func(t *testing.T) {
		s := mustOpen(t)
		for name, o := range map[string]op{"start": start, "progress": progress, "finish": finish, "fail": fail, "requeue": requeue} {
			assert.ErrorIs(t, o(s), store.ErrNotFound, name)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		s := mustOpen(t)
		_, _, err := s.CreateRun(ctx, "r", "", []byte(`{}`), now)
		require.NoError(t, err)
		require.NoError(t, start(s))
		for _, p := range []float64{-0.1, 1.5} {
			assert.ErrorIs(t, s.SetProgress(ctx, "r", p), store.ErrInvalid, "progress %v", p)
		}
		assert.ErrorIs(t, s.EndRun(ctx, "r", store.StatusDone, "", now), store.ErrInvalid)
		assert.ErrorIs(t, s.FinishRun(ctx, "r", nil, nil, now), store.ErrInvalid)
		run, err := s.GetRun(ctx, "r")
		require.NoError(t, err)
		assert.Equal(t, store.StatusRunning, run.Status)
	})
}

func TestRequeueResetsAttempt(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	_, _, err := s.CreateRun(ctx, "r", "", []byte(`{}`), t0)
	require.NoError(t, err)
	require.NoError(t, s.StartRun(ctx, "r", t0))
	require.NoError(t, s.SetProgress(ctx, "r", 0.7))
	require.NoError(t, s.Requeue(ctx, "r"))
	run, err := s.GetRun(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, store.StatusQueued, run.Status)
	assert.Zero(t, run.Progress)
	assert.True(t, run.StartedAt.IsZero())
	require.NoError(t, s.StartRun(ctx, "r", t0))
	run, err = s.GetRunStatus(ctx, "r")
	require.NoError(t, err)
	assert.Equal(t, 2, run.Attempts)
}

func TestListRuns(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)

	runs, total, err := s.ListRuns(ctx, 10, 0)
	require.NoError(t, err)
	assert.Empty(t, runs)
	assert.Zero(t, total)

	const n = 7
	for i := range n {
		// Created out of order so "newest first" has to come from created_at, not insertion.
		at := t0.Add(time.Duration((i*3)%n) * time.Minute)
		_, _, err := s.CreateRun(ctx, fmt.Sprintf("run-%d", i), fmt.Sprintf("name %d", i), []byte(fmt.Sprintf(`{"i":%d}`, i)), at)
		require.NoError(t, err)
	}
	require.NoError(t, s.StartRun(ctx, "run-1", t0))
	require.NoError(t, s.FinishRun(ctx, "run-1", []byte(`{}`), []byte(`{"h":1}`), t0.Add(time.Hour)))

	var all []store.RunSummary
	for offset := 0; ; offset += 3 {
		page, total, err := s.ListRuns(ctx, 3, offset)
		require.NoError(t, err)
		assert.Equal(t, n, total)
		assert.LessOrEqual(t, len(page), 3)
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
	}
	require.Len(t, all, n)
	seen := map[string]bool{}
	for i, r := range all {
		assert.False(t, seen[r.ID], "run %s listed twice", r.ID)
		seen[r.ID] = true
		if i > 0 {
			assert.False(t, r.CreatedAt.After(all[i-1].CreatedAt), "newest first: %v after %v", r.CreatedAt, all[i-1].CreatedAt)
		}
		if r.ID == "run-1" {
			assert.Equal(t, store.StatusDone, r.Status)
			assert.Equal(t, []byte(`{"h":1}`), r.HeadlineJSON)
			assert.True(t, r.FinishedAt.Equal(t0.Add(time.Hour)))
		}
	}

	for _, bad := range [][2]int{{0, 0}, {-1, 0}, {10, -1}} {
		_, _, err := s.ListRuns(ctx, bad[0], bad[1])
		assert.ErrorIs(t, err, store.ErrInvalid, "limit %d offset %d", bad[0], bad[1])
	}
}

func TestUnfinishedRunsAfterCrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scalein.db")

	s, err := store.Open(ctx, dbTarget(t, path))
	require.NoError(t, err)
	for i, id := range []string{"done", "running", "queued", "failed"} {
		_, _, err := s.CreateRun(ctx, id, id, []byte(`{"id":"`+id+`"}`), t0.Add(time.Duration(i)*time.Second))
		require.NoError(t, err)
	}
	require.NoError(t, s.StartRun(ctx, "done", t0))
	require.NoError(t, s.FinishRun(ctx, "done", []byte(`{}`), nil, t0))
	require.NoError(t, s.StartRun(ctx, "running", t0))
	require.NoError(t, s.SetProgress(ctx, "running", 0.4))
	require.NoError(t, s.EndRun(ctx, "failed", store.StatusFailed, "limit", t0))
	// The process dies here: nothing finishes or requeues the running run.
	require.NoError(t, s.Close())

	s = mustOpenAt(t, path)
	runs, err := s.UnfinishedRuns(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, "running", runs[0].ID, "oldest first")
	assert.Equal(t, store.StatusRunning, runs[0].Status)
	assert.Equal(t, []byte(`{"id":"running"}`), runs[0].ScenarioJSON, "recovery needs the scenario")
	assert.Equal(t, "queued", runs[1].ID)

	// Recovery: requeue what was running, then both start normally.
	require.NoError(t, s.Requeue(ctx, "running"))
	for _, r := range runs {
		require.NoError(t, s.StartRun(ctx, r.ID, t0.Add(time.Minute)))
	}
}

// TestConcurrentWriters checks that writers in many goroutines, and a second Store on the same
// file (as a second process would), never see "database is locked".
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scalein.db")
	stores := []*store.Store{mustOpenAt(t, path), mustOpenAt(t, path)}

	const goroutines, runsEach = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*runsEach*8)
	for g := range goroutines {
		wg.Go(func() {
			s := stores[g%len(stores)]
			for i := range runsEach {
				id := fmt.Sprintf("g%d-r%d", g, i)
				steps := []func() error{
					func() error { _, _, err := s.CreateRun(ctx, id, "", []byte(`{"id":"`+id+`"}`), t0); return err },
					func() error { return s.StartRun(ctx, id, t0) },
					func() error { return s.SetProgress(ctx, id, 0.3) },
					func() error { _, err := s.GetRunStatus(ctx, id); return err },
					func() error { return s.SetProgress(ctx, id, 0.9) },
					func() error { _, _, err := s.ListRuns(ctx, 5, 0); return err },
					func() error { return s.FinishRun(ctx, id, []byte(`{"ok":true}`), nil, t0) },
				}
				for _, step := range steps {
					if err := step(); err != nil {
						errs <- fmt.Errorf("%s: %w", id, err)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, total, err := stores[0].ListRuns(ctx, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, goroutines*runsEach, total)
	unfinished, err := stores[1].UnfinishedRuns(ctx)
	require.NoError(t, err)
	assert.Empty(t, unfinished)
}
