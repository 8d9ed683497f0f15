package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// A sweep's version changes with what its page shows (a point's status, a point submitted, a
// cancel) and only then.
func TestSweepVersion(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	for _, id := range []string{"run-a", "run-b", "run-c"} {
		_, _, err := s.CreateRun(ctx, id, id, []byte(`{}`), t0)
		require.NoError(t, err)
	}
	sw := store.Sweep{ID: "swv", Name: "v", ScenarioJSON: []byte(`{}`), AxesJSON: []byte(`[{"path":"x","values":[1,2,3]}]`)}
	_, err := s.CreateSweep(ctx, sw, []store.SweepPoint{{ValuesJSON: []byte(`[1]`), RunID: "run-a"}, {ValuesJSON: []byte(`[2]`), RunID: "run-b"}}, t0)
	require.NoError(t, err)

	version := func() string {
		t.Helper()
		v, err := s.SweepVersion(ctx, "swv")
		require.NoError(t, err)
		return v
	}
	seen := map[string]string{}
	step := func(what string) {
		t.Helper()
		v := version()
		assert.Equal(t, v, version(), "%s: reading twice gives the same version", what)
		for before, old := range seen {
			assert.NotEqual(t, old, v, "%s gives a version unlike %s", what, before)
		}
		seen[what] = v
	}
	step("created")
	require.NoError(t, s.StartRun(ctx, "run-b", t0))
	step("point 1 running")
	require.NoError(t, s.EndRun(ctx, "run-b", store.StatusFailed, "boom", t0))
	step("point 1 failed")
	require.NoError(t, s.AddSweepPoints(ctx, "swv", 2, []store.SweepPoint{{ValuesJSON: []byte(`[3]`), RunID: "run-c"}}))
	step("point 2 submitted")
	require.NoError(t, s.CancelSweep(ctx, "swv"))
	step("cancelled")

	_, err = s.SweepVersion(ctx, "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
