package runs

import (
	"sync"

	"github.com/scalein-planner/scalein/sim"
)

// Stats is what this process has simulated since it started, and the memory its grants hold:
// the counters GET /metrics exports (web/metrics.go).
type Stats struct {
	// Simulations, SimSeconds and SimEvents count the simulations this process ran (reused
	// reports are not simulations): how many, their wall-clock seconds and their events.
	Simulations int64
	SimSeconds  float64
	SimEvents   int64
	// MemoryGranted is what the memory budget's grants hold now (runs, uploads, large bodies);
	// MemoryBudget is the budget (-max-total-memory).
	MemoryGranted, MemoryBudget int64
}

// simStats accumulates the simulations' figures.
type simStats struct {
	mu          sync.Mutex
	simulations int64
	seconds     float64
	events      int64
}

func (st *simStats) simulated(s *sim.SimStats) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.simulations++
	st.seconds += s.WallMS / 1000
	st.events += s.Events
}

// Stats reads the service's counters.
func (s *Service) Stats() Stats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	return Stats{Simulations: s.stats.simulations, SimSeconds: s.stats.seconds, SimEvents: s.stats.events,
		MemoryGranted: s.budget.granted.Load(), MemoryBudget: s.budget.total}
}
