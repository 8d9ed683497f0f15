package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// glanceCards are what an autoscaler run leads with (issue 28): what the operator decides on —
// GPU-hours and money, the p99s, the workers against the bounds, the scale events and the rule
// that shaped them, the requests killed or migrated. Drain figures follow further down.
func glanceCards(rep *sim.Report, a *sim.Autoscaler, price float64) []templates.Card {
	s := rep.Summary
	avg := 0.0
	if s.DurationMS > 0 {
		avg = s.WorkerSeconds / (s.DurationMS / 1000)
	}
	cards := []templates.Card{
		{Key: "glance_gpu_hours", Label: "GPU-hours", Value: strconv.FormatFloat(s.GPUHours, 'f', 2, 64) + " GPU-h",
			Note: "cost " + format.Money(s.GPUHours*price) + " at " + format.Number(price) + " per GPU-hour"},
		{Key: "glance_p99", Label: "TTFT p99", Value: readableMS(s.TTFTMS.P99),
			Note: "end-to-end p99 " + readableMS(s.E2EMS.P99)},
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

// readableMS writes a time with a unit chosen by its size and about three significant digits:
// "786 s", "49.1 s", "109 ms", "2.5 min", "1:02:03 h". A dash for nil.
func readableMS(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return format.Dash
	}
	ms := *v
	three := func(x float64) string {
		if x == 0 {
			return "0"
		}
		d := max(0, 2-int(math.Floor(math.Log10(math.Abs(x)))))
		out := strconv.FormatFloat(x, 'f', d, 64)
		if strings.Contains(out, ".") {
			out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
		}
		return out
	}
	switch a := math.Abs(ms); {
	case a < 1000:
		return three(ms) + " ms"
	case a < 1000*1000:
		return three(ms/1000) + " s"
	case a < 60*60*1000:
		return three(ms/60000) + " min"
	}
	secs := int64(math.Round(ms / 1000))
	return fmt.Sprintf("%d:%02d:%02d h", secs/3600, secs/60%60, secs%60)
}
