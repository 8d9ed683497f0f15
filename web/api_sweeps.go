package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// apiCreateSweep is POST /api/v1/sweeps: 202 with {"id", "url", "points"}, 200 when every point
// was already done, 400 with paths like axes[0].path for a bad request.
func (s *Server) apiCreateSweep(w http.ResponseWriter, r *http.Request) error {
	return createJob(`{"name"?: "…", "scenario": {…}, "axes": [{"path": "kvcr.bandwidth_gbps", "values": [5, 10]}]}`,
		s.createSweep, func(c runs.Created) map[string]any {
			return map[string]any{"id": c.ID, "url": "/sweeps/" + c.ID, "points": c.Points}
		})(w, r)
}

// apiGetSweep is GET /api/v1/sweeps/{id}.
func (s *Server) apiGetSweep(w http.ResponseWriter, r *http.Request) error {
	sw, err := s.runs.Sweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	sw.CreatedBy = s.createdBy(r.Context(), store.OwnedSweep, sw.ID)
	writeJSON(w, http.StatusOK, sw)
	return nil
}

// apiCancelSweep is POST /api/v1/sweeps/{id}/cancel.
func (s *Server) apiCancelSweep(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.runs.CancelSweep(r.Context(), id); err != nil {
		return err
	}
	sw, err := s.runs.Sweep(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sw)
	return nil
}
