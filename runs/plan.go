package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// planRequestDoc is what a plan stores as its request: the planner's request as given (before
// defaults, so the defaults of a later version apply when it is resumed) and its name.
type planRequestDoc struct {
	whatif.Request
}

// DecodePlanRequest reads the request a plan stored (store.Plan.RequestJSON).
func DecodePlanRequest(stored []byte) (whatif.Request, error) {
	var req planRequestDoc
	err := json.Unmarshal(stored, &req)
	return req.Request, err
}

// MaxPlanRuns is the most runs a plan may ask for on this service (-max-plan-runs).
func (s *Service) MaxPlanRuns() int { return s.cfg.MaxPlanRuns }

// CreatePlan validates a plan request over base and stores and starts the plan; created is
// false when the same plan already exists (and is not being retried). A request that does not
// validate gives a *RequestError.
func (s *Service) CreatePlan(ctx context.Context, name string, base *sim.Scenario, wreq whatif.Request) (store.Plan, bool, error) {
	if wreq.Search.MaxRuns > s.cfg.MaxPlanRuns {
		return store.Plan{}, false, InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "search.max_runs",
			Message: fmt.Sprintf("must be at most %d on this server (-max-plan-runs) (got %d)", s.cfg.MaxPlanRuns, wreq.Search.MaxRuns)}}})
	}
	if wreq.Search.MaxRuns == 0 && wreq.Goal.Capacity == nil { // a capacity plan has its own default
		wreq.Search.MaxRuns = s.cfg.MaxPlanRuns
	}
	norm, err := whatif.Normalize(base, wreq)
	if err != nil {
		return store.Plan{}, false, InvalidRequest("plan", err)
	}
	reqJSON, err := json.Marshal(planRequestDoc{Request: norm})
	if err != nil {
		return store.Plan{}, false, err
	}
	canonical := base.CanonicalJSON()
	id := contentID("plan", canonical, reqJSON)
	switch {
	case name != "":
	case norm.Goal.Capacity != nil:
		name = "One worker's capacity at the SLO of " + base.Name
	case norm.Goal.Tune != "":
		name = "Tune the autoscaler of " + base.Name
	default:
		name = fmt.Sprintf("Remove %s from %s", whatif.Workers(norm.Goal.Remove), base.Name)
	}
	plan, created, err := s.store.CreatePlan(ctx, store.Plan{ID: id, Name: name, ScenarioJSON: canonical, RequestJSON: reqJSON}, s.now())
	if err != nil {
		return store.Plan{}, false, err
	}
	if created || plan.Status == store.StatusQueued || plan.Status == store.StatusRunning {
		s.startPlan(id)
	}
	return plan, created, nil
}

// CancelPlan stops a queued or running plan and its unfinished runs.
func (s *Service) CancelPlan(ctx context.Context, id string) error {
	plan, points, err := s.store.GetPlan(ctx, id)
	if err != nil {
		return notFoundAs("plan", err)
	}
	if IsFinal(plan.Status) {
		return nil
	}
	s.cancelDrive(planDrive, id)
	ids := make([]string, len(points))
	for i, p := range points {
		ids[i] = p.RunID
	}
	if err := s.cancelPoints(ctx, ids, "", id); err != nil {
		return err
	}
	return s.store.SetPlanStatus(ctx, id, store.StatusCancelled, "cancelled by "+canceller(ctx), nil, s.now())
}
