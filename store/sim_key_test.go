package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// Sweep and plan points find a done run with their simulation key; direct runs do not reuse.
func TestFindDoneRunBySimKey(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	subs, err := s.SubmitRuns(ctx, []store.NewRun{
		{ID: "a", Name: "first", ScenarioJSON: []byte(`{"n":1}`), Direct: true, SimKey: "k"},
		{ID: "b", Name: "second", ScenarioJSON: []byte(`{"n":2}`), SimKey: "k"},
		{ID: "c", Name: "other", ScenarioJSON: []byte(`{"n":3}`), SimKey: "other"},
		{ID: "d", Name: "asked for directly", ScenarioJSON: []byte(`{"n":4}`), Direct: true, SimKey: "k"},
	}, 0, t0, nil)
	require.NoError(t, err)
	require.Len(t, subs, 4)

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
	_, err = s.FindDoneRunBySimKey(ctx, "k", "d")
	require.ErrorIs(t, err, store.ErrNotFound, "a run asked for directly is simulated itself")
}
