package whatif

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// Planner defaults (docs/planning.md explains each).
const (
	DefaultMaxPlanRuns = 64
	DefaultGapMS       = 30000
	DefaultBisectTop   = 3
	DefaultGraceStepMS = 1000
	maxBisectRounds    = 16
	maxPlanRunsLimit   = 1000
	maxSearchValues    = 20
)

// Selections beyond the simulator's own policies: worker sets the planner picks from a baseline
// run of the scenario without any scale-in.
const (
	SelectFewestPullsServed = "fewest_pulls_served" // peers pulled least from them: least pinning
	SelectLeastWork         = "least_work"          // fewest requests completed: least work in flight
)

var allSelections = []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached, SelectFewestPullsServed, SelectLeastWork}

// Goal is what the plan must achieve: drain exactly Remove workers, none before StartMS.
type Goal struct {
	Remove  int     `json:"remove"`
	StartMS float64 `json:"start_ms"`
}

// Constraints make a candidate feasible. MaxKilled defaults to 0; no TTFT limit by default.
type Constraints struct {
	TTFTP99MS *float64 `json:"ttft_p99_ms"`
	MaxKilled *int64   `json:"max_killed"`
}

// Search shapes the candidate space; zero values take the defaults (filled in by Normalize).
type Search struct {
	// Selections: simulator policies and baseline-chosen sets (see allSelections).
	Selections []string `json:"selections"`
	// Waves: how many waves to split the removal into; 1 is all at once, Remove is one by one.
	Waves []int `json:"waves"`
	// GapsMS: time between waves.
	GapsMS []float64 `json:"gaps_ms"`
	// GraceMS: fixed grace periods tried besides "no grace" in the first stage.
	GraceMS []float64 `json:"grace_ms"`
	// BisectGrace: search the smallest grace that keeps kills within the limit for the best
	// BisectTop candidates, to GraceStepMS.
	BisectGrace *bool   `json:"bisect_grace"`
	BisectTop   int     `json:"bisect_top"`
	GraceStepMS float64 `json:"grace_step_ms"`
	// Guard turns kvcr.reject_draining_sources on (true) or off in every candidate; nil leaves
	// the scenario's own setting.
	Guard   *bool `json:"guard"`
	MaxRuns int   `json:"max_runs"`
}

// Request is one planning question.
type Request struct {
	Goal        Goal        `json:"goal"`
	Constraints Constraints `json:"constraints"`
	Search      Search      `json:"search"`
}

// Candidate is one scale-in schedule and its run.
type Candidate struct {
	Label      string              `json:"label"`
	Selection  string              `json:"selection"`
	Waves      int                 `json:"waves"`
	GapMS      float64             `json:"gap_ms"`
	GraceMS    *float64            `json:"grace_ms"`
	Stage      string              `json:"stage"`
	ScaleIn    []sim.ScaleInAction `json:"scale_in"`
	ScenarioID string              `json:"scenario_id"`
	RunID      string              `json:"run_id,omitempty"`
	Status     string              `json:"status"`
	Error      string              `json:"error,omitempty"`
	Digest     string              `json:"digest,omitempty"`
	Feasible   bool                `json:"feasible"`
	Pareto     bool                `json:"pareto"`
	Rank       int                 `json:"rank"`
	Violations []string            `json:"violations"`
	Headline   []sim.Figure        `json:"headline"`

	scenario *sim.Scenario
}

// Stages of the search.
const (
	StageBaseline = "baseline"
	StageExplore  = "explore"
	StageGrace    = "grace search"
)

// Recommendation is the chosen candidate.
type Recommendation struct {
	Label      string              `json:"label"`
	ScenarioID string              `json:"scenario_id"`
	RunID      string              `json:"run_id,omitempty"`
	ScaleIn    []sim.ScaleInAction `json:"scale_in"`
	Reason     string              `json:"reason"`
}

// Result is the finished plan. Candidates are in rank order (1 = best).
type Result struct {
	Goal        Goal            `json:"goal"`
	Constraints Constraints     `json:"constraints"`
	Search      Search          `json:"search"`
	Baseline    *Candidate      `json:"baseline,omitempty"`
	Candidates  []Candidate     `json:"candidates"`
	Recommended *Recommendation `json:"recommended"`
	Reason      string          `json:"reason,omitempty"`
	Runs        int             `json:"runs"`
	Reused      int             `json:"reused"`
	Notes       []string        `json:"notes,omitempty"`
}

// Normalize fills the defaults and checks the request against the base scenario. Problems come
// back as a *sim.ValidationError with paths like "goal.remove" or "search.waves[1]".
func Normalize(base *sim.Scenario, req Request) (Request, error) {
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	g := req.Goal
	workers := base.Fleet.Workers
	switch {
	case g.Remove < 1:
		add("goal.remove", "must be at least 1: how many workers to drain (got %d)", g.Remove)
	case g.Remove > workers-1:
		add("goal.remove", "must leave at least one of the %d workers active: at most %d (got %d)", workers, workers-1, g.Remove)
	}
	if math.IsNaN(g.StartMS) || g.StartMS < 0 || g.StartMS > 1e10 {
		add("goal.start_ms", "must be an instant in ms between 0 and 1e10 (got %v)", g.StartMS)
	}
	c := req.Constraints
	if c.TTFTP99MS != nil && (math.IsNaN(*c.TTFTP99MS) || *c.TTFTP99MS <= 0) {
		add("constraints.ttft_p99_ms", "must be a positive number of ms, or left out for no TTFT limit (got %v)", *c.TTFTP99MS)
	}
	if c.MaxKilled == nil {
		zero := int64(0)
		c.MaxKilled = &zero
	} else if *c.MaxKilled < 0 {
		add("constraints.max_killed", "must be 0 or more (got %d)", *c.MaxKilled)
	}

	s := req.Search
	if s.Selections == nil {
		s.Selections = slices.Clone(allSelections)
	}
	checkList(add, "search.selections", len(s.Selections))
	for i, sel := range s.Selections {
		if !slices.Contains(allSelections, sel) {
			add(fmt.Sprintf("search.selections[%d]", i), "must be one of %q (got %q)", allSelections, sel)
		}
	}
	if s.Waves == nil && g.Remove >= 1 {
		s.Waves = uniqueInts([]int{1, min(2, g.Remove), g.Remove})
	}
	checkList(add, "search.waves", len(s.Waves))
	for i, w := range s.Waves {
		if w < 1 || (g.Remove >= 1 && w > g.Remove) {
			add(fmt.Sprintf("search.waves[%d]", i), "must be between 1 (all at once) and goal.remove (%d, one by one) (got %d)", g.Remove, w)
		}
	}
	if s.GapsMS == nil {
		s.GapsMS = []float64{DefaultGapMS}
	}
	checkList(add, "search.gaps_ms", len(s.GapsMS))
	for i, v := range s.GapsMS {
		if math.IsNaN(v) || v <= 0 || v > 1e9 {
			add(fmt.Sprintf("search.gaps_ms[%d]", i), "must be a positive number of ms up to 1e9 (got %v)", v)
		}
	}
	if s.GraceMS == nil {
		s.GraceMS = []float64{}
	}
	if len(s.GraceMS) > maxSearchValues {
		add("search.grace_ms", "has %d values; at most %d", len(s.GraceMS), maxSearchValues)
	}
	for i, v := range s.GraceMS {
		if math.IsNaN(v) || v < 0 || v > 1e9 {
			add(fmt.Sprintf("search.grace_ms[%d]", i), "must be a number of ms from 0 to 1e9 (got %v)", v)
		}
	}
	if s.BisectGrace == nil {
		on := true
		s.BisectGrace = &on
	}
	if s.BisectTop == 0 {
		s.BisectTop = DefaultBisectTop
	} else if s.BisectTop < 0 || s.BisectTop > maxSearchValues {
		add("search.bisect_top", "must be between 1 and %d (got %d)", maxSearchValues, s.BisectTop)
	}
	if s.GraceStepMS == 0 {
		s.GraceStepMS = DefaultGraceStepMS
	} else if math.IsNaN(s.GraceStepMS) || s.GraceStepMS < 1 || s.GraceStepMS > 1e9 {
		add("search.grace_step_ms", "must be between 1 and 1e9 ms (got %v)", s.GraceStepMS)
	}
	if s.Guard == nil && base.KVCR.Enabled {
		on := true
		s.Guard = &on
	}
	if s.MaxRuns == 0 {
		s.MaxRuns = DefaultMaxPlanRuns
	} else if s.MaxRuns < 2 || s.MaxRuns > maxPlanRunsLimit {
		add("search.max_runs", "must be between 2 and %d (got %d)", maxPlanRunsLimit, s.MaxRuns)
	}
	if len(errs) > 0 {
		return req, &sim.ValidationError{Errors: errs}
	}
	return Request{Goal: g, Constraints: c, Search: s}, nil
}

func checkList(add func(string, string, ...any), path string, n int) {
	switch {
	case n == 0:
		add(path, "must list at least one value (or be left out for the default)")
	case n > maxSearchValues:
		add(path, "has %d values; at most %d", n, maxSearchValues)
	}
}

func uniqueInts(v []int) []int {
	var out []int
	for _, x := range v {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// planner holds one plan's state.
type planner struct {
	runner Runner
	base   *sim.Scenario
	req    Request
	memo   map[string]Outcome // scenario id → outcome
	runs   int
	reused int
	notes  []string
}

// Plan searches scale-in schedules for the request and ranks them. The same base scenario and
// request give the same result: candidates are generated in a fixed order and ranked by a total
// order. Runs go through r in batches (one per search stage or bisection round).
func Plan(ctx context.Context, r Runner, base *sim.Scenario, req Request) (*Result, error) {
	req, err := Normalize(base, req)
	if err != nil {
		return nil, err
	}
	p := &planner{runner: r, base: base, req: req, memo: map[string]Outcome{}}
	res := &Result{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search}
	s := req.Search

	// The baseline run only matters for the worker sets.
	sets := map[string][]int{}
	needSets := slices.Contains(s.Selections, SelectFewestPullsServed) || slices.Contains(s.Selections, SelectLeastWork)
	if needSets {
		bc := p.candidate("baseline: no scale-in", StageBaseline, nil)
		bc.Selection = "none"
		if err := p.runBatch(ctx, []*Candidate{bc}); err != nil {
			return nil, err
		}
		res.Baseline = bc
		if bc.Status == StatusDone {
			o := p.memo[bc.ScenarioID]
			sets[SelectFewestPullsServed] = pickWorkers(o.Workers, req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.PullsServed })
			sets[SelectLeastWork] = pickWorkers(o.Workers, req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.RequestsCompleted })
		} else {
			p.notes = append(p.notes, "the baseline run did not finish ("+bc.Status+"), so the worker sets chosen from it were left out")
		}
	}

	// Stage 1: every selection × wave shape × gap × grace (none, then the fixed ones).
	graces := []*float64{nil}
	for _, g := range s.GraceMS {
		graces = append(graces, &g)
	}
	var explore []*Candidate
	for _, sel := range s.Selections {
		ids, isSet := sets[sel]
		if (sel == SelectFewestPullsServed || sel == SelectLeastWork) && !isSet {
			continue
		}
		for _, waves := range s.Waves {
			gaps := s.GapsMS
			if waves == 1 {
				gaps = []float64{0}
			}
			for _, gap := range gaps {
				for _, grace := range graces {
					sched := p.schedule(sel, ids, waves, gap, grace)
					c := p.candidate(label(sel, len(ids), waves, req.Goal.Remove, gap, grace), StageExplore, sched)
					c.Selection, c.Waves, c.GapMS, c.GraceMS = sel, waves, gap, grace
					c.ScaleIn = sched
					explore = append(explore, c)
				}
			}
		}
	}
	reserve := 0
	if *s.BisectGrace {
		reserve = min(s.BisectTop*5, (s.MaxRuns-p.runs)/2)
	}
	explore = p.fit(explore, s.MaxRuns-p.runs-reserve, "first stage")
	if err := p.runBatch(ctx, explore); err != nil {
		return nil, err
	}
	all := slices.Clone(explore)

	// Stage 2: the smallest grace that keeps kills within the limit, for the best candidates
	// without grace. Kills fall as grace grows (a longer grace forces fewer removals), so a
	// bisection between 0 and the natural drain time finds it.
	if *s.BisectGrace {
		more, err := p.bisectGrace(ctx, explore)
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
	}

	ranked := make([]Candidate, 0, len(all))
	listed := map[string]bool{}
	for _, c := range all {
		if listed[c.ScenarioID] {
			continue // the same schedule reached twice (a grace the first stage also tried)
		}
		listed[c.ScenarioID] = true
		p.judge(c)
		ranked = append(ranked, *c)
	}
	if res.Baseline != nil {
		p.judge(res.Baseline)
		res.Baseline.Feasible = false
	}
	rank(ranked)
	markPareto(ranked)
	res.Candidates = ranked
	res.Runs, res.Reused, res.Notes = p.runs, p.reused, p.notes
	res.Recommended, res.Reason = recommend(ranked, req)
	return res, nil
}

// pickWorkers returns n worker ids with the smallest metric; ties go to the higher id (the
// simulator's default choice), and the result is sorted ascending.
func pickWorkers(rows []sim.WorkerRow, n int, metric func(sim.WorkerRow) int64) []int {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b sim.WorkerRow) int {
		if c := cmp.Compare(metric(a), metric(b)); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	ids := make([]int, 0, n)
	for _, w := range rows[:min(n, len(rows))] {
		ids = append(ids, w.ID)
	}
	return ids
}

// schedule builds the scale-in actions: waves split the count as evenly as possible, earlier
// waves taking the remainder.
func (p *planner) schedule(sel string, ids []int, waves int, gapMS float64, grace *float64) []sim.ScaleInAction {
	n := p.req.Goal.Remove
	acts := make([]sim.ScaleInAction, 0, waves)
	next := 0
	for k := range waves {
		size := n / waves
		if k < n%waves {
			size++
		}
		a := sim.ScaleInAction{AtMS: p.req.Goal.StartMS + float64(k)*gapMS}
		if grace != nil {
			g := *grace
			a.GraceMS = &g
		}
		if ids != nil {
			a.Workers = slices.Sorted(slices.Values(ids[next : next+size]))
		} else {
			a.Count, a.Select = size, sel
		}
		next += size
		acts = append(acts, a)
	}
	return acts
}

func label(sel string, setSize, waves, remove int, gapMS float64, grace *float64) string {
	var who string
	switch sel {
	case SelectFewestPullsServed:
		who = fmt.Sprintf("the %s peers pulled least from", Workers(setSize))
	case SelectLeastWork:
		who = fmt.Sprintf("the %s with the least work", Workers(setSize))
	default:
		who = fmt.Sprintf("%s by %s", Workers(remove), sel)
	}
	var how string
	switch {
	case waves == 1:
		how = "all at once"
	case waves == remove:
		how = "one by one " + FormatMS(gapMS) + " apart"
	default:
		how = fmt.Sprintf("in %d waves %s apart", waves, FormatMS(gapMS))
	}
	g := "no grace"
	if grace != nil {
		g = "grace " + FormatMS(*grace)
	}
	return who + ", " + how + ", " + g
}

// Workers is "1 worker" or "n workers".
func Workers(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return strconv.Itoa(n) + " workers"
}

// FormatMS writes a duration in ms as seconds ("30 s", "12.5 s") or ms below a second.
func FormatMS(ms float64) string {
	if ms != 0 && math.Abs(ms) < 1000 {
		return formatFloat(ms) + " ms"
	}
	return formatFloat(ms/1000) + " s"
}

func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// candidate makes a candidate with its scenario: the base with this schedule (and the guard).
func (p *planner) candidate(lbl, stage string, sched []sim.ScaleInAction) *Candidate {
	sc := *p.base // a shallow copy: the scenario's shared parts are read-only
	if sched == nil {
		sched = []sim.ScaleInAction{}
	}
	sc.ScaleIn = sched
	if g := p.req.Search.Guard; g != nil {
		sc.KVCR.RejectDrainingSources = *g
	}
	sc.Name = withNameSuffix(p.base.Name, "plan: "+lbl)
	return &Candidate{Label: lbl, Stage: stage, ScaleIn: sched, ScenarioID: sc.ID(), scenario: &sc, Violations: []string{}}
}

// fit keeps the candidates whose runs fit the remaining budget (reused runs are free).
func (p *planner) fit(cs []*Candidate, budget int, stage string) []*Candidate {
	out := cs[:0:0]
	seen := map[string]bool{}
	left := budget
	dropped := 0
	for _, c := range cs {
		_, known := p.memo[c.ScenarioID]
		if !known && !seen[c.ScenarioID] {
			if left <= 0 {
				dropped++
				continue
			}
			left--
			seen[c.ScenarioID] = true
		}
		out = append(out, c)
	}
	if dropped > 0 {
		p.notes = append(p.notes, fmt.Sprintf("the run budget (search.max_runs %d) left out %d candidate(s) of the %s", p.req.Search.MaxRuns, dropped, stage))
	}
	return out
}

// runBatch runs the candidates' new scenarios in one batch and fills in their outcomes.
func (p *planner) runBatch(ctx context.Context, cs []*Candidate) error {
	var todo []*sim.Scenario
	queued := map[string]bool{}
	for _, c := range cs {
		if _, ok := p.memo[c.ScenarioID]; ok || queued[c.ScenarioID] {
			continue
		}
		queued[c.ScenarioID] = true
		todo = append(todo, c.scenario)
	}
	if len(todo) > 0 {
		outs, err := p.runner.Run(ctx, todo)
		if err != nil {
			return err
		}
		for i, o := range outs {
			p.memo[todo[i].ID()] = o
			p.runs++
			if o.Reused {
				p.reused++
			}
		}
	}
	for _, c := range cs {
		o := p.memo[c.ScenarioID]
		c.RunID, c.Status, c.Error, c.Digest, c.Headline = o.RunID, o.Status, o.Error, o.Digest, o.Headline
	}
	return nil
}

// bisectGrace narrows the grace of the best no-grace candidates whose kills are within the limit.
func (p *planner) bisectGrace(ctx context.Context, explore []*Candidate) ([]*Candidate, error) {
	s := p.req.Search
	maxKilled := float64(*p.req.Constraints.MaxKilled)
	var seeds []Candidate
	for _, c := range explore {
		if c.GraceMS != nil || c.Status != StatusDone {
			continue
		}
		killed, latest := figure(c.Headline, "requests_killed"), figure(c.Headline, "latest_removal_ms")
		if killed == nil || *killed > maxKilled || latest == nil || *latest <= p.req.Goal.StartMS {
			continue
		}
		if total := figure(c.Headline, "total_drain_ms"); total != nil && *total <= 0 {
			continue // nothing to shorten
		}
		p.judge(c)
		seeds = append(seeds, *c)
	}
	rank(seeds)
	seeds = seeds[:min(len(seeds), s.BisectTop)]
	type search struct {
		seed   Candidate
		lo, hi float64 // lo: kills too many (or untested 0); hi: kills within the limit
	}
	step := s.GraceStepMS
	var searches []*search
	for _, sd := range seeds {
		// No worker drains longer than the whole drain of every worker together, nor than the
		// time from the start to the last removal; a grace that long forces nothing.
		longest := *figure(sd.Headline, "latest_removal_ms") - p.req.Goal.StartMS
		if total := figure(sd.Headline, "total_drain_ms"); total != nil {
			longest = min(longest, *total)
		}
		if longest <= 0 {
			continue // every drained worker left at once: no grace can make it sooner
		}
		hi := math.Ceil(longest/step) * step
		searches = append(searches, &search{seed: sd, lo: -step, hi: hi})
	}
	var out []*Candidate
	withGrace := func(sd Candidate, g float64) *Candidate {
		sched := p.schedule(sd.Selection, workerSet(sd), sd.Waves, sd.GapMS, &g)
		c := p.candidate(label(sd.Selection, len(workerSet(sd)), sd.Waves, p.req.Goal.Remove, sd.GapMS, &g), StageGrace, sched)
		c.Selection, c.Waves, c.GapMS, c.GraceMS = sd.Selection, sd.Waves, sd.GapMS, &g
		return c
	}
	ranHi := map[*search]bool{}
	for round := 0; round <= maxBisectRounds; round++ {
		var batch []*Candidate
		var owners []*search
		for _, sr := range searches {
			if sr.hi-sr.lo <= step || round == maxBisectRounds {
				// Converged (or out of rounds): run the smallest safe grace found, once, so
				// the plan lists it.
				if !ranHi[sr] {
					ranHi[sr] = true
					batch = append(batch, withGrace(sr.seed, sr.hi))
					owners = append(owners, sr)
				}
				continue
			}
			mid := math.Floor((sr.lo+sr.hi)/2/step) * step
			if mid <= sr.lo {
				mid = sr.lo + step
			}
			if mid >= sr.hi {
				continue
			}
			batch = append(batch, withGrace(sr.seed, mid))
			owners = append(owners, sr)
		}
		batch = p.fit(batch, p.req.Search.MaxRuns-p.runs, "grace search")
		if len(batch) == 0 {
			break
		}
		if err := p.runBatch(ctx, batch); err != nil {
			return nil, err
		}
		for i, c := range batch {
			sr := owners[i]
			killed := figure(c.Headline, "requests_killed")
			switch {
			case ranHi[sr] && *c.GraceMS == sr.hi:
				// the final run of a converged search
			case c.Status == StatusDone && killed != nil && *killed <= maxKilled:
				sr.hi = *c.GraceMS
				ranHi[sr] = false
			default:
				sr.lo = *c.GraceMS
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// workerSet returns the explicit worker ids of a set candidate, or nil for a policy.
func workerSet(c Candidate) []int {
	if c.Selection != SelectFewestPullsServed && c.Selection != SelectLeastWork {
		return nil
	}
	var ids []int
	for _, a := range c.ScaleIn {
		ids = append(ids, a.Workers...)
	}
	return ids
}

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
	con := p.req.Constraints
	if lim := con.TTFTP99MS; lim != nil {
		v := figure(c.Headline, "ttft_p99_ms")
		switch {
		case v == nil:
			c.Violations = append(c.Violations, "no request got a first token, so TTFT p99 cannot meet its limit")
		case *v > *lim:
			c.Violations = append(c.Violations, fmt.Sprintf("TTFT p99 %s is above the limit of %s", FormatMS(*v), FormatMS(*lim)))
		}
	}
	if k := figure(c.Headline, "requests_killed"); k != nil && *k > float64(*con.MaxKilled) {
		c.Violations = append(c.Violations, fmt.Sprintf("%s request(s) killed; the limit is %d", formatFloat(*k), *con.MaxKilled))
	}
	if c.Stage != StageBaseline && figure(c.Headline, "latest_removal_ms") == nil {
		c.Violations = append(c.Violations, "no drained worker was removed before the run ended")
	}
	c.Feasible = len(c.Violations) == 0
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
		for _, key := range []string{"latest_removal_ms", "ttft_p99_ms", "worker_seconds"} {
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
			figure(c.Headline, "latest_removal_ms") != nil && figure(c.Headline, "ttft_p99_ms") != nil
	}
	for i := range cs {
		if !eligible(cs[i]) {
			continue
		}
		ai, at := figure(cs[i].Headline, "latest_removal_ms"), figure(cs[i].Headline, "ttft_p99_ms")
		dominated := false
		for j := range cs {
			if j == i || !eligible(cs[j]) {
				continue
			}
			bj, bt := figure(cs[j].Headline, "latest_removal_ms"), figure(cs[j].Headline, "ttft_p99_ms")
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
	latest := figure(best.Headline, "latest_removal_ms")
	var facts []string
	if latest != nil {
		facts = append(facts, "the last drained worker is gone at "+FormatMS(*latest))
	}
	if t := figure(best.Headline, "ttft_p99_ms"); t != nil {
		facts = append(facts, "TTFT p99 "+FormatMS(*t))
	}
	if k := figure(best.Headline, "requests_killed"); k != nil {
		if *k == 0 {
			facts = append(facts, "no request killed")
		} else {
			facts = append(facts, formatFloat(*k)+" request(s) killed")
		}
	}
	reason := fmt.Sprintf("Drain %s, starting at %s: %s. It has the earliest latest-removal deadline of the %d feasible candidate(s) out of %d.",
		best.Label, FormatMS(req.Goal.StartMS), strings.Join(facts, ", "), feasible, len(ranked))
	return &Recommendation{Label: best.Label, ScenarioID: best.ScenarioID, RunID: best.RunID, ScaleIn: best.ScaleIn, Reason: reason}, ""
}
