package web

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// poolRoles are the two pools of a run with disaggregation, in the report's order.
var poolRoles = []string{sim.RolePrefill, sim.RoleDecode}

// poolCounts is one pool's workers over a run, read from its worker rows: the workers it
// started with, the most it held at once (starting and draining workers included, as
// summary.workers.peak counts them) and those it held at the end.
type poolCounts struct {
	Initial, Peak, Final int
}

// poolWorkerCounts reads a pool's workers from the report's worker rows. A worker holds its
// GPU from started_at_ms (0 for the initial fleet) to removed_at_ms (the end when not removed);
// a removal at the instant of a start is counted first.
func poolWorkerCounts(rep *sim.Report, role string) poolCounts {
	type step struct {
		t     float64
		delta int
	}
	var c poolCounts
	var steps []step
	for _, w := range rep.Workers {
		if w.Role != role {
			continue
		}
		at := 0.0
		if w.StartedAtMS == nil {
			c.Initial++
		} else {
			at = *w.StartedAtMS
		}
		steps = append(steps, step{at, 1})
		if w.RemovedAtMS == nil {
			c.Final++
		} else {
			steps = append(steps, step{*w.RemovedAtMS, -1})
		}
	}
	slices.SortFunc(steps, func(a, b step) int {
		return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.delta, b.delta))
	})
	n := 0
	for _, s := range steps {
		n += s.delta
		c.Peak = max(c.Peak, n)
	}
	return c
}

// poolDecisions are the autoscaler decisions that scaled the pool named role.
func poolDecisions(rep *sim.Report, role string) []sim.Decision {
	if rep.Autoscaler == nil {
		return nil
	}
	var out []sim.Decision
	for _, d := range rep.Autoscaler.Decisions {
		if d.Role == role {
			out = append(out, d)
		}
	}
	return out
}

// poolSummary counts a pool's decisions as summary.autoscaler counts the fleet's.
func poolSummary(ds []sim.Decision) *sim.AutoscalerSummary {
	s := &sim.AutoscalerSummary{Decisions: int64(len(ds)), Reasons: sim.ReasonCounts{}}
	for _, d := range ds {
		switch {
		case d.Desired > d.Current:
			s.ScaleUps++
		case d.Desired < d.Current:
			s.ScaleDowns++
		}
		s.Reasons[d.Reason]++
	}
	return s
}

// poolWorkerSeconds is the worker-seconds of the pool named role in the report.
func poolWorkerSeconds(rep *sim.Report, role string) float64 {
	if role == sim.RoleDecode {
		return rep.Summary.Disaggregation.WorkerSeconds.Decode
	}
	return rep.Summary.Disaggregation.WorkerSeconds.Prefill
}

// poolGPUHours is the pool's GPU-hours: its worker-seconds × its GPUs per worker (at least 1),
// which it also returns.
func poolGPUHours(rep *sim.Report, d *sim.Disaggregation, role string) (gpuh float64, gpus int) {
	gpus = d.Prefill.GPUsPerWorker
	if role == sim.RoleDecode {
		gpus = d.Decode.GPUsPerWorker
	}
	gpus = max(gpus, 1)
	return poolWorkerSeconds(rep, role) * float64(gpus) / 3600, gpus
}

// poolName is the pool's name for the start of a label ("Prefill").
func poolName(role string) string { return format.Capitalize(role) }

// poolGlanceCards are what a run whose prefill and decode pools have autoscalers leads with,
// as glanceCards are for one autoscaler: GPU-hours and money of both pools, the p99s and the
// requests killed or failed, then for each pool its workers against its bounds, its GPU-hours
// and its scale events. pools are the scenario's autoscalers, d its pools.
func poolGlanceCards(rep *sim.Report, pools *sim.PoolAutoscalers, d *sim.Disaggregation, price float64, currency string) []templates.Card {
	s := rep.Summary
	cost := func(gpuh float64) string {
		return "cost " + format.Cost(gpuh*price, currency) + " at " + format.Cost(price, currency) + " per GPU-hour"
	}
	killed := templates.Card{Key: "glance_killed", Label: "Requests killed",
		Value: format.Count(s.Requests.Killed, "requests"), Note: format.Count(s.Requests.Migrated, "moves") + " migrated"}
	if f := s.Requests.Failed; f != nil {
		killed.Note += "; " + format.Count(*f, "requests") + " failed on a handoff"
	}
	cards := []templates.Card{
		{Key: "glance_gpu_hours", Label: "GPU-hours, both pools", Value: format.GPUHours(s.GPUHours), Exact: format.Number(s.GPUHours) + " GPU-h",
			Note: cost(s.GPUHours)},
		{Key: "glance_p99", Label: "TTFT p99", Value: format.DurationOpt(s.TTFTMS.P99), Exact: format.WithUnit(s.TTFTMS.P99, "ms"),
			Note: "end-to-end p99 " + format.DurationOpt(s.E2EMS.P99)},
		killed,
	}
	// Then each pool's cards together (a row each on a wide screen).
	for _, role := range poolRoles {
		name := poolName(role)
		a := pools.Of(role)
		c := poolWorkerCounts(rep, role)
		bounds := "a fixed pool (no autoscaler)"
		if a != nil {
			bounds = fmt.Sprintf("bounds %d–%d", a.MinWorkers, a.MaxWorkers)
		}
		cards = append(cards, templates.Card{Key: "glance_" + role + "_workers", Label: name + " workers",
			Value: fmt.Sprintf("peak %s", format.Count(int64(c.Peak), "workers")),
			Note:  fmt.Sprintf("started with %d, final %d; %s", c.Initial, c.Final, bounds)})
		gpuh, gpus := poolGPUHours(rep, d, role)
		cards = append(cards, templates.Card{Key: "glance_" + role + "_gpu_hours", Label: name + " GPU-hours",
			Value: format.GPUHours(gpuh), Exact: format.Number(gpuh) + " GPU-h",
			Note: poolGPUNote(rep, role, gpus) + "; " + cost(gpuh)})
		if a == nil {
			continue
		}
		cards = append(cards, poolScaleEventsCard("glance_", rep, role, a))
	}
	return cards
}

// poolGPUNote says how a pool's GPU-hours were counted ("2 worker-hours × 2 GPUs per worker");
// gpus is what poolGPUHours returns with them.
func poolGPUNote(rep *sim.Report, role string, gpus int) string {
	return fmt.Sprintf("%s worker-hours × %s per worker", format.Sig3(poolWorkerSeconds(rep, role)/3600), format.Count(int64(gpus), "GPUs"))
}

// poolScaleEventsCard counts the scale-ups and scale-downs of the pool named role, which a
// scaled (its autoscaler), and the rule that held most of its decisions. The card's key is
// prefix + role + "_scale_events".
func poolScaleEventsCard(prefix string, rep *sim.Report, role string, a *sim.Autoscaler) templates.Card {
	ps := poolSummary(poolDecisions(rep, role))
	return templates.Card{Key: prefix + role + "_scale_events", Label: poolName(role) + " scale events",
		Value: fmt.Sprintf("%d up, %d down", ps.ScaleUps, ps.ScaleDowns),
		Note:  "in " + format.Count(ps.Decisions, "decisions") + " " + shapingRule(ps, a)}
}

// poolAutoscalerVerdicts says in words what each pool's autoscaler did and the rules that
// shaped it, each sentence naming its pool; then the forced drains of both pools.
func poolAutoscalerVerdicts(rep *sim.Report, pools *sim.PoolAutoscalers) []string {
	var out []string
	for _, role := range poolRoles {
		a := pools.Of(role)
		if a == nil {
			continue
		}
		name := poolName(role)
		ds := poolDecisions(rep, role)
		c := poolWorkerCounts(rep, role)
		out = append(out, decisionsInWords(name+": ", "its autoscaler", "pool", ds, c.Initial, c.Final, c.Peak))
		ws := poolWorkerSeconds(rep, role)
		if fixed := float64(a.MaxWorkers) * rep.Summary.DurationMS / 1000; fixed > 0 {
			saved := 1 - ws/fixed
			out = append(out, fmt.Sprintf("%s: against %d %s workers (its max_workers) held for the whole run, the pool used %s of their worker-seconds (%s saved).",
				name, a.MaxWorkers, role, format.Share(1-saved), format.Share(saved)))
		}
		for _, v := range ruleVerdicts(ds) {
			out = append(out, name+": "+strings.ToLower(v[:1])+v[1:])
		}
	}
	// The forced drains and the migrations are the fleet's (either pool's workers), said as the
	// fleet's verdicts say them: after decisions that changed something.
	if tallyDecisions(rep.Autoscaler.Decisions).changed() {
		if v, ok := forcedVerdict(rep); ok {
			out = append(out, v)
		}
	}
	return out
}
