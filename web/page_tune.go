package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/format"
)

// handleTunePlan renders a tune plan's page (handlePlan sends tune plans here).
func (s *Server) handleTunePlan(w http.ResponseWriter, r *http.Request, plan runs.PlanView) error {
	price, priceField, priceProblem := s.pagePrice(r)
	suffix := priceSuffix(r)
	p := templates.TunePlanPage{Page: s.pageOwnedBy(r.Context(), "Tune plan: "+plan.Name, "plans", store.OwnedPlan, plan.ID), ID: plan.ID, Name: plan.Name,
		Status: plan.Status, Error: plan.Error, Final: runs.IsFinal(plan.Status), APIURL: "/api/v1/plans/" + plan.ID,
		Reason: plan.Reason, Notes: plan.Notes, Runs: plan.Runs, Reused: plan.Reused,
		Price: priceField, PriceError: priceProblem, PriceSuffix: suffix,
		PriceNote: "at " + format.Number(price) + " per GPU-hour (the price field, kept in the page's address)"}
	p.Constraints = tuneLimits(plan.Constraints)
	if !p.Final {
		p.Page.RefreshSeconds = 3
	}
	for _, sub := range plan.Submitted {
		p.Submitted = append(p.Submitted, templates.RunLink{ID: sub.RunID, Name: sub.Label, Status: sub.Status})
	}
	var fixed, yours *whatif.Candidate
	if len(plan.Baselines) == 2 {
		fixed, yours = &plan.Baselines[0], &plan.Baselines[1]
		p.YoursID = yours.RunID
		p.Baseline = "a " + fixed.Label
	}
	for _, b := range plan.Baselines {
		p.Baselines = append(p.Baselines, tuneRow(plan.ID, b, price, false))
	}
	for _, c := range plan.Candidates {
		p.Candidates = append(p.Candidates, tuneRow(plan.ID, c, price, true))
	}
	var best *whatif.Candidate
	if rec := plan.Recommended; rec != nil && len(plan.Candidates) > 0 {
		best = &plan.Candidates[0]
		p.Recommendation, p.RecommendedID = rec.Reason, rec.RunID
		p.HPAURL = "/plans/" + plan.ID + "/hpa.yaml"
		p.HasOrigin = plan.Origin != nil
		if yours != nil && yours.Autoscaler != nil {
			p.Settings, p.SettingsApart = settingsTable(*best, *yours)
		}
		if fixed != nil {
			p.Savings = savingsTable(*best, *fixed, yours, price)
		}
	}
	if p.Final && len(plan.Candidates) > 0 {
		p.Page.Charts = true
		recommended := ""
		if plan.Recommended != nil {
			recommended = plan.Recommended.ScenarioID
		}
		p.Scatter = charts.TuneScatter(plan.Candidates, plan.Baselines, plan.Constraints, recommended)
		p.FleetChart = charts.TuneFleet(s.fleetSeries(r.Context(), best), s.fleetSeries(r.Context(), yours), s.fleetSeries(r.Context(), fixed))
		// A night from a Prometheus load reads in its clock time.
		if stored, _, err := s.store.GetPlan(r.Context(), plan.ID); err == nil {
			if sc, err := scenarioOf(stored.ScenarioJSON); err == nil {
				fleet := []templates.Chart{p.FleetChart}
				onClock(fleet, format.ClockAt(sc.StartTime()))
				p.FleetChart = fleet[0]
			}
		}
	}
	if p.Final && plan.Recommended == nil && p.Reason != "" {
		p.Relax = relaxLink(plan, s.runs.MaxPlanRuns())
	}
	return s.render(w, r, http.StatusOK, templates.TunePlanView(p))
}

// tuneLimits writes the constraints: "TTFT p99 ≤ 3 s, at most 0 killed".
func tuneLimits(c whatif.Constraints) string {
	var limits []string
	if t := c.TTFTP99MS; t != nil {
		limits = append(limits, "TTFT p99 ≤ "+whatif.FormatMS(*t))
	}
	if t := c.E2EP99MS; t != nil {
		limits = append(limits, "end-to-end p99 ≤ "+whatif.FormatMS(*t))
	}
	if k := c.MaxKilled; k != nil {
		limits = append(limits, fmt.Sprintf("at most %d killed", *k))
	}
	return strings.Join(limits, ", ")
}

func tuneRow(planID string, c whatif.Candidate, price float64, ranked bool) templates.TuneRow {
	row := templates.TuneRow{Label: c.Label, Stage: c.Stage, RunID: c.RunID, Status: c.Status, Feasible: c.Feasible,
		Pareto: c.Pareto, TTFTP99: format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineTTFTP99MS), "ms"),
		Killed: format.ReadableOpt(sim.FigureValue(c.Headline, sim.HeadlineRequestsKilled), ""), Violations: strings.Join(c.Violations, "; "),
		GPUHours: format.Dash, Cost: format.Dash, SavedVsFixed: format.Dash, Migrated: format.Dash, Changes: format.Dash}
	if ranked {
		row.Rank = c.Rank
	}
	if f := c.Fleet; f != nil {
		row.GPUHours = format.GPUHours(f.GPUHours)
		row.Cost = format.Money(f.GPUHours * price)
		row.Migrated = format.Number(float64(f.Migrated))
		row.Changes = format.Number(float64(f.FleetChanges))
		if v := f.SavedVsFixedPct; v != nil {
			row.SavedVsFixed = format.Number(roundTo(*v, 1)) + " %"
		}
	}
	if c.Autoscaler != nil && c.Status == store.StatusDone {
		row.HPAURL = "/plans/" + planID + "/hpa.yaml?run=" + c.RunID
	}
	return row
}

func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// settingsTable sets the recommended settings beside the scenario's, changed ones marked: apply
// holds what the manifests carry (the HPA, the workloads' grace and migration limit), apart
// what an HPA cannot carry (which pods go first).
func settingsTable(best, yours whatif.Candidate) (apply, apart templates.DataTable) {
	apply = templates.DataTable{Caption: "Apply these: the recommended settings and yours (the HPA YAML download carries them)",
		Columns: []templates.Column{{Label: "Setting"}, {Label: "Recommended"}, {Label: "Yours"}}}
	apart = templates.DataTable{Caption: "Not in the manifests: an HPA cannot say which pods go first (Kubernetes chooses them; controller.kubernetes.io/pod-deletion-cost can steer it)",
		Columns: []templates.Column{{Label: "Setting"}, {Label: "Simulated"}, {Label: "Yours"}}}
	a, b := best.Autoscaler, yours.Autoscaler
	grace := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return whatif.FormatMS(*v)
	}
	rows := [][3]string{
		{"autoscaler.target", format.Number(a.Target), format.Number(b.Target)},
		{"scale-down window", whatif.FormatMS(a.ScaleDownWindow()), whatif.FormatMS(b.ScaleDownWindow())},
		{"scale-down policy", scaleDownRule(a), scaleDownRule(b)},
		{"autoscaler.grace_ms", grace(a.GraceMS), grace(b.GraceMS)},
		{"router.migration_limit", format.Number(float64(*best.MigrationLimit)), format.Number(float64(*yours.MigrationLimit))},
	}
	row := func(r [3]string) []string {
		name := r[0]
		if r[1] != r[2] {
			name += " (changed)"
		}
		return []string{name, r[1], r[2]}
	}
	for _, r := range rows {
		apply.Rows = append(apply.Rows, row(r))
	}
	apart.Rows = append(apart.Rows, row([3]string{"autoscaler.select (which pods go first)", a.Select, b.Select}))
	return apply, apart
}

// scaleDownRule describes what an autoscaler lets go at a time: its scale-down policies as pods or
// percent per period ("at most 10 % of the workers removed per 1 min"), or, without policies, the
// workers removed per decision.
func scaleDownRule(a *sim.Autoscaler) string {
	ps := a.ScaleDownPolicies()
	if ps == nil {
		if n := a.ScaleDownStep(); n != nil {
			return "at most " + whatif.Workers(*n) + " removed per decision"
		}
		return "no limit"
	}
	phrase := whatif.PolicyPhrase(ps)
	if r := a.Behavior.ScaleDown; r != nil {
		switch r.Select {
		case sim.SelectPolicyMin:
			phrase = strings.Replace(phrase, "(the larger)", "(the smaller)", 1)
		case sim.SelectPolicyDisabled:
			return "none: scale-down disabled (selectPolicy Disabled)"
		}
	}
	return phrase
}

// savingsTable is what the recommendation saves against the fixed fleet and your settings, in
// GPU-hours and money, per run and per day of the modelled load.
func savingsTable(best, fixed whatif.Candidate, yours *whatif.Candidate, price float64) templates.DataTable {
	t := templates.DataTable{Caption: "Saved by the recommended settings",
		Columns: []templates.Column{{Label: "Against"}, {Label: "GPU-hours saved", Num: true}, {Label: "Money saved a run", Num: true}, {Label: "Money saved a day of this load", Num: true}}}
	if best.Fleet == nil {
		return t
	}
	duration := sim.FigureValue(best.Headline, sim.HeadlineDurationMS)
	add := func(name string, b *whatif.Candidate) {
		if b == nil || b.Fleet == nil {
			return
		}
		saved := b.Fleet.GPUHours - best.Fleet.GPUHours
		day := format.Dash
		if duration != nil {
			if v, ok := perDay(saved*price, *duration); ok {
				day = format.Money(v)
			}
		}
		t.Rows = append(t.Rows, []string{name, format.GPUHours(saved), format.Money(saved * price), day})
	}
	add(fixed.Label, &fixed)
	if yours != nil && yours.ScenarioID != best.ScenarioID {
		add("your settings", yours)
	}
	return t
}

// handlePlanHPA is GET /plans/{id}/hpa.yaml: the recommended settings (or ?run= a candidate's)
// as Kubernetes manifests.
func (s *Server) handlePlanHPA(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.runs.Plan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if plan.Goal.Kind() != whatif.KindTune {
		return notFound("this plan drains workers; only a tune plan (goal.tune) has autoscaler settings to export")
	}
	var pick *whatif.Candidate
	want := r.URL.Query().Get("run")
	for i, c := range plan.Candidates {
		if (want == "" && plan.Recommended != nil && c.ScenarioID == plan.Recommended.ScenarioID) || (want != "" && c.RunID == want) {
			pick = &plan.Candidates[i]
			break
		}
	}
	if pick == nil {
		if want == "" {
			return notFound("this plan recommends no settings (" + plan.Reason + "); pick a candidate with ?run=RUN_ID")
		}
		return notFound("no candidate of this plan has run " + want + "; take an id from the plan's table")
	}
	out, err := hpa.Export(hpa.Settings{Autoscaler: *pick.Autoscaler, MigrationLimit: *pick.MigrationLimit, Origin: plan.Origin,
		Source: fmt.Sprintf("plan %s (%s), candidate %q, run %s", plan.ID, plan.Name, pick.Label, pick.RunID)})
	if err != nil {
		return err
	}
	ext, ctype := "yaml", "application/yaml; charset=utf-8"
	if o := plan.Origin; o != nil && isJSONText(o.Manifest) {
		ext, ctype = "json", "application/json" // the user's JSON file stays JSON
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="hpa-%s-%s.%s"`, plan.ID, pick.RunID, ext))
	_, err = w.Write(out)
	return err
}

// fleetSeries reads a finished run's time series from its stored summary (nil when there is
// none; the chart then leaves that line out and says so in its table).
func (s *Server) fleetSeries(ctx context.Context, c *whatif.Candidate) *sim.Timeseries {
	if c == nil || c.RunID == "" || c.Status != store.StatusDone {
		return nil
	}
	return s.runTimeseries(ctx, c.RunID)
}

// runTimeseries reads a run's time series from its stored summary (nil, logged, when it
// cannot: a chart then draws without that line).
func (s *Server) runTimeseries(ctx context.Context, id string) *sim.Timeseries {
	run, err := s.store.GetRun(ctx, id)
	if err == nil && run.Status != store.StatusDone {
		return nil
	}
	if err == nil {
		var sum *runs.StoredSummary
		if sum, err = s.runs.LoadSummary(ctx, run); err == nil {
			return &sum.Timeseries
		}
	}
	s.log.Warn("a chart could not read a run's time series", "run", id, "err", err)
	return nil
}
