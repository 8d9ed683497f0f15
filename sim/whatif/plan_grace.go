package whatif

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"

	"github.com/scalein-planner/scalein/sim"
)

// graceSeeds are the best explored candidates without grace whose kills are within the limit
// and whose workers took time to drain (a grace can make that sooner), at most BisectTop.
func (p *planner) graceSeeds(explore []*Candidate) []Candidate {
	maxKilled := float64(*p.req.Constraints.MaxKilled)
	var seeds []Candidate
	for _, c := range explore {
		if c.GraceMS != nil || c.Status != StatusDone {
			continue
		}
		killed, latest := figure(c.Headline, sim.HeadlineRequestsKilled), figure(c.Headline, sim.HeadlineLatestRemovalMS)
		if killed == nil || *killed > maxKilled || latest == nil || *latest <= p.req.Goal.StartMS {
			continue
		}
		if total := figure(c.Headline, sim.HeadlineTotalDrainMS); total != nil && *total <= 0 {
			continue // nothing to shorten
		}
		p.judge(c)
		seeds = append(seeds, *c)
	}
	rank(seeds)
	return seeds[:min(len(seeds), p.req.Search.BisectTop)]
}

// graceSearch looks for the smallest grace that keeps kills within the limit, for the best
// candidates without grace (graceSeeds). Kills fall as grace grows (a longer grace forces fewer
// removals), so a search between 0 and the natural drain time finds it. The searches run
// independently, each round of each starting as soon as its previous round ends; each has a
// fixed share of the remaining run budget and of search.grace_probes, so none depends on how
// fast another goes.
func (p *planner) graceSearch(ctx context.Context, explore []*Candidate) ([]*Candidate, []string, error) {
	s := p.req.Search
	var searches []*graceSearch
	for _, sd := range p.graceSeeds(explore) {
		// No worker drains longer than the whole drain of every worker together, nor than the
		// time from the start to the last removal; a grace that long forces nothing.
		longest := *figure(sd.Headline, sim.HeadlineLatestRemovalMS) - p.req.Goal.StartMS
		if total := figure(sd.Headline, sim.HeadlineTotalDrainMS); total != nil {
			longest = min(longest, *total)
		}
		if longest <= 0 {
			continue // every drained worker left at once: no grace can make it sooner
		}
		hi := math.Ceil(longest/s.GraceStepMS) * s.GraceStepMS
		searches = append(searches, &graceSearch{p: p, seed: sd, lo: -s.GraceStepMS, hi: hi})
	}
	if len(searches) == 0 {
		return nil, nil, nil
	}
	p.mu.Lock()
	budget := s.MaxRuns - p.runs
	p.mu.Unlock()
	n := len(searches)
	g, gctx := errgroup.WithContext(ctx)
	for i, sr := range searches {
		sr.budget = budget / n
		if i < budget%n {
			sr.budget++
		}
		sr.probes = max(1, s.GraceProbes/n)
		if i < s.GraceProbes%n && s.GraceProbes > n {
			sr.probes++
		}
		g.Go(func() error { return sr.run(gctx) })
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var out []*Candidate
	dropped := 0
	for _, sr := range searches {
		out = append(out, sr.ran...)
		dropped += sr.dropped
	}
	var notes []string
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("the run budget (search.max_runs %d) cut short %d of the %d grace search(es); the grace found may not be the smallest", s.MaxRuns, dropped, n))
	}
	return out, notes, nil
}

// graceSearch is the search for one seed's smallest safe grace, on a grid of grace_step_ms:
// lo kills too many (or is the untested -step below 0), hi kills within the limit (at first the
// untested longest drain, where a grace forces nothing, which is as safe as no grace).
type graceSearch struct {
	p       *planner
	seed    Candidate
	lo, hi  float64
	hiRan   bool
	budget  int // runs this search may still start
	probes  int // graces per round
	ran     []*Candidate
	dropped int // 1 when the budget ran out before the search converged
}

// run narrows the interval round by round: probes graces split it into probes+1 parts, and it
// becomes the part between the largest unsafe and the smallest safe grace. When it is one step
// wide (or the rounds or budget run out), the smallest safe grace found is run, if it was not,
// so the plan lists it.
func (sr *graceSearch) run(ctx context.Context) error {
	step := sr.p.req.Search.GraceStepMS
	for round := 0; round < maxBisectRounds && sr.hi-sr.lo > step; round++ {
		k := min(sr.probes, sr.budget)
		if !sr.hiRan {
			k = min(k, sr.budget-1) // keep one run for the grace found
		}
		graces := probeGraces(sr.lo, sr.hi, step, k)
		if len(graces) == 0 {
			sr.dropped = 1
			break
		}
		batch := make([]*Candidate, len(graces))
		for i, g := range graces {
			batch[i] = sr.withGrace(g)
		}
		if err := sr.runRound(ctx, batch); err != nil {
			return err
		}
	}
	if !sr.hiRan && sr.budget > 0 {
		c := sr.withGrace(sr.hi)
		if err := sr.runRound(ctx, []*Candidate{c}); err != nil {
			return err
		}
	}
	return nil
}

// runRound runs a round's candidates and narrows the interval by their outcomes.
func (sr *graceSearch) runRound(ctx context.Context, batch []*Candidate) error {
	for _, c := range batch {
		if !sr.p.known(c.ScenarioID) {
			sr.budget--
		}
	}
	if err := sr.p.runBatch(ctx, batch); err != nil {
		return err
	}
	maxKilled := float64(*sr.p.req.Constraints.MaxKilled)
	newHi, newHiRan := sr.hi, sr.hiRan
	for _, c := range batch {
		killed := figure(c.Headline, sim.HeadlineRequestsKilled)
		safe := c.Status == StatusDone && killed != nil && *killed <= maxKilled
		if safe && *c.GraceMS <= newHi {
			newHi, newHiRan = *c.GraceMS, true
		}
	}
	for _, c := range batch {
		killed := figure(c.Headline, sim.HeadlineRequestsKilled)
		safe := c.Status == StatusDone && killed != nil && *killed <= maxKilled
		if !safe && *c.GraceMS > sr.lo && *c.GraceMS < newHi {
			sr.lo = *c.GraceMS
		}
	}
	sr.hi, sr.hiRan = newHi, newHiRan
	sr.ran = append(sr.ran, batch...)
	return nil
}

// probeGraces splits (lo, hi) into k+1 near-equal parts on the grid of step and returns the
// k inner points (fewer when the interval has fewer grid points), ascending.
func probeGraces(lo, hi, step float64, k int) []float64 {
	var out []float64
	for j := 1; j <= k; j++ {
		g := lo + math.Floor(float64(j)*(hi-lo)/float64(k+1)/step)*step
		g = max(g, lo+step)
		if g >= hi || (len(out) > 0 && g <= out[len(out)-1]) {
			continue
		}
		out = append(out, g)
	}
	return out
}

// withGrace is the seed's schedule with this grace.
func (sr *graceSearch) withGrace(g float64) *Candidate {
	sd, p := sr.seed, sr.p
	ids := workerSet(sd)
	sched := p.schedule(sd.Selection, ids, sd.Waves, sd.GapMS, &g)
	c := p.candidate(label(sd.Selection, len(ids), sd.Waves, p.req.Goal.Remove, sd.GapMS, &g), StageGrace, sched)
	c.Selection, c.Waves, c.GapMS, c.GraceMS = sd.Selection, sd.Waves, sd.GapMS, &g
	return c
}

// workerSet returns the explicit worker ids of a set candidate, or nil for a policy.
func workerSet(c Candidate) []int {
	if !isSet(c.Selection) {
		return nil
	}
	var ids []int
	for _, a := range c.ScaleIn {
		ids = append(ids, a.Workers...)
	}
	return ids
}
