package web

import (
	"context"
	"fmt"
	"strings"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/format"
)

// planSLOSections fills the plan page's sections of a capacity plan (the answer and its curve)
// and of a diagnose plan (the fleets side by side, the lags' Shapley shares, the 8 runs), and
// the goal line of both. Other plans are left as they are.
func planSLOSections(p *templates.PlanPage, plan runs.PlanView) {
	switch plan.Goal.Kind() {
	case whatif.KindDiagnose:
		p.Goal = "how far the autoscaler is from an ideal fleet, and what each lag costs"
	case whatif.KindCapacity:
		p.Goal = "one worker's capacity at the SLO"
	case whatif.KindDrain, whatif.KindTune:
		return
	}
	if c := plan.Capacity; c != nil {
		p.Capacity = &templates.CapacitySection{Answer: c.Answer, Curve: charts.CapacityCurve(c)}
		p.Page.Charts = true
	}
	if d := plan.Diagnose; d != nil {
		p.Diagnose = diagnoseSection(d)
		p.Page.Charts = true
	}
	if p.Capacity != nil || p.Diagnose != nil {
		p.Reason = "" // the sections say it
	}
}

func diagnoseSection(d *whatif.DiagnoseResult) *templates.DiagnoseSection {
	s := &templates.DiagnoseSection{Comparison: d.Comparison, Answer: d.Answer, Shares: charts.LagShares(d),
		IdealNote: fmt.Sprintf("The ideal fleet is an ordinary simulated run of the same night: an autoscaler on the offered request rate λ(t), known from the workload (the metric offered_rate, an External metric), with target μ = %s requests/s per worker, tolerance 0 and every lag removed (a decision every second at most, no metric delay, window, rate limit or cold start). It keeps max(min_workers, ceil(λ/μ)) workers and changes only when λ does.",
			format.Number(d.IdealTarget)),
		Fleets: templates.DataTable{Caption: "The same night under four fleets", Columns: []templates.Column{
			{Label: "Fleet"}, {Label: "Met the SLO", Num: true}, {Label: "Average replicas", Num: true}, {Label: "GPU-hours", Num: true}, {Label: "Run", RunLink: true}}},
		Subsets: templates.DataTable{Caption: "The 8 runs: the scenario with each set of lags removed", Columns: []templates.Column{
			{Label: "Lags removed"}, {Label: "Met the SLO", Num: true}, {Label: "Average replicas", Num: true}, {Label: "GPU-hours", Num: true}, {Label: "Run", RunLink: true}}}}
	row := func(label string, f whatif.FleetOutcome) []string {
		if f.Status != whatif.StatusDone {
			return []string{label, f.Status, "", "", f.RunID}
		}
		att := "—"
		if f.Attainment != nil {
			att = whatif.FormatShare(roundTo(*f.Attainment, 4))
		}
		return []string{label, att, format.WithUnit(roundPtr(f.AverageReplicas, 2), ""), format.WithUnit(roundPtr(f.GPUHours, 3), ""), f.RunID}
	}
	for _, f := range d.Fleets {
		s.Fleets.Rows = append(s.Fleets.Rows, row(f.Label, f))
	}
	for _, sub := range d.Subsets {
		names := make([]string, 0, len(sub.Removed))
		for _, l := range sub.Removed {
			names = append(names, whatif.LagLabel(l))
		}
		label := strings.Join(names, ", ")
		if label == "" {
			label = "none (the scenario)"
		}
		s.Subsets.Rows = append(s.Subsets.Rows, row(label, sub.FleetOutcome))
	}
	if b := d.Bound; b != nil {
		s.Bound = fmt.Sprintf("From the load alone, max(min_workers, ceil(λ/μ)) over the %d rate stages averages %s replicas (%s GPU-hours): a bound computed from the stages' rates, not a run.",
			len(b.Stages), format.Number(roundTo(b.AverageReplicas, 2)), format.Number(roundTo(b.GPUHours, 3)))
	}
	return s
}

func roundPtr(v *float64, decimals int) *float64 {
	if v == nil {
		return nil
	}
	r := roundTo(*v, decimals)
	return &r
}

// diagnoseFleetChart draws the diagnose plan's fleets over time from their runs' stored time
// series: the scenario's autoscaler, the ideal fleet and the static fleet.
func (s *Server) diagnoseFleetChart(ctx context.Context, d *whatif.DiagnoseResult) templates.Chart {
	series := map[string]*sim.Timeseries{}
	for _, f := range d.Fleets {
		if f.Kind == whatif.FleetNoLag {
			continue
		}
		series[f.Kind] = s.fleetSeries(ctx, &whatif.Candidate{RunID: f.RunID, Status: f.Status})
	}
	return charts.DiagnoseFleet(series[whatif.FleetScenario], series[whatif.FleetIdeal], series[whatif.FleetStatic])
}
