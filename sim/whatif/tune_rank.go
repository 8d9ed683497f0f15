package whatif

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// judge checks a tune candidate (or baseline) against the constraints and fills its figures.
func (t *tuner) judge(c *Candidate) {
	c.Violations, c.excess = []string{}, 0
	if c.Status != StatusDone {
		msg := "the run " + c.Status
		if c.Error != "" {
			msg += ": " + c.Error
		}
		c.Violations, c.Feasible, c.Fleet = append(c.Violations, msg), false, nil
		return
	}
	c.Violations, c.excess = constraintViolations(c.Headline, t.req.Constraints)
	c.Feasible = len(c.Violations) == 0
	c.Fleet = &TuneFigures{FleetFigures: c.fleet}
}

// compareTune orders tune candidates: feasible first; among the infeasible, finished runs
// first, then fewer broken limits and the smaller excess over them (the closest first); then
// the fewest GPU-hours, the lower TTFT p99, fewer fleet changes (less churn), fewer settings
// changed from the scenario's and the label, so the order is total.
func compareTune(a, b Candidate) int {
	if c := compareOutcome(a, b); c != 0 {
		return c
	}
	// The same outcome: the fewer settings changed from the scenario's, so the advice names
	// only changes that matter (a grace that made no difference stays as it was).
	if c := cmp.Compare(a.changed, b.changed); c != 0 {
		return c
	}
	return strings.Compare(a.Label, b.Label)
}

// compareOutcome is compareTune without the label: 0 for runs that came out the same.
func compareOutcome(a, b Candidate) int {
	if a.Feasible != b.Feasible {
		if a.Feasible {
			return -1
		}
		return 1
	}
	if !a.Feasible {
		aDone, bDone := a.Status == StatusDone, b.Status == StatusDone
		if aDone != bDone {
			if aDone {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(len(a.Violations), len(b.Violations)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.excess, b.excess); c != 0 {
			return c
		}
	}
	if c := comparePtr(gpuHours(a), gpuHours(b)); c != 0 {
		return c
	}
	if c := comparePtr(ttftP99(a), ttftP99(b)); c != 0 {
		return c
	}
	return comparePtr(fleetChanges(a), fleetChanges(b))
}

// TuneTieTolerance is how close in GPU-hours two feasible tune candidates are a tie: within
// 1 % of the fewest GPU-hours, the one with fewer settings changed from the scenario's is
// recommended (docs/planning.md, "Best"). Two runs whose settings differ only in a grace or a
// selection that changed nothing rarely come out exactly equal: a drain ends a few
// milliseconds earlier, and the GPU-hours differ in the sixth digit.
const TuneTieTolerance = 0.01

// rankTune sorts by compareTune, then brings forward the recommendation among the ties within
// TuneTieTolerance (preferFewerChanges), and numbers the ranks from 1.
func rankTune(cs []Candidate) {
	slices.SortStableFunc(cs, compareTune)
	preferFewerChanges(cs)
	for i := range cs {
		cs[i].Rank = i + 1
	}
}

// preferFewerChanges moves to the front, among the feasible candidates within TuneTieTolerance
// of the first one's GPU-hours, the one with the fewest settings changed from the scenario's
// (the earliest in the order on a tie of that too). The others keep their order.
func preferFewerChanges(cs []Candidate) {
	if len(cs) < 2 || !cs[0].Feasible || gpuHours(cs[0]) == nil {
		return
	}
	limit := *gpuHours(cs[0]) * (1 + TuneTieTolerance)
	pick := 0
	for i := 1; i < len(cs); i++ {
		g := gpuHours(cs[i])
		if !cs[i].Feasible || g == nil || *g > limit {
			continue
		}
		if cs[i].changed < cs[pick].changed {
			pick = i
		}
	}
	if pick == 0 {
		return
	}
	chosen := cs[pick]
	copy(cs[1:pick+1], cs[:pick])
	cs[0] = chosen
}

func gpuHours(c Candidate) *float64 {
	if c.Fleet == nil {
		return nil
	}
	return &c.Fleet.GPUHours
}

func fleetChanges(c Candidate) *float64 {
	if c.Fleet == nil {
		return nil
	}
	n := float64(c.Fleet.FleetChanges)
	return &n
}

func ttftP99(c Candidate) *float64 { return figure(c.Headline, sim.HeadlineTTFTP99MS) }

// markParetoBy flags the feasible candidates no other feasible one beats on both x and y (all
// finished ones when none is feasible), lower being better on both.
func markParetoBy(cs []Candidate, x, y func(Candidate) *float64) {
	anyFeasible := slices.ContainsFunc(cs, func(c Candidate) bool { return c.Feasible })
	eligible := func(c Candidate) bool {
		return c.Status == StatusDone && (c.Feasible || !anyFeasible) && x(c) != nil && y(c) != nil
	}
	for i := range cs {
		cs[i].Pareto = false
		if !eligible(cs[i]) {
			continue
		}
		ax, ay := *x(cs[i]), *y(cs[i])
		dominated := slices.ContainsFunc(cs, func(o Candidate) bool {
			if !eligible(o) {
				return false
			}
			bx, by := *x(o), *y(o)
			return bx <= ax && by <= ay && (bx < ax || by < ay)
		})
		cs[i].Pareto = !dominated
	}
}

// savingsOf fills what the candidate saves against the two baselines, in % of their GPU-hours.
func savingsOf(c *Candidate, fixed, yours *Candidate) {
	if c.Fleet == nil {
		return
	}
	saved := func(b *Candidate) *float64 {
		if b.Fleet == nil || b.Fleet.GPUHours <= 0 {
			return nil
		}
		p := 100 * (b.Fleet.GPUHours - c.Fleet.GPUHours) / b.Fleet.GPUHours
		return &p
	}
	c.Fleet.SavedVsFixedPct, c.Fleet.SavedVsYoursPct = saved(fixed), saved(yours)
}

// recommend picks the first feasible candidate and says what to set in one sentence, or names
// the closest candidate and what it broke.
func (t *tuner) recommend(ranked, baselines []Candidate) (*Recommendation, string) {
	fixed, yours := baselines[0], baselines[1]
	if len(ranked) == 0 || !ranked[0].Feasible {
		if len(ranked) == 0 {
			return nil, "no setting was simulated; raise search.max_runs or widen the search"
		}
		best := ranked[0]
		msg := fmt.Sprintf("None of the %s meets the limits; the closest, %q, fails because %s. Relax the limits (constraints), raise the autoscaler's min_workers, or widen the search",
			count(len(ranked), "setting"), best.Label, strings.Join(best.Violations, "; "))
		if fixed.Feasible {
			msg += fmt.Sprintf("; the baseline, a %s, meets them", fixed.Label)
		}
		return nil, msg + "."
	}
	best := ranked[0]
	a := best.Autoscaler
	var b strings.Builder
	// "Set" names what the manifests carry (the HPA, the workloads' grace and migration limit);
	// which pods go first is the simulation's choice, said apart after the figures.
	b.WriteString("Set " + targetPhrase(a) + " and " + windowPhrase(a.ScaleDownWindow()) + ", " + scaleDownPhrase(a) +
		", " + gracePhrase(a.GraceMS) + ", " + migrationPhrase(*best.MigrationLimit) + ": ")
	if best.Fleet.SavedVsFixedPct == nil {
		b.WriteString(formatFloat(roundSignificant(best.Fleet.GPUHours, 3)) + " GPU-hours")
	} else {
		b.WriteString(savedPhrase(best.Fleet.SavedVsFixedPct, "GPU-hours than a "+fixed.Label))
	}
	switch {
	case best.ScenarioID == yours.ScenarioID:
		b.WriteString(" (your own settings)")
	case best.Fleet.SavedVsYoursPct != nil:
		b.WriteString(" (and " + savedPhrase(best.Fleet.SavedVsYoursPct, "than your settings") + ")")
	}
	con := t.req.Constraints
	if v := figure(best.Headline, sim.HeadlineTTFTP99MS); v != nil {
		b.WriteString(", TTFT p99 " + roundedMS(*v) + limitPhrase(con.TTFTP99MS))
	}
	if v := figure(best.Headline, sim.HeadlineSLOAttainment); v != nil {
		b.WriteString(", " + attainmentPhrase(*v, con.MinAttainment))
	}
	if v := figure(best.Headline, sim.HeadlineE2EP99MS); v != nil && con.E2EP99MS != nil {
		b.WriteString(", end-to-end p99 " + roundedMS(*v) + limitPhrase(con.E2EP99MS))
	}
	killed := figure(best.Headline, sim.HeadlineRequestsKilled)
	switch {
	case killed == nil || *killed == 0:
		b.WriteString(", nothing killed")
	default:
		fmt.Fprintf(&b, ", %s (limit %d)", requestsKilled(*killed), *con.MaxKilled)
	}
	if m := best.Fleet.Migrated; m > 0 || *best.MigrationLimit > 0 {
		switch m {
		case 0:
			b.WriteString(", no request migrated")
		case 1:
			b.WriteString(", 1 request migrated")
		default:
			fmt.Fprintf(&b, ", %d requests migrated", m)
		}
	}
	b.WriteString(".")
	if ya := yours.Autoscaler; ya != nil && a.Select != ya.Select {
		b.WriteString(" Not in the manifests: the simulation drained " + selectPhrase(a.Select) + " (autoscaler.select, yours " +
			selectPhrase(ya.Select) + "); an HPA cannot say which pods go first, Kubernetes chooses them (controller.kubernetes.io/pod-deletion-cost can steer it).")
	}
	return &Recommendation{Label: best.Label, ScenarioID: best.ScenarioID, RunID: best.RunID, ScaleIn: best.ScaleIn,
		Reason: b.String(), Autoscaler: best.Autoscaler, MigrationLimit: best.MigrationLimit}, ""
}

func targetPhrase(a *sim.Autoscaler) string {
	if a.Metric == sim.MetricKVUsage {
		return "target KV usage " + formatFloat(roundSignificant(a.Target, 3)) + " per worker"
	}
	return "target " + formatFloat(roundSignificant(a.Target, 3)) + " requests per worker"
}

func windowPhrase(ms float64) string {
	if ms == 0 {
		return "no scale-down window"
	}
	return "a " + roundedMS(ms) + " scale-down window"
}

// scaleDownPhrase names the scale-down limit: the behavior's policies, or the step limit.
func scaleDownPhrase(a *sim.Autoscaler) string {
	if ps := a.ScaleDownPolicies(); ps != nil {
		return PolicyPhrase(ps)
	}
	return stepPhrase(a.ScaleDownStep())
}

func stepPhrase(n *int) string {
	if n == nil {
		return "any number of workers a step"
	}
	return Workers(*n) + " a step"
}

func selectPhrase(sel string) string {
	switch sel {
	case sim.SelectHighestID:
		return "highest id first"
	case sim.SelectLeastLoaded:
		return "least loaded first"
	case sim.SelectLeastCached:
		return "least cached first"
	}
	return sel
}

func gracePhrase(g *float64) string {
	if g == nil {
		return "no grace"
	}
	return "grace " + roundedMS(*g)
}

func migrationPhrase(m int) string {
	if m == 0 {
		return "no migration"
	}
	return fmt.Sprintf("migration limit %d", m)
}

// savedPhrase is "31 % fewer GPU-hours than a fixed fleet of 24 workers" (or "more").
func savedPhrase(pct *float64, than string) string {
	if pct == nil {
		return "not comparable with the GPU-hours " + than
	}
	word, v := "fewer", *pct
	if v < 0 {
		word, v = "more", -v
	}
	return percent(v) + " " + word + " " + than
}

// percent rounds to a whole percent, or to one decimal below 1 %.
func percent(v float64) string {
	if v < 1 && v > 0 {
		return formatFloat(math.Round(v*10)/10) + " %"
	}
	return formatFloat(math.Round(v)) + " %"
}

// roundedMS is a duration to two significant digits, in s or ms (FormatMS).
func roundedMS(ms float64) string { return FormatMS(roundSignificant(ms, 2)) }

func limitPhrase(lim *float64) string {
	if lim == nil {
		return ""
	}
	return " (limit " + FormatMS(*lim) + ")"
}
