package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/scalein-planner/scalein/store"
)

// whatIfRoutes are the sweep and plan pages.
func (s *Server) whatIfRoutes(r chi.Router, createLimit func(http.Handler) http.Handler) {
	r.Get("/sweeps/new", s.page(s.handleNewSweep))
	r.Post("/sweeps/new", s.page(s.handleNewSweep))
	r.With(createLimit).Post("/sweeps", s.page(s.handleCreateSweep))
	r.Route("/sweeps/{id}", func(r chi.Router) {
		r.Use(s.requireID("sweep", false))
		r.Get("/", s.page(s.handleSweep))
		r.Get("/sweep.csv", s.page(s.handleSweepCSV))
		r.With(s.mayCancel(store.OwnedSweep)).Post("/cancel", s.page(s.handleCancelSweep))
	})
	r.Get("/plans/new", s.page(s.handleNewPlan))
	r.Post("/plans/new", s.page(s.handleNewPlan))
	r.With(createLimit, s.runQuota(1)).Post("/plans", s.page(s.handleCreatePlan))
	r.Post("/plans/import-hpa", s.page(s.handleImportHPA))
	r.Route("/plans/{id}", func(r chi.Router) {
		r.Use(s.requireID("plan", false))
		r.Get("/", s.page(s.handlePlan))
		r.Get("/hpa.yaml", s.page(s.handlePlanHPA))
		r.With(s.mayCancel(store.OwnedPlan)).Post("/cancel", s.page(s.handleCancelPlan))
	})
}

// whatIfAPIRoutes are the sweep and plan API under /api/v1.
func (s *Server) whatIfAPIRoutes(r chi.Router, createLimit func(http.Handler) http.Handler) {
	r.With(createLimit).Post("/sweeps", s.api(s.apiCreateSweep))
	r.With(s.requireID("sweep", true)).Get("/sweeps/{id}", s.api(s.apiGetSweep))
	r.With(s.requireID("sweep", true), s.mayCancel(store.OwnedSweep)).Post("/sweeps/{id}/cancel", s.api(s.apiCancelSweep))
	r.With(createLimit, s.runQuota(1)).Post("/plans", s.api(s.apiCreatePlan))
	r.With(s.requireID("plan", true)).Get("/plans/{id}", s.api(s.apiGetPlan))
	r.With(s.requireID("plan", true), s.mayCancel(store.OwnedPlan)).Post("/plans/{id}/cancel", s.api(s.apiCancelPlan))
	r.Post("/hpa/import", s.api(s.apiImportHPA))
	r.Post("/load/prometheus", s.api(s.apiLoadPrometheus))
}
