package web

import (
	"context"

	"github.com/scalein-planner/scalein/runs"
)

// createSweep is how the sweep page and the API create a sweep: the user's sweep-point quota
// (quota.go), then the run service. The quota needs only the axes, and comes before any
// memory estimate (issue 19 M8), as the rate limit (routes.go) does.
func (s *Server) createSweep(ctx context.Context, req runs.SweepRequest) (runs.Created, error) {
	if err := s.checkSweepQuota(ctx, runs.AxesPoints(req.Axes)); err != nil {
		return runs.Created{}, err
	}
	return s.runs.CreateSweep(ctx, req)
}
