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

// decodePlanRequest reads the request a plan stored (store.Plan.RequestJSON).
func decodePlanRequest(stored []byte) (whatif.Request, error) {
	var req planRequestDoc
	err := json.Unmarshal(stored, &req)
	return req.Request, err
}

// MaxPlanRuns is the most runs a plan may ask for on this service (-max-plan-runs).
func (s *Service) MaxPlanRuns() int { return s.cfg.MaxPlanRuns }

// PlanRequest is a plan as asked for: the body of POST /api/v1/plans, or what the plan form
// builds.
type PlanRequest struct {
	Name        string             `json:"name"`
	Scenario    json.RawMessage    `json:"scenario"`
	Goal        whatif.Goal        `json:"goal"`
	Constraints whatif.Constraints `json:"constraints"`
	Search      whatif.Search      `json:"search"`
}

// PlanView is a plan as its page and GET /api/v1/plans/{id} show it.
type PlanView struct {
	ID          string                 `json:"id"`
	Name        string                 `json:"name"`
	Status      string                 `json:"status"`
	Error       string                 `json:"error,omitempty"`
	URL         string                 `json:"url"`
	Goal        whatif.Goal            `json:"goal"`
	Constraints whatif.Constraints     `json:"constraints"`
	Search      whatif.Search          `json:"search"`
	Candidates  []whatif.Candidate     `json:"candidates"`
	Recommended *whatif.Recommendation `json:"recommended"`
	Reason      string                 `json:"reason,omitempty"`
	Runs        int                    `json:"runs"`
	Reused      int                    `json:"reused"`
	Notes       []string               `json:"notes,omitempty"`
	Baseline    *whatif.Candidate      `json:"baseline,omitempty"`
	// Baselines of a tune plan: the fixed fleet and the scenario's own autoscaler.
	Baselines []whatif.Candidate `json:"baselines,omitempty"`
	// Capacity is a capacity plan's answer and curve (goal.capacity).
	Capacity *whatif.CapacityResult `json:"capacity,omitempty"`
	// Submitted lists the runs submitted so far while the plan is running.
	Submitted []PlanRun `json:"submitted"`
	// CreatedBy is who created the plan, on a server with users: the web server fills it in.
	CreatedBy string `json:"created_by,omitempty"`
}

// PlanRun is one run a plan submitted.
type PlanRun struct {
	Label  string `json:"label"`
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// CreatePlan checks a plan request whole (the name, the base scenario, the goal, limits and
// search) and stores and starts the plan. A request that does not validate gives a
// *RequestError, or the scenario's *sim.ValidationError. The same plan asked for again is the
// stored one (started again if it did not finish).
func (s *Service) CreatePlan(ctx context.Context, req PlanRequest) (Created, error) {
	name, base, err := s.jobBase("plan", req.Name, req.Scenario, "required: the scenario to plan on, as in POST /api/v1/runs (its scale_in is replaced)")
	if err != nil {
		return Created{}, err
	}
	plan, _, err := s.createPlan(ctx, name, base, whatif.Request{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search})
	if err != nil {
		return Created{}, err
	}
	return Created{ID: plan.ID, Status: plan.Status, Done: plan.Status == store.StatusDone}, nil
}

// createPlan validates a plan request over base and stores and starts the plan; created is
// false when the same plan already exists (and is not being retried). A request that does not
// validate gives a *RequestError.
func (s *Service) createPlan(ctx context.Context, name string, base *sim.Scenario, wreq whatif.Request) (store.Plan, bool, error) {
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

// Plan reads a plan as its page and the API show it.
func (s *Service) Plan(ctx context.Context, id string) (PlanView, error) {
	plan, points, err := s.store.GetPlan(ctx, id)
	if err != nil {
		return PlanView{}, notFoundAs("plan", err)
	}
	out := PlanView{ID: plan.ID, Name: plan.Name, Status: plan.Status, Error: plan.Error, URL: "/plans/" + plan.ID,
		Candidates: []whatif.Candidate{}, Submitted: make([]PlanRun, len(points))}
	req, err := decodePlanRequest(plan.RequestJSON)
	if err != nil {
		return PlanView{}, fmt.Errorf("plan %s: stored request: %w", id, err)
	}
	out.Goal, out.Constraints, out.Search = req.Goal, req.Constraints, req.Search
	if len(plan.ResultJSON) > 0 {
		var res whatif.Result
		if err := json.Unmarshal(plan.ResultJSON, &res); err != nil {
			return PlanView{}, fmt.Errorf("plan %s: stored result: %w", id, err)
		}
		out.Candidates, out.Recommended, out.Reason = res.Candidates, res.Recommended, res.Reason
		out.Runs, out.Reused, out.Notes, out.Baseline = res.Runs, res.Reused, res.Notes, res.Baseline
		out.Baselines, out.Capacity = res.Baselines, res.Capacity
	}
	for i, p := range points {
		out.Submitted[i] = PlanRun{Label: p.Label, RunID: p.RunID, Status: p.Status}
	}
	return out, nil
}
