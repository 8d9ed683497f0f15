package web

import (
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
		return format.Number(value(d))
	}
	for _, r := range rows {
		delta := format.Dash
		if da != nil && db != nil {
			delta = format.Signed(math.Round((r.value(db)-r.value(da))*1e9)/1e9, "")
		}
		t.Rows = append(t.Rows, []string{r.label, cell(da, r.value), cell(db, r.value), delta})
	}
	return t
}
