package whatif

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
)

// A capacity plan (issue 27), goal.capacity: the highest steady request rate per worker that
// keeps the scenario's SLO attainment at or above a goal, for the scenario's own request mix on
// a small fixed fleet with its timing, cache and routing. Each probe is the scenario at one
// rate; the search brackets the answer by factors of 4, then splits the bracket geometrically
// until its ends are within 2 % of each other. Probes are named by their rate and fleet only, so
// the same mix, timing and routing give the same probe runs, which the runner reuses.

// CapacityGoal is goal.capacity. Zero values take the defaults.
type CapacityGoal struct {
	// MinAttainment is the share of requests that must meet the scenario's slo (default 0.99).
	MinAttainment float64 `json:"min_attainment"`
	// Workers is the probes' fixed fleet (default the scenario's workers, at most 4).
	Workers int `json:"workers"`
	// DurationMS is how long requests arrive at the probe's rate (default 5 minutes).
	DurationMS float64 `json:"duration_ms"`
}

// Capacity plan defaults and limits.
const (
	DefaultCapacityMinAttainment = 0.99
	DefaultCapacityWorkers       = 4
	DefaultCapacityDurationMS    = 300000
	DefaultCapacityMaxRuns       = 12
	// capacityPrecision: the search stops when the lowest rate that fails is within 2 % of the
	// highest that meets the goal.
	capacityPrecision = 1.02
	// capacityProbes is how many rates one round simulates at once. It is fixed, not the
	// runner's slot count, so the result does not depend on the slots.
	capacityProbes         = 2
	capacityRateDigits     = 4 // significant digits of a probed rate: stable names and ids
	maxCapacityWorkers     = 64
	maxCapacityDurationMS  = 24 * 3600 * 1000.0
	maxCapacityRequests    = 20000 // a probe's requests at most (sessions: this ÷ turns), whatever the duration
	minCapacityRatePerS    = 1e-3
	maxCapacityRatePerS    = 1e6
	capacityBracketFactor  = 4
	defaultCapacityGuessPS = 10 // requests/s per worker when the timing gives no estimate
)

// CapacityPoint is one probe: a rate per worker and the attainment its run reached.
type CapacityPoint struct {
	RatePerWorker float64  `json:"rate_per_worker_per_s"`
	Attainment    *float64 `json:"attainment"`
	Feasible      bool     `json:"feasible"`
	ScenarioID    string   `json:"scenario_id"`
	RunID         string   `json:"run_id,omitempty"`
	Status        string   `json:"status"`
	Error         string   `json:"error,omitempty"`
}

// CapacityResult is a capacity plan's answer: the highest probed rate per worker that met the
// goal and the lowest that did not (nil where none did or none failed), the curve of every
// probe by rate, and the answer in words.
type CapacityResult struct {
	MinAttainment   float64         `json:"min_attainment"`
	Workers         int             `json:"workers"`
	DurationMS      float64         `json:"duration_ms"`
	TTFTMS          *float64        `json:"ttft_ms"`
	TPOTMS          *float64        `json:"tpot_ms"`
	RatePerWorker   *float64        `json:"rate_per_worker_per_s"`
	Attainment      *float64        `json:"attainment"`
	AboveRate       *float64        `json:"above_rate_per_worker_per_s"`
	AboveAttainment *float64        `json:"above_attainment"`
	Converged       bool            `json:"converged"`
	Curve           []CapacityPoint `json:"curve"`
	Answer          string          `json:"answer"`
}

// normalizeCapacity fills a capacity plan's defaults and checks it against the base scenario:
// an slo to judge by and a workload whose mix can be replayed at any rate.
func normalizeCapacity(base *sim.Scenario, req Request) (Request, error) {
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	g := req.Goal
	c := *g.Capacity
	if g.Remove != 0 || g.StartMS != 0 || g.Tune != "" || g.BaselineWorkers != 0 {
		add("goal", "a capacity plan asks only goal.capacity; leave out goal.remove, goal.start_ms, goal.tune and goal.baseline_workers")
	}
	if c.MinAttainment == 0 {
		c.MinAttainment = DefaultCapacityMinAttainment
	} else if math.IsNaN(c.MinAttainment) || c.MinAttainment < 0 || c.MinAttainment > 1 {
		add("goal.capacity.min_attainment", "must be a share of requests above 0 and at most 1, such as 0.99 for 99 %% (got %v)", c.MinAttainment)
	}
	if c.Workers == 0 {
		c.Workers = min(base.Fleet.Workers, DefaultCapacityWorkers)
	} else if c.Workers < 1 || c.Workers > maxCapacityWorkers {
		add("goal.capacity.workers", "must be between 1 and %d: the fixed fleet the probes run on (got %d)", maxCapacityWorkers, c.Workers)
	}
	if c.DurationMS == 0 {
		c.DurationMS = DefaultCapacityDurationMS
	} else if math.IsNaN(c.DurationMS) || c.DurationMS < 0 || c.DurationMS > maxCapacityDurationMS {
		add("goal.capacity.duration_ms", "must be a positive number of ms up to %s: how long requests arrive at each probed rate (got %v)", FormatMS(maxCapacityDurationMS), c.DurationMS)
	}
	if base.SLO == nil {
		add("goal.capacity", `needs a scenario with an slo, which says what a request must meet: add "slo": {"ttft_ms": 3000, "tpot_ms": 100} (either limit may be left out)`)
	}
	switch base.Workload.Type {
	case sim.WorkloadSessions, sim.WorkloadRequests:
	default:
		add("goal.capacity", "needs a sessions or scripted requests workload, whose mix is replayed at each probed rate; replaying a trace's rows at a steady rate is not built yet (got a %s workload)", base.Workload.Type)
	}
	con := req.Constraints
	if con.TTFTP99MS != nil || con.E2EP99MS != nil || con.MaxKilled != nil || con.MinAttainment != nil {
		add("constraints", "a capacity plan's only limit is goal.capacity.min_attainment with the scenario's slo; leave constraints out")
	}
	s := req.Search
	if s.MaxRuns == 0 {
		s.MaxRuns = DefaultCapacityMaxRuns
	} else if s.MaxRuns < 2 || s.MaxRuns > maxPlanRunsLimit {
		add("search.max_runs", "must be between 2 and %d (got %d)", maxPlanRunsLimit, s.MaxRuns)
	}
	if !reflect.DeepEqual(s, Search{MaxRuns: s.MaxRuns}) {
		add("search", "a capacity plan takes only search.max_runs; leave the other search fields out")
	}
	if len(errs) > 0 {
		return req, &sim.ValidationError{Errors: errs}
	}
	g.Capacity = &c
	return Request{Goal: g, Search: Search{MaxRuns: s.MaxRuns}}, nil
}

// capacitySearch is one capacity plan in progress.
type capacitySearch struct {
	*planner
	goal   CapacityGoal
	probes map[float64]*Candidate // the probes of the rounds the search reached, by rate per worker
	made   map[float64]*Candidate // every probe made, also those started ahead of need
	// fill are runs a diagnose plan will ask for after the search: started while a slot would
	// otherwise idle, before any probe the search may not reach.
	fill []*Candidate
}

func capacity(ctx context.Context, r Runner, base *sim.Scenario, req Request) (*Result, error) {
	p := &planner{runner: r, base: base, req: req, memo: map[string]Outcome{}}
	defer p.dropAllAhead()
	cs := newCapacitySearch(p, *req.Goal.Capacity)
	res := &Result{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search, Candidates: []Candidate{}}
	notes, err := cs.search(ctx, req.Search.MaxRuns)
	if err != nil {
		return nil, err
	}
	res.Capacity = cs.result()
	res.Runs, res.Reused, res.Notes = cs.runs, cs.reused, notes
	res.Reason = res.Capacity.Answer
	return res, nil
}

func newCapacitySearch(p *planner, g CapacityGoal) *capacitySearch {
	return &capacitySearch{planner: p, goal: g, probes: map[float64]*Candidate{}, made: map[float64]*Candidate{}}
}

// search probes rates until the answer is bracketed to 2 % or maxRuns runs of the planner are
// spent; it returns notes on why it stopped early.
//
// The search is a sequence of rounds, each a function of the outcomes of the rounds before it
// (walk). On a runner that cannot run ahead of need each round is run in one batch once the
// one before has ended. On an AheadRunner the probes run one at a time on every free slot: the
// unfinished probes of the round the search has reached first, then a diagnose plan's other
// runs, then the probes of the rounds it may reach next, likeliest first (ahead); a probe no
// outcome can reach any more is cancelled. Either way the rounds, and so the probes used, the
// runs counted and the result, are the same.
func (cs *capacitySearch) search(ctx context.Context, maxRuns int) ([]string, error) {
	slots := cs.aheadSlots()
	for {
		w := cs.walk(maxRuns, cs.verdict)
		if w.done {
			return cs.commit(ctx, w)
		}
		open := w.open(cs.verdict)
		if slots == 0 {
			round := make([]*Candidate, len(open))
			for i, rate := range open {
				round[i] = cs.probe(rate)
			}
			if err := cs.runBatch(ctx, round); err != nil {
				return nil, err
			}
			continue
		}
		for _, rate := range open {
			if _, _, err := cs.aheadOutcome(cs.probe(rate).ScenarioID); err != nil {
				return nil, err // the runner failed a probe the search needs
			}
		}
		cs.schedule(ctx, maxRuns, slots)
		if err := cs.awaitAhead(ctx); err != nil {
			return nil, err
		}
	}
}

// commit uses the probes of every round reached: it counts their runs and fills in their
// outcomes, in the order of the rounds.
func (cs *capacitySearch) commit(ctx context.Context, w capacityWalk) ([]string, error) {
	var used []*Candidate
	for _, round := range w.rounds {
		for _, rate := range round {
			c := cs.probe(rate)
			cs.probes[rate] = c
			used = append(used, c)
		}
	}
	if err := cs.runBatch(ctx, used); err != nil {
		return nil, err
	}
	var notes []string
	if w.note != "" {
		notes = append(notes, w.note)
	}
	if w.failed {
		failed := cs.failed()
		notes = append(notes, fmt.Sprintf("the probe at %s requests/s per worker %s: %s", formatFloat(failed.RatePerWorker), failed.Status, failed.Error))
	}
	return notes, nil
}

// guess is the first rate per worker probed: a quarter of what decoding alone allows a worker
// at full batch (max_num_seqs requests a pass, each emitting its output tokens), rounded.
func (cs *capacitySearch) guess() float64 {
	f := cs.base.Fleet
	passMS := f.Timing.DecodeMS + f.Timing.DecodeMSPerSeq*float64(f.MaxNumSeqs)
	out := meanOutputTokens(cs.base)
	if passMS <= 0 || out <= 0 {
		return defaultCapacityGuessPS
	}
	return clampRate(float64(f.MaxNumSeqs) * 1000 / (passMS * out) / capacityBracketFactor)
}

func meanOutputTokens(s *sim.Scenario) float64 {
	switch s.Workload.Type {
	case sim.WorkloadSessions:
		return float64(s.Workload.Sessions.OutputTokens)
	case sim.WorkloadRequests:
		total := 0
		for _, r := range s.Workload.Requests {
			total += r.OutputTokens
		}
		if n := len(s.Workload.Requests); n > 0 {
			return float64(total) / float64(n)
		}
	}
	return 0
}

func clampRate(r float64) float64 {
	return roundSignificant(min(max(r, minCapacityRatePerS), maxCapacityRatePerS), capacityRateDigits)
}

// probe is the candidate of one rate per worker, made once.
func (cs *capacitySearch) probe(rate float64) *Candidate {
	if c, ok := cs.made[rate]; ok {
		return c
	}
	sc := capacityScenario(cs.base, cs.goal, rate)
	c := &Candidate{Label: formatFloat(rate) + " requests/s per worker", Stage: "capacity", Selection: "none",
		ScaleIn: sc.ScaleIn, ScenarioID: sc.ID(), scenario: sc, Violations: []string{}}
	cs.made[rate] = c
	return c
}

// capacityScenario is the base scenario's mix arriving at rate requests/s per worker on a fixed
// fleet of goal.Workers: no scale-in, no autoscaler, no per-request rows. Its name says only the
// rate and the fleet, so scenarios with the same mix, timing and routing share their probes.
//
// Sessions keep their shape (turns, tokens, prefix groups, think time) and start at rate ×
// workers ÷ turns sessions/s for the duration. Scripted requests are replayed in order, evenly
// spaced at rate × workers requests/s, keeping their blocks (so copies share their prefixes as
// the script does) but not route_to.
func capacityScenario(base *sim.Scenario, g CapacityGoal, rate float64) *sim.Scenario {
	sc := *base
	sc.Name = "capacity probe: " + formatFloat(rate) + " requests/s per worker on " + Workers(g.Workers)
	sc.Fleet.Workers = g.Workers
	sc.Autoscaler = nil
	sc.ScaleIn = []sim.ScaleInAction{}
	sc.Report = sim.ReportOptions{}
	total := rate * float64(g.Workers) // requests/s
	switch base.Workload.Type {
	case sim.WorkloadSessions:
		ss := *base.Workload.Sessions
		ss.RateStages = nil
		ss.RatePerS = total / float64(ss.Turns)
		// Arrivals are capped as a scripted probe's are (finding L2 of 2026-12c: a day-long
		// probe, or one at a rate of a million, needed terabytes): past the cap the probe
		// lasts cap ÷ rate instead of the duration, which at such rates is still many
		// arrivals per worker.
		ss.Count = min(max(1, int(math.Ceil(ss.RatePerS*g.DurationMS/1000))), max(1, maxCapacityRequests/max(1, ss.Turns)))
		sc.Workload = sim.Workload{Type: sim.WorkloadSessions, Sessions: &ss}
	case sim.WorkloadRequests:
		mix := base.Workload.Requests
		n := min(max(1, int(math.Ceil(total*g.DurationMS/1000))), maxCapacityRequests)
		gapMS := 1000 / total
		reqs := make([]sim.ScriptedRequest, n)
		for k := range reqs {
			r := mix[k%len(mix)]
			r.ID = "c" + strconv.Itoa(k)
			r.AtMS = float64(k) * gapMS
			r.RouteTo = nil
			reqs[k] = r
		}
		sc.Workload = sim.Workload{Type: sim.WorkloadRequests, Requests: reqs}
	}
	return &sc
}

// points are the probes run so far, by rate.
func (cs *capacitySearch) points() []CapacityPoint {
	rates := slices.Sorted(func(yield func(float64) bool) {
		for r := range cs.probes {
			if !yield(r) {
				return
			}
		}
	})
	var out []CapacityPoint
	for _, rate := range rates {
		c := cs.probes[rate]
		if c.Status == "" {
			continue // not run (over the budget)
		}
		p := CapacityPoint{RatePerWorker: rate, ScenarioID: c.ScenarioID, RunID: c.RunID, Status: c.Status, Error: c.Error}
		if c.Status == StatusDone {
			p.Attainment = figure(c.Headline, sim.HeadlineSLOAttainment)
			p.Feasible = p.Attainment != nil && *p.Attainment >= cs.goal.MinAttainment
		}
		out = append(out, p)
	}
	return out
}

func (cs *capacitySearch) failed() *CapacityPoint {
	for _, p := range cs.points() {
		if p.Status != StatusDone {
			return &p
		}
	}
	return nil
}

// bounds are the highest rate that met the goal below the lowest that did not (lo), and that
// lowest failing rate (hi); 0 where there is none.
func (cs *capacitySearch) bounds() (lo, hi float64) {
	pts := cs.points()
	for _, p := range pts {
		if !p.Feasible {
			hi = p.RatePerWorker
			break
		}
	}
	for _, p := range pts {
		if p.Feasible && (hi == 0 || p.RatePerWorker < hi) {
			lo = p.RatePerWorker
		}
	}
	return lo, hi
}

// result is the answer from the probes run.
func (cs *capacitySearch) result() *CapacityResult {
	slo := cs.base.SLO
	res := &CapacityResult{MinAttainment: cs.goal.MinAttainment, Workers: cs.goal.Workers, DurationMS: cs.goal.DurationMS,
		TTFTMS: slo.TTFTMS, TPOTMS: slo.TPOTMS, Curve: cs.points()}
	if res.Curve == nil {
		res.Curve = []CapacityPoint{}
	}
	lo, hi := cs.bounds()
	for _, p := range res.Curve {
		switch p.RatePerWorker {
		case lo:
			res.RatePerWorker, res.Attainment = &p.RatePerWorker, p.Attainment
		case hi:
			res.AboveRate, res.AboveAttainment = &p.RatePerWorker, p.Attainment
		}
	}
	res.Converged = lo != 0 && hi != 0 && hi/lo <= capacityPrecision
	res.Answer = capacityAnswer(res)
	return res
}

// capacityAnswer says the result in words: "One worker serves 4.1 requests/s within TTFT ≤ 3 s
// and TPOT ≤ 100 ms for 99.4 % of requests (goal 99 %); at 4.18/s attainment falls to 93 %."
func capacityAnswer(r *CapacityResult) string {
	limits := sim.FormatSLO(r.TTFTMS, r.TPOTMS)
	rate := func(v float64) string { return formatFloat(roundSignificant(v, 3)) }
	share := func(v *float64) string {
		if v == nil {
			return "no request judged"
		}
		return shareNotRoundedUp(*v)
	}
	goal := FormatShare(r.MinAttainment)
	switch {
	case r.RatePerWorker == nil && r.AboveRate == nil:
		return "No probe finished, so the capacity is unknown."
	case r.RatePerWorker == nil:
		return fmt.Sprintf("Even at %s requests/s per worker only %s of requests met %s (goal %s): a request alone may miss the SLO on this timing.",
			rate(*r.AboveRate), share(r.AboveAttainment), limits, goal)
	}
	s := fmt.Sprintf("One worker serves %s requests/s within %s for %s of requests (goal %s)", rate(*r.RatePerWorker), limits, share(r.Attainment), goal)
	if r.AboveRate == nil {
		return s + "; no probed rate failed, so it may serve more."
	}
	s += fmt.Sprintf("; at %s/s attainment falls to %s", rate(*r.AboveRate), share(r.AboveAttainment))
	if !r.Converged {
		s += " (the search stopped before its ends were within 2 %)"
	}
	return s + "."
}
