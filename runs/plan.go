package runs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// planRequestDoc is what a plan stores as its request: the planner's request as given (before
// defaults, so the defaults of a later version apply when it is resumed), and for a tune plan
// whose scenario came from a manifest, the user's object (hpa.Origin as JSON) that the plan's
// manifest download writes back into. The origin is part of the request, so of the plan's id:
// the same settings imported from two manifests are two plans with two downloads (their runs
// are shared).
type planRequestDoc struct {
	whatif.Request
	Origin json.RawMessage `json:"origin,omitempty"`
}

// decodePlanRequest reads the request a plan stored (store.Plan.RequestJSON), with its origin
// (nil when the plan's scenario did not come from a manifest).
func decodePlanRequest(stored []byte) (planRequestDoc, error) {
	var req planRequestDoc
	err := json.Unmarshal(stored, &req)
	return req, err
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
	// Origin is the "origin" of POST /api/v1/hpa/import when the scenario came from a manifest
	// (the form carries it in a hidden field): the tune plan's manifest download then writes
	// into that object.
	Origin json.RawMessage `json:"origin,omitempty"`
}

// PlanView is a plan as its page and GET /api/v1/plans/{id} show it.
type PlanView struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Status      string             `json:"status"`
	Error       string             `json:"error,omitempty"`
	URL         string             `json:"url"`
	Goal        whatif.Goal        `json:"goal"`
	Constraints whatif.Constraints `json:"constraints"`
	Search      whatif.Search      `json:"search"`
	// Origin is the imported object a tune plan's manifest download writes into (none when
	// its scenario did not come from a manifest).
	Origin      *hpa.Origin            `json:"origin,omitempty"`
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
	// Diagnose is a diagnose plan's answer: the fleets side by side and the lags' shares
	// (goal.diagnose).
	Diagnose *whatif.DiagnoseResult `json:"diagnose,omitempty"`
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

// CreatePlan checks a plan request whole (the name, the base scenario, the goal, limits,
// search and the imported object) and stores and starts the plan. A request that does not validate gives a
// *RequestError, or the scenario's *sim.ValidationError. The same plan asked for again is the
// stored one (started again if it did not finish).
func (s *Service) CreatePlan(ctx context.Context, req PlanRequest) (Created, error) {
	checked, err := s.check.Plan(req)
	if err != nil {
		return Created{}, err
	}
	plan, created, err := s.store.CreatePlan(ctx, checked.Plan, s.now())
	if err != nil {
		return Created{}, err
	}
	if created || plan.Status == store.StatusQueued || plan.Status == store.StatusRunning {
		s.startPlan(plan.ID)
	}
	return Created{ID: plan.ID, Status: plan.Status, Done: plan.Status == store.StatusDone}, nil
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
	return PlanViewOf(plan, points)
}

// PlanViewOf is the view of a stored plan with the runs it submitted. A fake of the service
// (web's tests) shows its plans through it too.
func PlanViewOf(plan store.Plan, points []store.PlanPoint) (PlanView, error) {
	id := plan.ID
	out := PlanView{ID: plan.ID, Name: plan.Name, Status: plan.Status, Error: plan.Error, URL: "/plans/" + plan.ID,
		Candidates: []whatif.Candidate{}, Submitted: make([]PlanRun, len(points))}
	req, err := decodePlanRequest(plan.RequestJSON)
	if err != nil {
		return PlanView{}, fmt.Errorf("plan %s: stored request: %w", id, err)
	}
	out.Goal, out.Constraints, out.Search = req.Goal, req.Constraints, req.Search
	if len(req.Origin) > 0 {
		out.Origin = new(hpa.Origin)
		if err := json.Unmarshal(req.Origin, out.Origin); err != nil {
			return PlanView{}, fmt.Errorf("plan %s: stored origin: %w", id, err)
		}
	}
	if len(plan.ResultJSON) > 0 {
		var res whatif.Result
		if err := json.Unmarshal(plan.ResultJSON, &res); err != nil {
			return PlanView{}, fmt.Errorf("plan %s: stored result: %w", id, err)
		}
		out.Candidates, out.Recommended, out.Reason = res.Candidates, res.Recommended, res.Reason
		out.Runs, out.Reused, out.Notes, out.Baseline = res.Runs, res.Reused, res.Notes, res.Baseline
		out.Baselines, out.Capacity, out.Diagnose = res.Baselines, res.Capacity, res.Diagnose
	}
	for i, p := range points {
		out.Submitted[i] = PlanRun{Label: p.Label, RunID: p.RunID, Status: p.Status}
	}
	return out, nil
}
