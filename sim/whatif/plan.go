package whatif

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/scalein-planner/scalein/sim"
)

// Planner defaults (docs/planning.md explains each).
const (
	DefaultMaxPlanRuns = 64
	DefaultGapMS       = 30000
	DefaultBisectTop   = 3
	DefaultGraceStepMS = 1000
	// DefaultGraceProbes is how many graces the grace search simulates per round, shared
	// among its searches (each probes at least one): 2 keeps two slots busy with one search.
	DefaultGraceProbes = 2
	maxBisectRounds    = 16
	maxPlanRunsLimit   = MaxPlanRunsLimit
	maxSearchValues    = 20
)

// MaxPlanRunsLimit is the most runs any plan may simulate (search.max_runs, serve -max-plan-runs).
const MaxPlanRunsLimit = 1000

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
	// GraceProbes is how many graces are simulated at once per round over all searches; a
	// search with k of them splits its interval into k+1 parts (k = 1 is a bisection).
	GraceProbes int `json:"grace_probes"`
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
	if c.TTFTP99MS != nil && (math.IsNaN(*c.TTFTP99MS) || math.IsInf(*c.TTFTP99MS, 0) || *c.TTFTP99MS <= 0) {
		add("constraints.ttft_p99_ms", "must be a positive, finite number of ms, or left out for no TTFT limit (got %v)", *c.TTFTP99MS)
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
	if s.Waves != nil || g.Remove >= 1 { // no default without a goal: goal.remove says why
		checkList(add, "search.waves", len(s.Waves))
	}
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
	if s.GraceProbes == 0 {
		s.GraceProbes = DefaultGraceProbes
	} else if s.GraceProbes < 1 || s.GraceProbes > maxSearchValues {
		add("search.grace_probes", "must be between 1 and %d (got %d)", maxSearchValues, s.GraceProbes)
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
	if len(errs) == 0 {
		checkLastWave(add, g, s)
	}
	if len(errs) > 0 {
		return req, &sim.ValidationError{Errors: errs}
	}
	return Request{Goal: g, Constraints: c, Search: s}, nil
}

// checkLastWave checks that the last wave of the longest schedule still starts within the
// simulator's default virtual-time limit (30 days): goal.start_ms + gap × (waves − 1), for the
// largest gap and wave count. A drain that starts after it never happens in the run.
func checkLastWave(add func(string, string, ...any), g Goal, s Search) {
	waves, gap := slices.Max(s.Waves), slices.Max(s.GapsMS)
	if last := g.StartMS + gap*float64(waves-1); last >= sim.DefaultMaxVirtualMS {
		add("goal.start_ms", "with %d waves %s apart the last wave would start at %s, after the simulator's virtual-time limit of %s (the drains would start after the run ends): start earlier, or search fewer waves or shorter gaps (got %v)",
			waves, FormatMS(gap), FormatMS(last), FormatMS(sim.DefaultMaxVirtualMS), g.StartMS)
	}
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

// planner holds one plan's state. Its stages ask the runner for runs from several goroutines at
// once; mu guards what they share.
type planner struct {
	runner Runner
	base   *sim.Scenario
	req    Request

	mu     sync.Mutex
	memo   map[string]Outcome // scenario id → outcome
	runs   int
	reused int
}

// Plan searches scale-in schedules for the request and ranks them. The same base scenario and
// request give the same result whatever the runner's slot count and the order runs finish in:
// every candidate is a function of the request and of earlier candidates' outcomes (never of
// timing), each run budget is fixed before the runs it covers start, and the ranking is a total
// order. Runs are asked for as soon as they are known, so independent ones share the slots
// (docs/planning.md, "Scheduling").
func Plan(ctx context.Context, r Runner, base *sim.Scenario, req Request) (*Result, error) {
	req, err := Normalize(base, req)
	if err != nil {
		return nil, err
	}
	p := &planner{runner: r, base: base, req: req, memo: map[string]Outcome{}}
	res := &Result{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search}

	explore, baseline, notes, err := p.explore(ctx)
	if err != nil {
		return nil, err
	}
	res.Baseline = baseline
	all := slices.Clone(explore)
	if *req.Search.BisectGrace {
		more, graceNotes, err := p.graceSearch(ctx, explore)
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
		notes = append(notes, graceNotes...)
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
	res.Runs, res.Reused, res.Notes = p.runs, p.reused, notes
	res.Recommended, res.Reason = recommend(ranked, req)
	return res, nil
}

// isSet says whether a selection is a worker set chosen from the baseline run.
func isSet(sel string) bool {
	return sel == SelectFewestPullsServed || sel == SelectLeastWork
}

// explore runs the first stage: every selection × wave shape × gap × grace (none, then the
// fixed ones). The policy candidates start at once, together with the baseline run; the worker
// sets' candidates start when the baseline has finished. The stage's run budget goes to the
// policy candidates first, then to the sets', in the order of search.selections.
func (p *planner) explore(ctx context.Context) (explore []*Candidate, baseline *Candidate, notes []string, err error) {
	s := p.req.Search
	var policies, sets []string
	for _, sel := range s.Selections {
		if isSet(sel) {
			sets = append(sets, sel)
		} else {
			policies = append(policies, sel)
		}
	}
	runs := 0
	if len(sets) > 0 {
		runs = 1 // the baseline
	}
	reserve := 0
	if *s.BisectGrace {
		reserve = min(s.BisectTop*5, (s.MaxRuns-runs)/2)
	}
	budget := s.MaxRuns - runs - reserve
	var policyCands []*Candidate
	for _, sel := range policies {
		policyCands = append(policyCands, p.exploreCandidates(sel, nil)...)
	}
	policyCands, dropped := fit(policyCands, budget, nil)
	budget -= countNew(policyCands, nil)

	g, gctx := errgroup.WithContext(ctx)
	var setCands []*Candidate
	var setDropped int
	if len(sets) > 0 {
		baseline = p.candidate("baseline: no scale-in", StageBaseline, nil)
		baseline.Selection = "none"
		g.Go(func() error {
			if err := p.runBatch(gctx, []*Candidate{baseline}); err != nil {
				return err
			}
			if baseline.Status != StatusDone {
				notes = append(notes, "the baseline run did not finish ("+baseline.Status+"), so the worker sets chosen from it were left out")
				return nil
			}
			for _, sel := range sets {
				setCands = append(setCands, p.exploreCandidates(sel, p.workerSetFor(sel, baseline))...)
			}
			setCands, setDropped = fit(setCands, budget, nil)
			return p.runBatch(gctx, setCands)
		})
	}
	g.Go(func() error { return p.runBatch(gctx, policyCands) })
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	if n := dropped + setDropped; n > 0 {
		notes = append(notes, p.budgetNote(n, "first stage"))
	}
	// The candidates in the order of search.selections, whatever order they ran in.
	for _, sel := range s.Selections {
		for _, c := range slices.Concat(policyCands, setCands) {
			if c.Selection == sel {
				explore = append(explore, c)
			}
		}
	}
	return explore, baseline, notes, nil
}

// workerSetFor picks the set of workers a set selection drains, from the baseline's totals.
func (p *planner) workerSetFor(sel string, baseline *Candidate) []int {
	p.mu.Lock()
	o := p.memo[baseline.ScenarioID]
	p.mu.Unlock()
	if sel == SelectFewestPullsServed {
		return pickWorkers(o.Workers, p.req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.PullsServed })
	}
	return pickWorkers(o.Workers, p.req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.RequestsCompleted })
}

// exploreCandidates is one selection's first-stage candidates: every wave shape × gap × grace.
func (p *planner) exploreCandidates(sel string, ids []int) []*Candidate {
	s := p.req.Search
	graces := []*float64{nil}
	for _, g := range s.GraceMS {
		graces = append(graces, &g)
	}
	var out []*Candidate
	for _, waves := range s.Waves {
		gaps := s.GapsMS
		if waves == 1 {
			gaps = []float64{0}
		}
		for _, gap := range gaps {
			for _, grace := range graces {
				sched := p.schedule(sel, ids, waves, gap, grace)
				c := p.candidate(label(sel, len(ids), waves, p.req.Goal.Remove, gap, grace), StageExplore, sched)
				c.Selection, c.Waves, c.GapMS, c.GraceMS = sel, waves, gap, grace
				out = append(out, c)
			}
		}
	}
	return out
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
func Workers(n int) string { return count(n, "worker") }

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// requestsKilled is "1 request killed" or "n requests killed" for a headline figure.
func requestsKilled(k float64) string {
	if k == 1 {
		return "1 request killed"
	}
	return sim.FormatNumber(k) + " requests killed"
}

// FormatMS writes a duration in ms as seconds ("30 s", "12.5 s") or ms below a second, through
// the one number formatter (sim.FormatNumber): "482.880296 s", not "482.88029551000005 s".
func FormatMS(ms float64) string {
	if ms != 0 && math.Abs(ms) < 1000 {
		return sim.FormatNumber(ms) + " ms"
	}
	return sim.FormatNumber(ms/1000) + " s"
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

// fit keeps the candidates whose runs fit the budget: a scenario known already (reused) or
// listed twice costs one run at most. It returns them and how many candidates it left out.
func fit(cs []*Candidate, budget int, known func(id string) bool) ([]*Candidate, int) {
	out := cs[:0:0]
	seen := map[string]bool{}
	left := budget
	dropped := 0
	for _, c := range cs {
		if (known == nil || !known(c.ScenarioID)) && !seen[c.ScenarioID] {
			if left <= 0 {
				dropped++
				continue
			}
			left--
			seen[c.ScenarioID] = true
		}
		out = append(out, c)
	}
	return out, dropped
}

// countNew is how many distinct runs the candidates cost.
func countNew(cs []*Candidate, known func(id string) bool) int {
	seen := map[string]bool{}
	for _, c := range cs {
		if known == nil || !known(c.ScenarioID) {
			seen[c.ScenarioID] = true
		}
	}
	return len(seen)
}

func (p *planner) budgetNote(dropped int, stage string) string {
	return fmt.Sprintf("the run budget (search.max_runs %d) left out %s of the %s", p.req.Search.MaxRuns, count(dropped, "candidate"), stage)
}

// known says whether this plan has run the scenario already.
func (p *planner) known(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.memo[id]
	return ok
}

// runBatch runs the candidates' new scenarios in one call to the runner and fills in their
// outcomes. Several goroutines may call it at once.
func (p *planner) runBatch(ctx context.Context, cs []*Candidate) error {
	var todo []*sim.Scenario
	queued := map[string]bool{}
	for _, c := range cs {
		if p.known(c.ScenarioID) || queued[c.ScenarioID] {
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
		p.mu.Lock()
		for i, o := range outs {
			p.memo[todo[i].ID()] = o
			p.runs++
			if o.Reused {
				p.reused++
			}
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		o := p.memo[c.ScenarioID]
		c.RunID, c.Status, c.Error, c.Digest, c.Headline = o.RunID, o.Status, o.Error, o.Digest, o.Headline
	}
	return nil
}

// graceSeeds are the best explored candidates without grace whose kills are within the limit
// and whose workers took time to drain (a grace can make that sooner), at most BisectTop.
func (p *planner) graceSeeds(explore []*Candidate) []Candidate {
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
		longest := *figure(sd.Headline, "latest_removal_ms") - p.req.Goal.StartMS
		if total := figure(sd.Headline, "total_drain_ms"); total != nil {
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
		killed := figure(c.Headline, "requests_killed")
		safe := c.Status == StatusDone && killed != nil && *killed <= maxKilled
		if safe && *c.GraceMS <= newHi {
			newHi, newHiRan = *c.GraceMS, true
		}
	}
	for _, c := range batch {
		killed := figure(c.Headline, "requests_killed")
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
		c.Violations = append(c.Violations, fmt.Sprintf("%s; the limit is %d", requestsKilled(*k), *con.MaxKilled))
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
			facts = append(facts, requestsKilled(*k))
		}
	}
	reason := fmt.Sprintf("Drain %s, starting at %s: %s. It has the earliest latest-removal deadline of the %s out of %d.",
		best.Label, FormatMS(req.Goal.StartMS), strings.Join(facts, ", "), count(feasible, "feasible candidate"), len(ranked))
	return &Recommendation{Label: best.Label, ScenarioID: best.ScenarioID, RunID: best.RunID, ScaleIn: best.ScaleIn, Reason: reason}, ""
}
