package web

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// decisionsPerPage bounds the decisions table of one page (a long run has hundreds).
const decisionsPerPage = 25

// autoscalerView is the run page's autoscaler section (docs/model.md#model-3): key figures, verdicts in
// words and the decisions, paginated (?dpage=) and filterable to the decisions that changed the
// fleet (?decisions=changes). nil for a run without an autoscaler.
//
// With prefill and decode pools (pools non-nil, d the scenario's pools) each decision scales one
// pool: the table says which, and weighs its load against that pool's autoscaler; the cards are
// each pool's (poolScaleCards), since the fleet's peak is neither autoscaler's.
func autoscalerView(rep *sim.Report, a *sim.Autoscaler, pools *sim.PoolAutoscalers, d *sim.Disaggregation, q url.Values, path string, clock format.Clock) *templates.AutoscalerView {
	if rep.Autoscaler == nil {
		return nil
	}
	v := &templates.AutoscalerView{ChangesOnly: q.Get("decisions") == "changes", Total: len(rep.Autoscaler.Decisions)}
	s := rep.Summary
	migrated := templates.Card{Key: "requests_migrated", Label: "Requests migrated", Value: format.Count(s.Requests.Migrated, "moves"),
		Note: format.Count(s.Requests.Killed, "requests") + " killed"}
	poolRun := pools != nil && s.Disaggregation != nil
	if poolRun && d != nil {
		v.Cards = append(poolScaleCards(rep, pools, d), migrated)
	} else {
		v.Cards = append(scaleCards("", "", s.GPUHours, "worker-seconds × GPUs per worker ÷ 3600",
			poolCounts{Initial: s.Workers.Initial, Peak: s.Workers.Peak, Final: s.Workers.Final}), migrated)
	}
	if poolRun {
		v.Verdicts = poolAutoscalerVerdicts(rep, pools)
	} else {
		v.Verdicts = autoscalerVerdicts(rep, a)
	}
	t := templates.DataTable{
		Caption: "Autoscaler decisions: the pods the HPA controller saw, the metric per worker against the target, the chain recommendation → stabilised → limit → desired, and why",
		Columns: []templates.Column{{Label: clock.Column("At"), Num: true}, {Label: "Pods: ready · starting (pending, missing)"},
			{Label: "Load per worker" + loadUnitLabel(a), Num: true}, {Label: sampledLabel(a), Num: true}, {Label: "Ratio", Num: true},
			{Label: "rec → stab → limit → desired"}, {Label: "Current", Num: true},
			{Label: "Why"}, {Label: "Workers"}},
	}
	if pools != nil {
		t.Caption = "Autoscaler decisions, each for one pool: the pods its HPA controller saw, the metric per worker against that pool's target, the chain recommendation → stabilised → limit → desired, and why"
		t.Columns = append([]templates.Column{t.Columns[0], {Label: "Pool"}}, t.Columns[1:]...)
		t.Columns[3].Label = "Load per worker (against its pool's target)"
		t.Columns[4].Label = "Sampled"
	}
	for _, d := range rep.Autoscaler.Decisions {
		changed := decisionChanged(d)
		if changed {
			v.Changes++
		}
		if v.ChangesOnly && !changed {
			continue
		}
		usage, ratio := "—", "—"
		if d.Usage != nil {
			usage = format.Readable(*d.Usage, "")
		}
		if d.Ratio != nil {
			ratio = format.Readable(*d.Ratio, "")
		}
		perWorker := format.Dash
		da := a
		if pools != nil {
			da = pools.Of(d.Role)
		}
		if da != nil {
			if v, ok := d.PerWorker(da.Target); ok {
				perWorker = loadPerWorker(v, da.Metric)
			}
		}
		row := []string{clock.At(d.TMS), decisionPods(d), perWorker, usage, ratio,
			decisionChain(d), strconv.Itoa(d.Current), reasonWords(d), decisionWorkers(d)}
		if pools != nil {
			row = append([]string{row[0], d.Role}, row[1:]...)
		}
		t.Rows = append(t.Rows, row)
	}
	v.Decisions = t
	v.Decisions.Rows, v.Pager = paginateBy(t.Rows, q, path, "dpage", "decisions", decisionsPerPage)
	v.Shown = decisionsShown(v.Pager, v.ChangesOnly, v.Changes, v.Total)
	base := url.Values{}
	for k, vs := range q {
		if k != "decisions" && k != "dpage" {
			base[k] = vs
		}
	}
	all, changes := url.Values{}, url.Values{}
	for k, vs := range base {
		all[k], changes[k] = vs, vs
	}
	changes.Set("decisions", "changes")
	v.AllURL, v.ChangesURL = withQuery(path, all)+"#decisions", withQuery(path, changes)+"#decisions"
	return v
}

// scaleCards are the autoscaler section's figures of the fleet or of one pool: its GPU-hours
// (gpuNote says how they were counted) and its peak workers, with those it started and ended
// with. key ("prefill_") and name ("Prefill") name the pool; both are empty for the fleet.
func scaleCards(key, name string, gpuh float64, gpuNote string, c poolCounts) []templates.Card {
	label := func(s string) string {
		if name == "" {
			return format.Capitalize(s)
		}
		return name + " " + s
	}
	return []templates.Card{
		{Key: key + "gpu_hours", Label: label("GPU-hours"), Value: format.GPUHours(gpuh), Exact: format.WithUnit(&gpuh, "GPU-h"), Note: gpuNote},
		{Key: key + "workers_peak", Label: label("peak workers"), Value: format.Count(int64(c.Peak), "workers"),
			Note: fmt.Sprintf("started with %d, ended with %d", c.Initial, c.Final)},
	}
}

// poolScaleCards are the autoscaler section's cards on a run with prefill and decode pools: for
// each pool with an autoscaler its GPU-hours (weighed by its GPUs per worker), its peak workers
// and its scale events, a row each on a wide screen; then one card for a pool without one, which
// says it was fixed, so that the section does not leave the reader wondering where it went.
func poolScaleCards(rep *sim.Report, pools *sim.PoolAutoscalers, d *sim.Disaggregation) []templates.Card {
	var cards, fixed []templates.Card
	for _, role := range poolRoles {
		gpuh, gpus := poolGPUHours(rep, d, role)
		c := poolWorkerCounts(rep, role)
		a := pools.Of(role)
		if a == nil {
			fixed = append(fixed, templates.Card{Key: role + "_fixed", Label: poolName(role) + " pool", Value: "fixed",
				Note: fmt.Sprintf("no autoscaler; peak %s, %s", format.Count(int64(c.Peak), "workers"), format.GPUHours(gpuh))})
			continue
		}
		cards = append(cards, scaleCards(role+"_", poolName(role), gpuh, poolGPUNote(rep, role, gpus), c)...)
		cards = append(cards, poolScaleEventsCard("", rep, role, a))
	}
	return append(cards, fixed...)
}

func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// decisionChanged reports whether a decision changed the fleet.
func decisionChanged(d sim.Decision) bool {
	return len(d.Drained)+len(d.Cancelled)+len(d.Reactivated)+len(d.Started) > 0
}

// decisionWorkers says what a decision did to which workers ("drained 7, 6; started 9").
func decisionWorkers(d sim.Decision) string {
	var parts []string
	for _, l := range []struct {
		verb string
		ids  []int
	}{{"drained", d.Drained}, {"cancelled", d.Cancelled}, {"reactivated", d.Reactivated}, {"started", d.Started}} {
		if len(l.ids) == 0 {
			continue
		}
		ids := make([]string, len(l.ids))
		for i, id := range l.ids {
			ids[i] = strconv.Itoa(id)
		}
		parts = append(parts, l.verb+" "+strings.Join(ids, ", "))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// decisionTally counts what a list of decisions did: workers drained, started, reactivated and
// cancelled, and the decisions that took workers away (downs) or added some (ups).
type decisionTally struct{ drained, started, reactivated, cancelled, downs, ups int }

func tallyDecisions(ds []sim.Decision) (t decisionTally) {
	for _, d := range ds {
		t.drained += len(d.Drained)
		t.started += len(d.Started)
		t.reactivated += len(d.Reactivated)
		t.cancelled += len(d.Cancelled)
		if len(d.Drained)+len(d.Cancelled) > 0 {
			t.downs++
		}
		if len(d.Started)+len(d.Reactivated) > 0 {
			t.ups++
		}
	}
	return t
}

func (t decisionTally) changed() bool { return t.drained+t.started+t.reactivated+t.cancelled > 0 }

// decisionsInWords says in a sentence what an autoscaler's decisions did to its fleet or pool
// (what): "In 12 decisions the autoscaler drained 5 workers in 4 decisions and added 3 workers
// in 2 decisions; the fleet went from 8 to 6 workers, 9 at most." A prefix ("Prefill: ") goes
// before it, the sentence then going on in lower case; who names the autoscaler.
func decisionsInWords(prefix, who, what string, ds []sim.Decision, initial, final, peak int) string {
	t := tallyDecisions(ds)
	var s string
	if !t.changed() {
		s = fmt.Sprintf("%s made %s and changed nothing: the %s stayed at %s.", who,
			format.Count(int64(len(ds)), "decisions"), what, format.Count(int64(initial), "workers"))
	} else {
		s = fmt.Sprintf("in %s %s drained %s in %s", format.Count(int64(len(ds)), "decisions"), who,
			format.Count(int64(t.drained), "workers"), format.Count(int64(t.downs), "decisions"))
		if t.cancelled > 0 {
			s += fmt.Sprintf(" (and cancelled %s still starting)", format.Count(int64(t.cancelled), "workers"))
		}
		if t.started+t.reactivated > 0 {
			s += fmt.Sprintf(" and added %s in %s", format.Count(int64(t.started+t.reactivated), "workers"), format.Count(int64(t.ups), "decisions"))
			if t.reactivated > 0 {
				s += fmt.Sprintf(", %d of them draining workers made active again", t.reactivated)
			}
		}
		s += fmt.Sprintf("; the %s went from %d to %d workers, %d at most.", what, initial, final, peak)
	}
	if prefix == "" {
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return prefix + s
}

// autoscalerVerdicts says in words what the autoscaler did and what it cost ("the autoscaler
// drained 11 workers in 6 decisions; 3 drains waited 9.5 s on peers pulling from them; a 30 s
// grace killed 4 requests, migration moved 7").
func autoscalerVerdicts(rep *sim.Report, a *sim.Autoscaler) (out []string) {
	w := rep.Summary.Workers
	out = []string{decisionsInWords("", "the autoscaler", "fleet", rep.Autoscaler.Decisions, w.Initial, w.Final, w.Peak)}
	if !tallyDecisions(rep.Autoscaler.Decisions).changed() {
		return append(out, ruleVerdicts(rep.Autoscaler.Decisions)...)
	}
	defer func() { out = append(out, ruleVerdicts(rep.Autoscaler.Decisions)...) }()
	if v, ok := pinWaitVerdict(rep); ok {
		out = append(out, v)
	}
	if v, ok := forcedVerdict(rep); ok {
		out = append(out, v)
	}
	if a == nil {
		return out
	}
	// What never scaling costs: the baseline of every comparison, a fixed fleet of max_workers
	// (sim.BaselineWorkers), held for the whole run.
	if fixed := float64(a.MaxWorkers) * rep.Summary.DurationMS / 1000; fixed > 0 {
		saved := 1 - rep.Summary.WorkerSeconds/fixed
		out = append(out, fmt.Sprintf("Against %s, held for the whole run, it used %s of its worker-seconds (%s saved).",
			sim.BaselinePhrase(&sim.Scenario{Autoscaler: a}, 0), format.Share(1-saved), format.Share(saved)))
	}
	return out
}

// pinWaitVerdict says how many drains waited on peers pulling from them, and how long in all
// ("3 drains waited 9.5 s in all on peers pulling from them."); false when none waited.
func pinWaitVerdict(rep *sim.Report) (string, bool) {
	waits, waited := 0, 0.0
	for _, w := range rep.Workers {
		if w.PinWaitMS != nil && *w.PinWaitMS > 0 {
			waits++
			waited += *w.PinWaitMS
		}
	}
	if waits == 0 {
		return "", false
	}
	return fmt.Sprintf("%s waited %s in all on peers pulling from them.",
		format.Count(int64(waits), "drains"), format.ShortMS(waited)), true
}

// forcedVerdict says how many drains outlasted their grace and what that cost, with what
// migration saved ("2 drains outlasted the grace and were removed by force, killing 5 requests;
// migration moved 3 requests instead of killing them."); false when none was forced and nothing
// migrated.
func forcedVerdict(rep *sim.Report) (string, bool) {
	forced := 0
	var killed int64
	for _, w := range rep.Workers {
		if w.Forced {
			forced++
			killed += w.RequestsKilled
		}
	}
	m := rep.Summary.Requests.Migrated
	if forced == 0 && m == 0 {
		return "", false
	}
	s := fmt.Sprintf("%s outlasted the grace and were removed by force", format.Count(int64(forced), "drains"))
	if killed > 0 {
		s += fmt.Sprintf(", killing %s", format.Count(killed, "requests"))
	}
	if m > 0 {
		s += fmt.Sprintf("; migration moved %s instead of killing them", format.Count(m, "requests"))
	}
	return s + ".", true
}

// decisionPods says which pods the controller saw ("4 · 2 (0, 2)").
func decisionPods(d sim.Decision) string {
	if d.Ready == nil {
		return "not read"
	}
	return fmt.Sprintf("%d · %d (%d, %d)", *d.Ready, *d.Unready+*d.Missing, *d.Unready, *d.Missing)
}

// decisionChain is "rec → stab → limit → desired" with a dash where a step was not computed.
func decisionChain(d sim.Decision) string {
	n := func(p *int) string {
		if p == nil {
			return "—"
		}
		return strconv.Itoa(*p)
	}
	return n(d.Rec) + " → " + n(d.Stab) + " → " + n(d.Limit) + " → " + strconv.Itoa(d.Desired)
}

// reasonWords puts a decision's reason in words after its name ("stabilized: held by the
// scale-down window (max 9 recommended)").
func reasonWords(d sim.Decision) string {
	return strings.ReplaceAll(d.Reason, "_", " ") + ": " + reasonSentence(d)
}

func reasonSentence(d sim.Decision) string {
	starting := 0
	if d.Unready != nil {
		starting = *d.Unready + *d.Missing
	}
	switch d.Reason {
	case sim.ReasonAboveMax:
		return fmt.Sprintf("above max_workers: set to %d without reading the metric", d.Desired)
	case sim.ReasonBelowMin:
		return fmt.Sprintf("below min_workers: set to %d without reading the metric", d.Desired)
	case sim.ReasonNoMetrics:
		return "no ready worker had a sample: no change"
	case sim.ReasonScaleUp, sim.ReasonScaleDown:
		verb := "scaled up"
		if d.Reason == sim.ReasonScaleDown {
			verb = "scaled down"
		}
		s := fmt.Sprintf("%s from %d to %d", verb, d.Current, d.Desired)
		if d.Stab != nil && *d.Stab != d.Desired {
			s += fmt.Sprintf(" (%d stabilised; cut by a limit or bound)", *d.Stab)
		}
		return s
	case sim.ReasonWithinTolerance:
		return "within tolerance: the ratio is close enough to 1"
	case sim.ReasonHeldByStarting:
		return fmt.Sprintf("held: %d starting workers would flip the ratio", starting)
	case sim.ReasonStabilized:
		if d.Rec != nil && *d.Rec < d.Current {
			if d.Down != nil {
				return fmt.Sprintf("held by the scale-down window (max %d recommended)", *d.Down)
			}
			return fmt.Sprintf("held by the downscale window (max %d recommended)", *d.Stab)
		}
		if d.Up != nil {
			return fmt.Sprintf("held by the scale-up window (min %d recommended)", *d.Up)
		}
		return "held by the stabilisation window"
	case sim.ReasonLimited:
		if d.Limit != nil {
			return fmt.Sprintf("the policies allow %d now (changes inside their periods used the rest)", *d.Limit)
		}
		return "limited by the policies"
	case sim.ReasonAtBound:
		return "at the min_workers / max_workers bound"
	}
	return "no change"
}

// ruleVerdicts names the controller's rules that shaped the run, from the decisions alone:
// the legacy path scaling up towards an old spike, starting workers holding a scale-down, the
// windows, the policies and the bounds.
func ruleVerdicts(decisions []sim.Decision) []string {
	var out []string
	var pushed, held, stabilized, limited, atMax int
	var first *sim.Decision
	for i, d := range decisions {
		switch {
		case d.Reason == sim.ReasonScaleUp && d.Rec != nil && d.Up == nil && *d.Rec < d.Desired:
			// The legacy path: the window's maximum, not this sample, asked for the growth.
			pushed++
			if first == nil {
				first = &decisions[i]
			}
		case d.Reason == sim.ReasonHeldByStarting:
			held++
		case d.Reason == sim.ReasonStabilized:
			stabilized++
		case d.Reason == sim.ReasonLimited:
			limited++
		case d.Reason == sim.ReasonAtBound && d.Stab != nil && *d.Stab > d.Current:
			atMax++
		}
	}
	if pushed > 0 {
		out = append(out, fmt.Sprintf("The legacy path (an HPA without behavior) scaled up to %d at %s although the metric asked for %d: "+
			"the downscale window's maximum from an earlier peak drives scale-ups too (%s). Set a behavior to avoid it.",
			first.Desired, format.ShortMS(first.TMS), *first.Rec, format.Count(int64(pushed), "decisions")))
	}
	if held > 0 {
		out = append(out, fmt.Sprintf("Starting workers held %s: without a sample they would flip the ratio, so Kubernetes keeps the size (set pending_ms or a shorter start-up to see them sooner).",
			format.Count(int64(held), "decisions")))
	}
	if stabilized > 0 {
		out = append(out, fmt.Sprintf("A stabilisation window held %s that the metric alone would have changed.", format.Count(int64(stabilized), "decisions")))
	}
	if limited > 0 {
		out = append(out, fmt.Sprintf("The scaling policies limited %s: changes inside a policy's period use up what it allows.", format.Count(int64(limited), "decisions")))
	}
	if atMax > 0 {
		out = append(out, fmt.Sprintf("%s wanted more workers than max_workers allows.", format.Count(int64(atMax), "decisions")))
	}
	return out
}

// loadUnitLabel is the unit of the load per worker in the column's label: the metric against
// its target ("requests, target 8").
func loadUnitLabel(a *sim.Autoscaler) string {
	if a == nil {
		return ""
	}
	unit := "requests"
	if a.Metric == sim.MetricKVUsage {
		unit = "KV-cache use"
		return fmt.Sprintf(" (%s, target %s)", unit, format.Share(a.Target))
	}
	return fmt.Sprintf(" (%s, target %s)", unit, format.Table(a.Target))
}

// loadPerWorker writes the load per worker the decision weighed: a share of the KV cache, or
// requests.
func loadPerWorker(v float64, metric string) string {
	if metric == sim.MetricKVUsage {
		return format.Share(v)
	}
	return format.Readable(math.Round(v*100)/100, "")
}

// sampledLabel says what the sampled usage is: per pod, or the External metric's total over the
// fleet.
func sampledLabel(a *sim.Autoscaler) string {
	if a != nil && a.Source == sim.SourceExternal {
		return "Sampled (External total)"
	}
	return "Sampled (per pod)"
}

// decisionsShown is the sentence above the decisions table: which decisions it lists, and
// which of them this page shows ("Showing decisions 1–100 of 5 760.").
func decisionsShown(pg templates.Pager, changesOnly bool, changes, total int) string {
	n := func(v int) string { return format.Number(float64(v)) }
	switch rows := shownRows(pg, "decisions"); {
	case !changesOnly && rows != "":
		return "Showing " + rows + "."
	case !changesOnly:
		return "Showing all " + n(total) + " decisions."
	case rows != "":
		return fmt.Sprintf("Showing %s that changed the fleet (%s decisions in all).", rows, n(total))
	}
	return fmt.Sprintf("Showing the %s decisions that changed the fleet, of %s.", n(changes), n(total))
}
