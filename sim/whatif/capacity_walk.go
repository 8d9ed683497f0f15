package whatif

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim"
)

// The capacity search as a function of its probes' verdicts (issue 35): walk replays the
// rounds from the first, so the search can tell which rounds it has reached whatever order
// the probes finished in, and which rounds it would reach for each outcome of the probes
// still running.

// capacityVerdict is what a probe's outcome says to the search.
type capacityVerdict uint8

const (
	verdictUnknown    capacityVerdict = iota // not run, or not ended
	verdictFeasible                          // done, attainment at or above the goal
	verdictInfeasible                        // done, attainment below the goal or none judged
	verdictBroken                            // failed or cancelled: the search stops
)

// verdictOf reads an outcome against the goal.
func (cs *capacitySearch) verdictOf(o Outcome) capacityVerdict {
	if o.Status != StatusDone {
		return verdictBroken
	}
	if a := figure(o.Headline, sim.HeadlineSLOAttainment); a != nil && *a >= cs.goal.MinAttainment {
		return verdictFeasible
	}
	return verdictInfeasible
}

// verdict is the verdict of the probe at rate from the runs the plan has used or has started
// ahead of need.
func (cs *capacitySearch) verdict(rate float64) capacityVerdict {
	c, made := cs.made[rate]
	if !made {
		return verdictUnknown // never run: its scenario is made before it is run
	}
	id := c.ScenarioID
	cs.mu.Lock()
	o, ok := cs.memo[id]
	cs.mu.Unlock()
	if !ok {
		if o, ok, _ = cs.aheadOutcome(id); !ok {
			return verdictUnknown
		}
	}
	return cs.verdictOf(o)
}

// capacityWalk is where the search stands: the rounds it has reached, every one but the last
// with every verdict known. done: the search has ended, after the last round; note says why
// it stopped early, failed that a probe of the last round failed.
type capacityWalk struct {
	rounds [][]float64
	done   bool
	note   string
	failed bool
}

// open are the probes of the last round whose verdicts are not known.
func (w capacityWalk) open(v func(float64) capacityVerdict) []float64 {
	var out []float64
	if len(w.rounds) > 0 {
		for _, r := range w.rounds[len(w.rounds)-1] {
			if v(r) == verdictUnknown {
				out = append(out, r)
			}
		}
	}
	return out
}

// walk replays the search over the verdicts: the first round probes the guess and a quarter of
// it; each next round is nextRatesOf the rates probed so far; the search ends when there is no
// next round, when a probe fails, or when maxRuns runs are spent (each probe is one run).
func (cs *capacitySearch) walk(maxRuns int, v func(float64) capacityVerdict) capacityWalk {
	var w capacityWalk
	seen := map[float64]capacityVerdict{}
	runs := 0
	next := []float64{clampRate(cs.guess() / capacityBracketFactor)}
	if g := cs.guess(); g != next[0] {
		next = append(next, g)
	}
	for len(next) > 0 {
		room := maxRuns - runs
		if room <= 0 {
			w.note = fmt.Sprintf("the search stopped at search.max_runs (%d) before its ends were within 2 %%", maxRuns)
			w.done = true
			return w
		}
		round := next[:min(len(next), room)]
		w.rounds = append(w.rounds, round)
		runs += len(round)
		for _, r := range round {
			seen[r] = v(r)
			if seen[r] == verdictUnknown {
				return w
			}
		}
		for _, r := range round {
			if seen[r] == verdictBroken {
				w.failed, w.done = true, true
				return w
			}
		}
		next, w.note = nextRatesOf(seen)
	}
	w.done = true
	return w
}

// boundsOf are the highest rate that met the goal below the lowest that did not (lo), and
// that lowest failing rate (hi); 0 where there is none.
func boundsOf(seen map[float64]capacityVerdict) (lo, hi float64) {
	rates := slices.Sorted(func(yield func(float64) bool) {
		for r := range seen {
			if !yield(r) {
				return
			}
		}
	})
	for _, r := range rates {
		if seen[r] == verdictInfeasible {
			hi = r
			break
		}
	}
	for _, r := range rates {
		if seen[r] == verdictFeasible && (hi == 0 || r < hi) {
			lo = r
		}
	}
	return lo, hi
}

// nextRatesOf are the rates of the next round after the rates seen: further out by factors of
// 4 until the answer is bracketed, then two rates splitting the bracket in three equal ratios;
// none once its ends are within 2 %. why says why the search stops early.
func nextRatesOf(seen map[float64]capacityVerdict) (rates []float64, why string) {
	lo, hi := boundsOf(seen)
	var cand []float64
	switch {
	case hi == 0:
		if lo >= maxCapacityRatePerS {
			return nil, fmt.Sprintf("every probe up to %s requests/s per worker met the goal; the search goes no higher", formatFloat(lo))
		}
		cand = []float64{lo * capacityBracketFactor, lo * capacityBracketFactor * capacityBracketFactor}
	case lo == 0:
		if hi <= minCapacityRatePerS {
			return nil, fmt.Sprintf("no probe down to %s requests/s per worker met the goal: a request alone may miss the SLO on this timing", formatFloat(hi))
		}
		cand = []float64{hi / capacityBracketFactor, hi / (capacityBracketFactor * capacityBracketFactor)}
	case hi/lo <= capacityPrecision:
		return nil, ""
	default:
		step := math.Pow(hi/lo, 1.0/(capacityProbes+1))
		for i := 1; i <= capacityProbes; i++ {
			cand = append(cand, lo*math.Pow(step, float64(i)))
		}
	}
	for _, r := range cand {
		r = clampRate(r)
		if _, probed := seen[r]; !probed && !slices.Contains(rates, r) {
			rates = append(rates, r)
		}
	}
	slices.Sort(rates)
	if len(rates) == 0 && hi != 0 && lo != 0 {
		return nil, fmt.Sprintf("the bracket %s–%s requests/s per worker cannot be split at %d significant digits", formatFloat(lo), formatFloat(hi), capacityRateDigits)
	}
	return rates, ""
}

// capacityLookahead is how many rounds past the one reached the search considers probes to
// start ahead of need. Each unknown verdict doubles the branches, so two rounds of two probes
// are at most 1 + 4 + 16 walks.
const capacityLookahead = 2

// fillWeight ranks a diagnose plan's other runs among the probes to start: below the probes
// the search surely reaches (weight 1), above those it reaches on some outcomes only.
const fillWeight = 0.9

// schedule keeps the slots busy: it cancels the probes started ahead of need that no outcome
// can reach any more, then starts, while fewer than slots runs are in flight, the heaviest
// of what is not started: the probes of the round reached (weight 1), the diagnose plan's
// other runs (fillWeight), then the probes of the rounds ahead, each weighted by the share
// of the outcomes of the unknown probes (taken as equally likely) under which the search
// reaches it.
func (cs *capacitySearch) schedule(ctx context.Context, maxRuns, slots int) {
	type want struct {
		weight float64
		depth  int // the fewest rounds past the one reached at which the search may probe it
	}
	wants := map[float64]*want{}
	reached := map[float64]bool{} // every rate of every round any outcome reaches
	var expand func(assumed map[float64]capacityVerdict, depth int, share float64)
	expand = func(assumed map[float64]capacityVerdict, depth int, share float64) {
		v := func(r float64) capacityVerdict {
			if x, ok := assumed[r]; ok {
				return x
			}
			return cs.verdict(r)
		}
		w := cs.walk(maxRuns, v)
		for _, round := range w.rounds {
			for _, r := range round {
				reached[r] = true
			}
		}
		if w.done {
			return
		}
		open := w.open(v)
		for _, r := range open {
			if wants[r] == nil {
				wants[r] = &want{depth: depth}
			}
			wants[r].weight += share
			wants[r].depth = min(wants[r].depth, depth)
		}
		if depth == capacityLookahead {
			return
		}
		n := 1 << len(open)
		for mask := range n {
			next := make(map[float64]capacityVerdict, len(assumed)+len(open))
			for r, x := range assumed {
				next[r] = x
			}
			for i, r := range open {
				next[r] = verdictFeasible
				if mask&(1<<i) != 0 {
					next[r] = verdictInfeasible
				}
			}
			expand(next, depth+1, share/float64(n))
		}
	}
	expand(map[float64]capacityVerdict{}, 0, 1)

	// Probes started ahead of need that no outcome reaches are cancelled.
	for r, c := range cs.made {
		if !reached[r] {
			cs.dropAhead(c.ScenarioID)
		}
	}

	type pick struct {
		rate   float64
		fill   *Candidate // a diagnose plan's run, or nil for a probe
		weight float64
		depth  int
	}
	var picks []pick
	for r, w := range wants {
		picks = append(picks, pick{rate: r, weight: w.weight, depth: w.depth})
	}
	for _, c := range cs.fill {
		picks = append(picks, pick{fill: c, weight: fillWeight, depth: 1})
	}
	slices.SortStableFunc(picks, func(a, b pick) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(a.depth, b.depth); c != 0 {
			return c
		}
		return cmp.Compare(a.rate, b.rate)
	})
	prebuilt := 0
	for _, pk := range picks {
		c := pk.fill
		if cs.inFlight() >= slots {
			// The slots are full: make the next probes now, while the runs go on, so that a
			// slot freed takes one at once (a probe of 20,000 scripted requests takes tens of
			// ms to build and hash).
			if c == nil && prebuilt < prebuildProbes {
				cs.probe(pk.rate)
				prebuilt++
			}
			continue
		}
		if c == nil {
			c = cs.probe(pk.rate)
		}
		cs.startAhead(ctx, c.scenario, c.ScenarioID)
	}
}

// prebuildProbes is how many probes not yet started schedule makes ahead while the slots are full.
const prebuildProbes = 2
