package runs

import (
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// A scenario's memory estimate is computed once and remembered by simulation key; another scenario gets
// its own.
func TestEstimateCacheRemembersByScenario(t *testing.T) {
	data, err := os.ReadFile("../sim/whatif/testdata/four-workers.json")
	require.NoError(t, err)
	a, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	big := *a
	big.Fleet.Workers *= 100
	c := newEstimateCache()
	assert.Equal(t, sim.EstimateMemory(a), c.estimate(a))
	assert.Equal(t, sim.EstimateMemory(&big), c.estimate(&big))
	assert.Greater(t, c.estimate(&big).Bytes, c.estimate(a).Bytes)
	assert.Equal(t, 2, c.estimates.Len())
	_, ok := c.estimates.Get(a.SimulationKey())
	assert.True(t, ok)
}

// Issue 19 M8: concurrent requests for one scenario share one estimate, and a scenario that
// differs only in its name (a sweep point's suffix) is not estimated again.
func TestEstimateCacheSharesConcurrentAndRenamed(t *testing.T) {
	data, err := os.ReadFile("../sim/whatif/testdata/four-workers.json")
	require.NoError(t, err)
	a, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	c := newEstimateCache()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { assert.Equal(t, sim.EstimateMemory(a), c.estimate(a)) })
	}
	wg.Wait()
	assert.EqualValues(t, 1, c.computed.Load(), "20 concurrent asks, one computation")
	renamed := *a
	renamed.Name = a.Name + " — kvcr.latency_ms=1"
	require.NotEqual(t, a.ID(), renamed.ID())
	assert.Equal(t, c.estimate(a), c.estimate(&renamed))
	assert.EqualValues(t, 1, c.computed.Load(), "the name does not change the estimate")
}
