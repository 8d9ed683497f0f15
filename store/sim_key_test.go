package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// Runs submitted with one simulation key find each other once one of them is done.
func TestFindDoneRunBySimKey(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	subs, err := s.SubmitRuns(ctx, []store.NewRun{
		{ID: "a", Name: "first", ScenarioJSON: []byte(`{"n":1}`), Direct: true, SimKey: "k"},
		{ID: "b", Name: "second", ScenarioJSON: []byte(`{"n":2}`), SimKey: "k"},
		{ID: "c", Name: "other", ScenarioJSON: []byte(`{"n":3}`), SimKey: "other"},
	}, 0, t0, nil)
	require.NoError(t, err)
	require.Len(t, subs, 3)

	_, err = s.FindDoneRunBySimKey(ctx, "k", "b")
	require.ErrorIs(t, err, store.ErrNotFound, "a is not done yet")
	require.NoError(t, s.StartRun(ctx, "a", t0))
	require.NoError(t, s.FinishRun(ctx, "a", []byte(`{}`), []byte(`{}`), t0))
	got, err := s.FindDoneRunBySimKey(ctx, "k", "b")
	require.NoError(t, err)
	assert.Equal(t, "a", got)
	_, err = s.FindDoneRunBySimKey(ctx, "k", "a")
	require.ErrorIs(t, err, store.ErrNotFound, "a run does not reuse itself")
	_, err = s.FindDoneRunBySimKey(ctx, "other", "b")
	require.ErrorIs(t, err, store.ErrNotFound)
}
