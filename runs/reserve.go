package runs

import (
	"context"

	"github.com/scalein-planner/scalein/sim"
)

// Reserve takes bytes from the memory budget of the runs this process runs, for work a request
// does in proportion to its input (an export that simulates a run again, an upload being
// fitted: issue 19 H3, H4), and waits until they fit or ctx ends. release gives them back and
// notes a big request, so memory is handed back once the process is idle.
func (s *Service) Reserve(ctx context.Context, bytes int64) (release func(), err error) {
	grant, err := s.budget.acquire(ctx, bytes)
	if err != nil {
		return nil, err
	}
	return func() {
		grant()
		s.budget.busy()
	}, nil
}

// Estimate is the memory estimate of simulating sc, remembered by scenario id.
func (s *Service) Estimate(sc *sim.Scenario) int64 { return s.estimates.estimate(sc).Bytes }
