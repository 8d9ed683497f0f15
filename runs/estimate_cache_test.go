package runs

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// A scenario's memory estimate is computed once and remembered by id; another scenario gets
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
	_, ok := c.estimates.Get(a.ID())
	assert.True(t, ok)
}
