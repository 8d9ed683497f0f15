package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// planRequest is the body of POST /api/v1/plans.
type planRequest struct {
	Name        string             `json:"name"`
	Scenario    json.RawMessage    `json:"scenario"`
	Goal        whatif.Goal        `json:"goal"`
	Constraints whatif.Constraints `json:"constraints"`
	Search      whatif.Search      `json:"search"`
}

// apiPlan is a plan as GET /api/v1/plans/{id} shows it.
type apiPlan struct {
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
	Submitted []apiPlanRun `json:"submitted"`
	// CreatedBy is who created the plan, on a server with users (auth.go).
	CreatedBy string `json:"created_by,omitempty"`
}

type apiPlanRun struct {
	Label  string `json:"label"`
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// createPlan validates a plan request's scenario and hands it to the run service, which stores
// and starts the plan; created is false when the same plan already exists (and is not being
// retried).
func (s *Server) createPlan(ctx context.Context, req planRequest) (store.Plan, bool, error) {
	if len(bytes.TrimSpace(req.Scenario)) == 0 {
		return store.Plan{}, false, runs.InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: "required: the scenario to plan on, as in POST /api/v1/runs (its scale_in is replaced)"}}})
	}
	name := strings.TrimSpace(req.Name)
	if msg := sim.NameProblem(name); msg != "" { // the scenario name rules (issue 19 L1)
		return store.Plan{}, false, runs.InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	base, err := s.readScenario(req.Scenario)
	if err != nil {
		return store.Plan{}, false, err
	}
	return s.runs.CreatePlan(ctx, name, base, whatif.Request{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search})
}

// apiCreatePlan is POST /api/v1/plans: 202 while the plan runs, 200 when it is already done.
func (s *Server) apiCreatePlan(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var req planRequest
	if err := decodeStrict(body, &req, `{"name"?: "…", "scenario": {…}, "goal": {"remove": 4, "start_ms": 480000}, "constraints"?: {"ttft_p99_ms": 8000, "max_killed": 0}, "search"?: {…}}`); err != nil {
		return err
	}
	plan, _, err := s.createPlan(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if plan.Status == store.StatusDone {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"id": plan.ID, "url": "/plans/" + plan.ID, "status": plan.Status})
	return nil
}

// loadPlan reads a plan as the API shows it.
func (s *Server) loadPlan(ctx context.Context, id string) (apiPlan, error) {
	plan, points, err := s.store.GetPlan(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apiPlan{}, &runs.NotFoundError{Kind: "plan"}
		}
		return apiPlan{}, err
	}
	out := apiPlan{ID: plan.ID, Name: plan.Name, Status: plan.Status, Error: plan.Error, URL: "/plans/" + plan.ID,
		Candidates: []whatif.Candidate{}, Submitted: make([]apiPlanRun, len(points))}
	req, err := runs.DecodePlanRequest(plan.RequestJSON)
	if err != nil {
		return apiPlan{}, fmt.Errorf("plan %s: stored request: %w", id, err)
	}
	out.Goal, out.Constraints, out.Search = req.Goal, req.Constraints, req.Search
	if len(plan.ResultJSON) > 0 {
		var res whatif.Result
		if err := json.Unmarshal(plan.ResultJSON, &res); err != nil {
			return apiPlan{}, fmt.Errorf("plan %s: stored result: %w", id, err)
		}
		out.Candidates, out.Recommended, out.Reason = res.Candidates, res.Recommended, res.Reason
		out.Runs, out.Reused, out.Notes, out.Baseline = res.Runs, res.Reused, res.Notes, res.Baseline
		out.Baselines, out.Capacity = res.Baselines, res.Capacity
	}
	for i, p := range points {
		out.Submitted[i] = apiPlanRun{Label: p.Label, RunID: p.RunID, Status: p.Status}
	}
	return out, nil
}

// apiGetPlan is GET /api/v1/plans/{id}.
func (s *Server) apiGetPlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.loadPlan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	plan.CreatedBy = s.createdBy(r.Context(), store.OwnedPlan, plan.ID)
	writeJSON(w, http.StatusOK, plan)
	return nil
}

// apiCancelPlan is POST /api/v1/plans/{id}/cancel.
func (s *Server) apiCancelPlan(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.runs.CancelPlan(r.Context(), id); err != nil {
		return err
	}
	plan, err := s.loadPlan(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}
