package runs

import (
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/scalein-planner/scalein/sim"
)

// estimateEntries bounds the memory estimates remembered (a few hundred bytes each).
const estimateEntries = 4096

// estimateCache remembers sim.EstimateMemory by scenario id. The estimate depends only on the
// scenario (the id is a hash of all of it and of the model version), so it never changes;
// computing it for a trace workload takes a key census of the trace (0.36 s for Mooncake, kept
// by sim for the next scenario on the same trace, after which an estimate takes about 2 ms), and
// the same scenario is
// estimated several times (when a request is read, when its run is submitted, when a worker
// prepares it, and again for an identical request), which made a second identical 16-point
// sweep take seconds (docs/performance.md).
//
// Concurrent requests for the same scenario share one computation (issue 19 M8: 20 identical
// 8-point sweeps at once each estimated every point), and the key leaves the name out
// (sim.Scenario.SimulationKey), which the engine and so the estimate never read.
type estimateCache struct {
	estimates *lru.Cache[string, sim.MemoryEstimate]
	flight    singleflight.Group
	computed  atomic.Int64 // estimates computed, for tests
}

func newEstimateCache() *estimateCache {
	c, err := lru.New[string, sim.MemoryEstimate](estimateEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &estimateCache{estimates: c}
}

// estimate returns the scenario's memory estimate, computed once per simulation key.
func (c *estimateCache) estimate(sc *sim.Scenario) sim.MemoryEstimate {
	key := sc.SimulationKey()
	if est, ok := c.estimates.Get(key); ok {
		return est
	}
	v, _, _ := c.flight.Do(key, func() (any, error) {
		if est, ok := c.estimates.Get(key); ok { // computed while this call waited to start
			return est, nil
		}
		c.computed.Add(1)
		est := sim.EstimateMemory(sc)
		c.estimates.Add(key, est)
		return est, nil
	})
	return v.(sim.MemoryEstimate)
}
