package whatif

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// judge checks the constraints.
func (p *planner) judge(c *Candidate) {
	c.Violations = []string{}
	if c.Status != StatusDone {
		msg := "the run " + c.Status
		if c.Error != "" {
			msg += ": " + c.Error
		}
		c.Violations = append(c.Violations, msg)
		c.Feasible = false
		return
	}
	c.Violations, _ = constraintViolations(c.Headline, p.req.Constraints)
	if c.Stage != StageBaseline && figure(c.Headline, sim.HeadlineLatestRemovalMS) == nil {
		c.Violations = append(c.Violations, "no drained worker was removed before the run ended")
	}
	c.Feasible = len(c.Violations) == 0
}

// constraintViolations says which limits a finished run breaks, and by how much in all: the sum
// over the broken limits of the excess relative to the limit (a measure of how close it came).
func constraintViolations(h []sim.Figure, con Constraints) (out []string, excess float64) {
	out = []string{}
	latency := func(key, name, none string, lim *float64) {
		if lim == nil {
			return
		}
		v := figure(h, key)
		switch {
		case v == nil:
			out = append(out, "no request "+none+", so "+name+" cannot meet its limit")
			excess++
		case *v > *lim:
			out = append(out, fmt.Sprintf("%s %s is above the limit of %s", name, FormatMS(*v), FormatMS(*lim)))
			excess += (*v - *lim) / *lim
		}
	}
	latency(sim.HeadlineTTFTP99MS, "TTFT p99", "got a first token", con.TTFTP99MS)
	latency(sim.HeadlineE2EP99MS, "end-to-end p99", "finished", con.E2EP99MS)
	if con.MinAttainment != nil {
		miss, by := attainmentViolation(figure(h, sim.HeadlineSLOAttainment), *con.MinAttainment)
		if miss != "" {
			out = append(out, miss)
			excess += by
		}
	}
	if k := figure(h, sim.HeadlineRequestsKilled); k != nil && *k > float64(*con.MaxKilled) {
		out = append(out, fmt.Sprintf("%s; the limit is %d", requestsKilled(*k), *con.MaxKilled))
		excess += (*k - float64(*con.MaxKilled)) / float64(*con.MaxKilled+1)
	}
	return out, excess
}

// rank orders candidates: feasible first, then the earliest latest-removal deadline, the lower
// TTFT p99, fewer worker-seconds, and finally the label, so the order is total.
func rank(cs []Candidate) {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		if a.Feasible != b.Feasible {
			if a.Feasible {
				return -1
			}
			return 1
		}
		for _, key := range []string{sim.HeadlineLatestRemovalMS, sim.HeadlineTTFTP99MS, sim.HeadlineWorkerSeconds} {
			if c := comparePtr(figure(a.Headline, key), figure(b.Headline, key)); c != 0 {
				return c
			}
		}
		// Same outcome: the longer grace (none is longest) leaves more margin for a drain
		// slower than simulated.
		if c := compareGrace(a.GraceMS, b.GraceMS); c != 0 {
			return c
		}
		return strings.Compare(a.Label, b.Label)
	})
	for i := range cs {
		cs[i].Rank = i + 1
	}
}

// compareGrace orders the longer grace first, no grace before any.
func compareGrace(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmp.Compare(*b, *a)
}

// comparePtr orders values ascending with missing ones last.
func comparePtr(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// markPareto flags the feasible runs no other feasible run beats on both the latest removal
// deadline and TTFT p99 (among all finished runs when none is feasible): the trade-offs worth
// choosing between.
func markPareto(cs []Candidate) {
	anyFeasible := slices.ContainsFunc(cs, func(c Candidate) bool { return c.Feasible })
	eligible := func(c Candidate) bool {
		return c.Status == StatusDone && (c.Feasible || !anyFeasible) &&
			figure(c.Headline, sim.HeadlineLatestRemovalMS) != nil && figure(c.Headline, sim.HeadlineTTFTP99MS) != nil
	}
	for i := range cs {
		if !eligible(cs[i]) {
			continue
		}
		ai, at := figure(cs[i].Headline, sim.HeadlineLatestRemovalMS), figure(cs[i].Headline, sim.HeadlineTTFTP99MS)
		dominated := false
		for j := range cs {
			if j == i || !eligible(cs[j]) {
				continue
			}
			bj, bt := figure(cs[j].Headline, sim.HeadlineLatestRemovalMS), figure(cs[j].Headline, sim.HeadlineTTFTP99MS)
			if *bj <= *ai && *bt <= *at && (*bj < *ai || *bt < *at) {
				dominated = true
				break
			}
		}
		cs[i].Pareto = !dominated
	}
}

// recommend picks the first feasible candidate of the ranked list and says why, or says why
// nothing is recommended.
func recommend(ranked []Candidate, req Request) (*Recommendation, string) {
	feasible := 0
	for _, c := range ranked {
		if c.Feasible {
			feasible++
		}
	}
	if feasible == 0 {
		if len(ranked) == 0 {
			return nil, "no candidate was simulated; raise search.max_runs or widen the search"
		}
		best := ranked[0]
		why := strings.Join(best.Violations, "; ")
		return nil, fmt.Sprintf("none of the %d candidates meets the limits; the closest, %q, fails because %s. Relax the limits (constraints), start later, or remove fewer workers", len(ranked), best.Label, why)
	}
	best := ranked[0]
	latest := figure(best.Headline, sim.HeadlineLatestRemovalMS)
	var facts []string
	if latest != nil {
		facts = append(facts, "the last drained worker is gone at "+FormatMS(*latest))
	}
	if t := figure(best.Headline, sim.HeadlineTTFTP99MS); t != nil {
		facts = append(facts, "TTFT p99 "+FormatMS(*t))
	}
	if k := figure(best.Headline, sim.HeadlineRequestsKilled); k != nil {
		if *k == 0 {
			facts = append(facts, "no request killed")
		} else {
			facts = append(facts, requestsKilled(*k))
		}
	}
	reason := fmt.Sprintf("Drain %s, starting at %s: %s. It has the earliest latest-removal deadline of the %s out of %d.",
		best.Label, FormatMS(req.Goal.StartMS), strings.Join(facts, ", "), count(feasible, "feasible candidate"), len(ranked))
	return &Recommendation{Label: best.Label, ScenarioID: best.ScenarioID, RunID: best.RunID, ScaleIn: best.ScaleIn, Reason: reason}, ""
}
