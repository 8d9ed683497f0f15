package web

import (
	"fmt"
	"math"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// comparePools is the compare page's pool columns (docs/model.md#model-5): each pool's
// worker-seconds and the handoffs of A and B side by side with the change B − A, when either
// run has prefill and decode pools; an aggregated run's cells say it has none. No rows when
// neither run has pools.
func comparePools(ra, rb *sim.Report, labelA, labelB string) templates.DataTable {
	da, db := ra.Summary.Disaggregation, rb.Summary.Disaggregation
	if da == nil && db == nil {
		return templates.DataTable{}
	}
	t := templates.DataTable{
		Caption: "Worker-seconds of each pool and the handoffs from prefill to decode workers",
		Columns: []templates.Column{{Label: "Figure"}, {Label: labelA, Num: true}, {Label: labelB, Num: true}, {Label: "Δ (B − A)", Num: true}},
	}
	rows := []struct {
		label string
		value func(*sim.DisaggregationSummary) float64
	}{
		{"Prefill worker-seconds (s)", func(d *sim.DisaggregationSummary) float64 { return d.WorkerSeconds.Prefill }},
		{"Decode worker-seconds (s)", func(d *sim.DisaggregationSummary) float64 { return d.WorkerSeconds.Decode }},
		{"Handoffs made", func(d *sim.DisaggregationSummary) float64 { return float64(d.Handoffs) }},
		{"Handoffs landed", func(d *sim.DisaggregationSummary) float64 { return float64(d.Landed) }},
		{"Handoffs failed", func(d *sim.DisaggregationSummary) float64 { return float64(failedHandoffs(d.Failed)) }},
		{"Prompts recomputed", func(d *sim.DisaggregationSummary) float64 { return float64(d.Recomputed) }},
		{"Held block-seconds", func(d *sim.DisaggregationSummary) float64 { return d.HeldBlockSeconds }},
		{"Held on draining prefill workers (block-s)", func(d *sim.DisaggregationSummary) float64 { return d.HeldBlockSecondsDraining }},
	}
	cell := func(d *sim.DisaggregationSummary, value func(*sim.DisaggregationSummary) float64) string {
		if d == nil {
			return "no pools"
		}
		return format.Table(value(d))
	}
	for _, r := range rows {
		delta := format.Dash
		if da != nil && db != nil {
			delta = signedTable(r.value(db) - r.value(da))
		}
		t.Rows = append(t.Rows, []string{r.label, cell(da, r.value), cell(db, r.value), delta})
	}
	return t
}

// signedTable is format.Table with a sign, for a table's difference column: "+1,205", "-0.37",
// "0" (a difference of rounding noise below a nanosecond's worth reads 0).
func signedTable(d float64) string {
	d = math.Round(d*1e9) / 1e9
	if d > 0 {
		return "+" + format.Table(d)
	}
	return format.Table(d)
}

// comparePoolVerdicts says in words what differs per pool between two runs that both have
// prefill and decode pools: each pool's peak and final workers, its GPU-hours (weighed by the
// pool's GPUs per worker) and its scale events, A against B; then the handoffs. lead names the
// sides. None unless both runs have pools.
func comparePoolVerdicts(ra, rb *sim.Report, scA, scB *sim.Scenario, labelA, labelB string) (lead string, out []string) {
	da, db := ra.Summary.Disaggregation, rb.Summary.Disaggregation
	if da == nil || db == nil || scA.Disaggregation == nil || scB.Disaggregation == nil {
		return "", nil
	}
	lead = "Each pool, A against B:"
	if labelA != "A" || labelB != "B" {
		lead = fmt.Sprintf("Each pool, A (%s) against B (%s):", labelA, labelB)
	}
	side := func(r *sim.Report, sc *sim.Scenario, role string) (c poolCounts, gpuh float64, a *sim.Autoscaler, ps *sim.AutoscalerSummary) {
		c = poolWorkerCounts(r, role)
		gpuh, _ = poolGPUHours(r, sc.Disaggregation, role)
		if a = sc.PoolAutoscalers.Of(role); a != nil {
			ps = poolSummary(poolDecisions(r, role))
		}
		return c, gpuh, a, ps
	}
	events := func(ps *sim.AutoscalerSummary) string {
		if ps == nil {
			return "a fixed pool"
		}
		return fmt.Sprintf("%d up, %d down in %s", ps.ScaleUps, ps.ScaleDowns, format.Count(ps.Decisions, "decisions"))
	}
	for _, role := range poolRoles {
		ca, ga, aa, pa := side(ra, scA, role)
		cb, gb, ab, pb := side(rb, scB, role)
		s := fmt.Sprintf("%s: peak %s against %d, final %d against %d; %s against %s (B − A: %s)",
			poolName(role), format.Count(int64(ca.Peak), "workers"), cb.Peak, ca.Final, cb.Final,
			format.GPUHours(ga), format.GPUHours(gb), format.Signed(math.Round((gb-ga)*100)/100, "GPU-h"))
		if aa != nil || ab != nil {
			s += "; scale events " + events(pa) + " against " + events(pb)
		}
		out = append(out, s+".")
	}
	out = append(out, fmt.Sprintf("Handoffs: %s landed against %s; %s failed against %s; %s recomputed against %s.",
		format.Number(float64(da.Landed)), format.Number(float64(db.Landed)),
		format.Number(float64(failedHandoffs(da.Failed))), format.Number(float64(failedHandoffs(db.Failed))),
		format.Count(da.Recomputed, "prompts"), format.Number(float64(db.Recomputed))))
	return lead, out
}
