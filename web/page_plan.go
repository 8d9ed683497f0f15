package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/scalein-planner/scalein/web/format"
)

// handleNewPlan is GET and POST /plans/new.
func (s *Server) handleNewPlan(w http.ResponseWriter, r *http.Request) error {
	p, err := s.whatIfFormPage(r, "plan")
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.WhatIfNewView(p))
}

// handleCreatePlan is POST /plans (the plan form).
func (s *Server) handleCreatePlan(w http.ResponseWriter, r *http.Request) error {
	return createFromForm(s, w, r, "plan", func(v url.Values) jobForm[runs.PlanRequest] { return form.PlanFromValues(v) }, s.runs.CreatePlan)
}

// handlePlan is GET /plans/{id}.
func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.runs.Plan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if plan.Goal.Tune != "" {
		return s.handleTunePlan(w, r, plan)
	}
	p := templates.PlanPage{Page: s.pageOwnedBy(r.Context(), "Plan: "+plan.Name, "runs", store.OwnedPlan, plan.ID), ID: plan.ID, Name: plan.Name, Status: plan.Status,
		Error: plan.Error, Final: runs.IsFinal(plan.Status), APIURL: "/api/v1/plans/" + plan.ID, Reason: plan.Reason,
		Notes: plan.Notes, Runs: plan.Runs, Reused: plan.Reused}
	p.Goal = fmt.Sprintf("remove %s, none before %s", whatif.Workers(plan.Goal.Remove), whatif.FormatMS(plan.Goal.StartMS))
	var limits []string
	if t := plan.Constraints.TTFTP99MS; t != nil {
		limits = append(limits, "TTFT p99 ≤ "+whatif.FormatMS(*t))
	}
	if k := plan.Constraints.MaxKilled; k != nil {
		limits = append(limits, fmt.Sprintf("at most %d killed", *k))
	}
	p.Constraints = strings.Join(limits, ", ")
	if !p.Final {
		p.Page.RefreshSeconds = 3
	}
	for _, sub := range plan.Submitted {
		p.Submitted = append(p.Submitted, templates.RunLink{ID: sub.RunID, Name: sub.Label, Status: sub.Status})
	}
	if rec := plan.Recommended; rec != nil {
		p.Recommendation, p.RecommendedID = rec.Reason, rec.RunID
		p.Schedule = scheduleTable(rec.ScaleIn)
		for _, c := range plan.Candidates {
			if c.RunID != rec.RunID && c.Status == store.StatusDone {
				p.RunnerUpID = c.RunID
				break
			}
		}
	}
	for _, c := range plan.Candidates {
		p.Candidates = append(p.Candidates, templates.PlanCandidateRow{Rank: c.Rank, Label: c.Label, RunID: c.RunID,
			Status: c.Status, Feasible: c.Feasible, Pareto: c.Pareto,
			Latest:     format.WithUnit(sim.FigureValue(c.Headline, sim.HeadlineLatestRemovalMS), "ms"),
			TTFTP99:    format.WithUnit(sim.FigureValue(c.Headline, sim.HeadlineTTFTP99MS), "ms"),
			Killed:     format.WithUnit(sim.FigureValue(c.Headline, sim.HeadlineRequestsKilled), ""),
			WorkerSecs: format.WithUnit(sim.FigureValue(c.Headline, sim.HeadlineWorkerSeconds), ""),
			Violations: strings.Join(c.Violations, "; ")})
	}
	if p.Final && len(plan.Candidates) > 0 {
		p.Page.Charts = true
		p.Scatter = charts.PlanScatter(plan.Candidates)
	}
	if p.Final && plan.Recommended == nil && p.Reason != "" && plan.Goal.Capacity == nil && plan.Goal.Diagnose == nil {
		p.Relax = relaxLink(plan, s.runs.MaxPlanRuns())
	}
	planSLOSections(&p, plan)
	if p.Diagnose != nil && p.Final {
		p.Diagnose.FleetChart = s.diagnoseFleetChart(r.Context(), plan.Diagnose)
	}
	return s.render(w, r, http.StatusOK, templates.PlanView(p))
}

// scheduleTable lists a schedule's actions.
func scheduleTable(acts []sim.ScaleInAction) templates.DataTable {
	t := templates.DataTable{Caption: "The recommended schedule",
		Columns: []templates.Column{{Label: "At (ms)", Num: true}, {Label: "Drains"}, {Label: "Grace (ms)", Num: true}}}
	for _, a := range acts {
		who := format.IDs(a.Workers)
		if len(a.Workers) == 0 {
			who = fmt.Sprintf("%d by %s", a.Count, a.Select)
		}
		grace := "none"
		if a.GraceMS != nil {
			grace = format.Number(*a.GraceMS)
		}
		t.Rows = append(t.Rows, []string{format.Number(a.AtMS), who, grace})
	}
	return t
}

// handleCancelPlan is POST /plans/{id}/cancel.
func (s *Server) handleCancelPlan(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.runs.CancelPlan(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/plans/"+id, http.StatusSeeOther)
	return nil
}
