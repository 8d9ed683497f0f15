package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// glanceCards are what an autoscaler run leads with (issue 28): what the operator decides on —
// GPU-hours and money, the p99s, the workers against the bounds, the scale events and the rule
// that shaped them, the requests killed or migrated. Drain figures follow further down.
func glanceCards(rep *sim.Report, a *sim.Autoscaler, price float64, currency string) []templates.Card {
	s := rep.Summary
	avg := 0.0
	if s.DurationMS > 0 {
		avg = s.WorkerSeconds / (s.DurationMS / 1000)
	}
	cards := []templates.Card{
		{Key: "glance_gpu_hours", Label: "GPU-hours", Value: format.GPUHours(s.GPUHours), Exact: format.Number(s.GPUHours) + " GPU-h",
			Note: "cost " + format.Cost(s.GPUHours*price, currency) + " at " + format.Cost(price, currency) + " per GPU-hour"},
		{Key: "glance_p99", Label: "TTFT p99", Value: format.DurationOpt(s.TTFTMS.P99), Exact: format.WithUnit(s.TTFTMS.P99, "ms"),
			Note: "end-to-end p99 " + format.DurationOpt(s.E2EMS.P99)},
		{Key: "glance_workers", Label: "Workers", Value: fmt.Sprintf("peak %d", s.Workers.Peak),
			Note: fmt.Sprintf("average %s, final %d; bounds %d–%d", strconv.FormatFloat(avg, 'f', 1, 64), s.Workers.Final, a.MinWorkers, a.MaxWorkers)},
	}
	if as := s.Autoscaler; as != nil {
		cards = append(cards, templates.Card{Key: "glance_scale_events", Label: "Scale events",
			Value: fmt.Sprintf("%d up, %d down", as.ScaleUps, as.ScaleDowns), Note: shapingRule(as, a)})
	}
	cards = append(cards, templates.Card{Key: "glance_killed", Label: "Requests killed",
		Value: format.Count(s.Requests.Killed, "requests"), Note: format.Count(s.Requests.Migrated, "moves") + " migrated"})
	return cards
}

// shapingRule names the path the controller took and the reason that held most decisions.
func shapingRule(as *sim.AutoscalerSummary, a *sim.Autoscaler) string {
	path := "the legacy rules (no behavior)"
	if a.Behavior != nil || a.UsesShorthand() {
		path = "a behavior"
	}
	best, n := "", int64(0)
	for _, r := range []string{sim.ReasonStabilized, sim.ReasonLimited, sim.ReasonHeldByStarting, sim.ReasonWithinTolerance, sim.ReasonAtBound} {
		if as.Reasons[r] > n {
			best, n = r, as.Reasons[r]
		}
	}
	if best == "" {
		return "under " + path
	}
	return fmt.Sprintf("under %s; most held: %s (%s)", path, strings.ReplaceAll(best, "_", " "), format.Count(n, "decisions"))
}
