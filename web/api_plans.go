package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// apiCreatePlan is POST /api/v1/plans: 202 while the plan runs, 200 when it is already done.
func (s *Server) apiCreatePlan(w http.ResponseWriter, r *http.Request) error {
	return createJob(`{"name"?: "…", "scenario": {…}, "goal": {"remove": 4, "start_ms": 480000}, "constraints"?: {"ttft_p99_ms": 8000, "max_killed": 0}, "search"?: {…}}`,
		s.runs.CreatePlan, func(c runs.Created) map[string]any {
			return map[string]any{"id": c.ID, "url": "/plans/" + c.ID, "status": c.Status}
		})(w, r)
}

// apiGetPlan is GET /api/v1/plans/{id}.
func (s *Server) apiGetPlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.runs.Plan(r.Context(), chi.URLParam(r, "id"))
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
	plan, err := s.runs.Plan(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}
