package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// A diagnose plan links its scenario run to its ideal fleet's run; a later plan's link
// replaces it, and a run no plan diagnosed has none.
func TestIdealFleets(t *testing.T) {
	s := mustOpen(t)
	ctx := context.Background()
	_, err := s.IdealFleetOf(ctx, "run1")
	assert.True(t, errors.Is(err, store.ErrNotFound), "%v", err)

	require.NoError(t, s.PutIdealFleet(ctx, store.IdealFleet{RunID: "run1", IdealRunID: "ideal1", PlanID: "plan1", CreatedAt: time.UnixMilli(1000)}))
	got, err := s.IdealFleetOf(ctx, "run1")
	require.NoError(t, err)
	assert.Equal(t, store.IdealFleet{RunID: "run1", IdealRunID: "ideal1", PlanID: "plan1", CreatedAt: time.UnixMilli(1000).UTC()}, got)

	require.NoError(t, s.PutIdealFleet(ctx, store.IdealFleet{RunID: "run1", IdealRunID: "ideal2", PlanID: "plan2", CreatedAt: time.UnixMilli(2000)}))
	got, err = s.IdealFleetOf(ctx, "run1")
	require.NoError(t, err)
	assert.Equal(t, "ideal2", got.IdealRunID, "the later plan's link")
	assert.Equal(t, "plan2", got.PlanID)

	_, err = s.IdealFleetOf(ctx, "ideal2")
	assert.True(t, errors.Is(err, store.ErrNotFound), "the link goes one way")
	err = s.PutIdealFleet(ctx, store.IdealFleet{RunID: "run1", PlanID: "plan3", CreatedAt: time.UnixMilli(3000)})
	assert.True(t, errors.Is(err, store.ErrInvalid), "%v", err)
}
