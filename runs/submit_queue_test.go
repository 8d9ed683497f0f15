package runs

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
)

// TestSubmitRefusesFullQueueBeforeEstimating is issue 19 M8: a direct submission to a full queue
// gets ErrQueueFull before any memory estimate is computed (a burst past the bound spent seconds
// of CPU estimating scenarios it then refused), while resubmitting a stored scenario, which
// needs no room, still succeeds.
func TestSubmitRefusesFullQueueBeforeEstimating(t *testing.T) {
	s := newTestService(t, Config{QueueSize: 1}, false)
	ctx := context.Background()
	first := mustParse(t, runtest.Scenario("first"))
	_, err := s.Submit(ctx, first)
	require.NoError(t, err)
	before := s.estimates.computed.Load()
	require.EqualValues(t, 1, before, "the first submission is estimated once")

	// Another simulation (not only another name, which shares the estimate): queue full.
	other := mustParse(t, strings.Replace(runtest.Scenario("other"), `"output_tokens": 3`, `"output_tokens": 5`, 1))
	require.NotEqual(t, first.SimulationKey(), other.SimulationKey())
	_, err = s.Submit(ctx, other)
	require.ErrorIs(t, err, ErrQueueFull)
	assert.Equal(t, before, s.estimates.computed.Load(), "a refused submission must not be estimated")
	require.ErrorIs(t, s.QueueRoom(ctx, other), ErrQueueFull)
	assert.Equal(t, before, s.estimates.computed.Load(), "QueueRoom computes no estimate")

	// The stored scenario reuses its run: it needs no room, so the full queue does not refuse it.
	require.NoError(t, s.QueueRoom(ctx, first))
	subs, err := s.Submit(ctx, first)
	require.NoError(t, err)
	assert.False(t, subs[0].Created)
	assert.Equal(t, first.ID(), subs[0].Run.ID)
	// A pair of the stored scenario and a new one needs one slot: refused, unestimated.
	_, err = s.Submit(ctx, first, other)
	require.ErrorIs(t, err, ErrQueueFull)
	assert.Equal(t, before, s.estimates.computed.Load())
}
