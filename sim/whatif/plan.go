package whatif

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/scalein-planner/scalein/sim"
)

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

	// A tune plan's candidate: the autoscaler and migration limit it runs, and its figures.
	Autoscaler     *sim.Autoscaler `json:"autoscaler,omitempty"`
	MigrationLimit *int            `json:"migration_limit,omitempty"`
	Fleet          *TuneFigures    `json:"fleet,omitempty"`

	scenario *sim.Scenario
	fleet    FleetFigures // from the run's outcome
	excess   float64      // how far past the limits (constraintViolations)
	changed  int          // a tune candidate's settings that differ from the scenario's
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
	// A tune plan's recommendation: the settings to deploy.
	Autoscaler     *sim.Autoscaler `json:"autoscaler,omitempty"`
	MigrationLimit *int            `json:"migration_limit,omitempty"`
}

// Result is the finished plan. Candidates are in rank order (1 = best).
type Result struct {
	Goal        Goal        `json:"goal"`
	Constraints Constraints `json:"constraints"`
	Search      Search      `json:"search"`
	Baseline    *Candidate  `json:"baseline,omitempty"`
	// Baselines of a tune plan: the fixed fleet (no autoscaler) and the scenario's own settings.
	Baselines   []Candidate     `json:"baselines,omitempty"`
	Candidates  []Candidate     `json:"candidates"`
	Recommended *Recommendation `json:"recommended"`
	Reason      string          `json:"reason,omitempty"`
	Runs        int             `json:"runs"`
	Reused      int             `json:"reused"`
	Notes       []string        `json:"notes,omitempty"`
	// Capacity is a capacity plan's answer (goal.capacity).
	Capacity *CapacityResult `json:"capacity,omitempty"`
	// Diagnose is a diagnose plan's answer (goal.diagnose).
	Diagnose *DiagnoseResult `json:"diagnose,omitempty"`
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
	// runs started ahead of need on an AheadRunner (plan_ahead.go), by scenario id: counted
	// in runs only once a stage uses them (runBatch)
	ahead map[string]*aheadRun
	// firstReused is the Reused flag of the first outcome of each scenario this plan started
	// ahead of need: a run dropped and asked for again reports the runner's memory of it as
	// reuse, which it is not
	firstReused map[string]bool
	wake        chan struct{} // a run started ahead of need has ended
}

// Plan searches scale-in schedules for the request and ranks them (with goal.tune, autoscaler
// settings instead: tune.go). The same base scenario and
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
	switch req.Goal.Kind() {
	case KindDiagnose:
		return diagnose(ctx, r, base, req)
	case KindCapacity:
		return capacity(ctx, r, base, req)
	case KindTune:
		return tune(ctx, r, base, req)
	case KindDrain:
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
		return pickWorkers(ofPool(o.Workers, p.req.Goal.Role), p.req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.PullsServed })
	}
	return pickWorkers(ofPool(o.Workers, p.req.Goal.Role), p.req.Goal.Remove, func(w sim.WorkerRow) int64 { return w.RequestsCompleted })
}

// exploreCandidates is one selection's first-stage candidates: every wave shape × gap × grace.
func (p *planner) exploreCandidates(sel string, ids []int) []*Candidate {
	s := p.req.Search
	graces := []*float64{nil}
	graces = append(graces, s.GraceMS...)
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
			a.Count, a.Select, a.Role = size, sel, p.req.Goal.Role
		}
		next += size
		acts = append(acts, a)
	}
	return acts
}
