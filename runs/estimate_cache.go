package runs

import (
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/scalein-planner/scalein/sim"
)

// estimateEntries bounds the memory estimates remembered (a few hundred bytes each).
const estimateEntries = 4096

// estimateCache remembers sim.EstimateMemory by scenario id. The estimate depends only on the
// scenario (the id is a hash of all of it and of the model version), so it never changes;
// computing it takes tens of milliseconds for a trace workload, and the same scenario is
// estimated several times (when a request is read, when its run is submitted, when a worker
// prepares it, and again for an identical request), which made a second identical 16-point
// sweep take seconds (docs/performance.md).
type estimateCache struct {
	estimates *lru.Cache[string, sim.MemoryEstimate]
}

func newEstimateCache() *estimateCache {
	c, err := lru.New[string, sim.MemoryEstimate](estimateEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &estimateCache{estimates: c}
}

// estimate returns the scenario's memory estimate, computed once per scenario id.
func (c *estimateCache) estimate(sc *sim.Scenario) sim.MemoryEstimate {
	id := sc.ID()
	if est, ok := c.estimates.Get(id); ok {
		return est
	}
	est := sim.EstimateMemory(sc)
	c.estimates.Add(id, est)
	return est
}
