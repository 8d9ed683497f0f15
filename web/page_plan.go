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
	p, err := s.planFormPage(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.PlanNewView(p))
}

// handleCreatePlan is POST /plans (the plan form): 303 to the plan, or the plan form again
// (400) with every problem beside its field, and the goals its scenario allows.
func (s *Server) handleCreatePlan(w http.ResponseWriter, r *http.Request) error {
	v, err := postedForm(r)
	if err != nil {
		return err
	}
	f := form.PlanFromValues(v)
	done, errs, err := submitJob(w, r, "plan", f, s.runs.CreatePlan)
	if done || err != nil {
		return err
	}
	p, _ := s.planFormPage(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: r.URL.Path}})
	p.Notice, p.HasAutoscaler, p.HasSLO = "", false, false
	f.Fill(&p, errs)
	sc, _ := sim.Parse([]byte(p.Scenario), sim.ParseEnv{Traces: s.store})
	planFormByGoal(&p, sc)
	return s.render(w, r, http.StatusBadRequest, templates.PlanNewView(p))
}

// handlePlan is GET /plans/{id}.
func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.runs.Plan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	switch plan.Goal.Kind() {
	case whatif.KindTune:
		return s.handleTunePlan(w, r, plan)
	case whatif.KindDrain, whatif.KindCapacity, whatif.KindDiagnose:
	}
	p := templates.PlanPage{Page: s.pageOwnedBy(r.Context(), "Plan: "+plan.Name, "plans", store.OwnedPlan, plan.ID), ID: plan.ID, Name: plan.Name, Status: plan.Status,
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
			Latest:     format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineLatestRemovalMS), "ms"),
			TTFTP99:    format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineTTFTP99MS), "ms"),
			Killed:     format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineRequestsKilled), ""),
			WorkerSecs: format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineWorkerSeconds), ""),
			Violations: strings.Join(c.Violations, "; ")})
	}
	if p.Final && len(plan.Candidates) > 0 {
		p.Page.Charts = true
		p.Scatter = charts.PlanScatter(plan.Candidates)
	}
	if p.Final && plan.Recommended == nil && p.Reason != "" && plan.Goal.Kind() == whatif.KindDrain {
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
		Columns: []templates.Column{{Label: "At (from the start)", Num: true}, {Label: "Drains"}, {Label: "Grace", Num: true}}}
	for _, a := range acts {
		who := format.IDs(a.Workers)
		if len(a.Workers) == 0 {
			who = fmt.Sprintf("%d by %s", a.Count, a.Select)
		}
		grace := "none"
		if a.GraceMS != nil {
			grace = format.Duration(*a.GraceMS)
		}
		t.Rows = append(t.Rows, []string{format.Clock{}.At(a.AtMS), who, grace})
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
