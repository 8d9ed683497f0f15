package whatif

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/scalein-planner/scalein/sim"
)

// Stages of a tune plan.
const (
	StageFixed   = "fixed fleet"
	StageYours   = "your settings"
	StageCoarse  = "coarse"
	StageRefine  = "refine"
	StageCombine = "combine"
)

// TuneFigures are a tune candidate's fleet figures and what it saves against the baselines
// (percent of their GPU-hours; nil when a baseline did not finish or used none).
type TuneFigures struct {
	FleetFigures
	SavedVsFixedPct *float64 `json:"saved_vs_fixed_pct"`
	SavedVsYoursPct *float64 `json:"saved_vs_yours_pct"`
}

// setting is one point of the tune grid: the autoscaler fields and the migration limit a tune
// plan varies; everything else stays as in the scenario.
type setting struct {
	target    float64
	windowMS  float64
	maxRemove *int
	// policies, when set, are the scale-down policies in place of maxRemove's (policyKey names
	// them, "" when unset).
	policies  []sim.ScalingPolicy
	policyKey string
	sel       string
	grace     *float64
	migration int
}

// dims are the settings the refine stage varies one at a time, in this order.
const (
	dimMaxRemove = iota
	dimPolicies
	dimSelect
	dimGrace
	dimMigration
	numDims
)

// tuner is one tune plan: the planner's runs, budget and reuse, with a grid of settings.
type tuner struct {
	*planner
	yours setting
	// pools is the scenario with prefill and decode pools when the plan tunes one pool's
	// autoscaler (goal.role); planner.base is then its view (poolView).
	pools *sim.Scenario
}

// tune searches autoscaler settings: the two baselines and a coarse grid of target × scale-down
// window (the other settings as in the scenario) first, then for the best refine_top of those,
// every other setting changed one at a time, then each seed with the best value of every
// setting combined. Like Plan, the result is a function of the request and of run outcomes
// only: each stage's budget is fixed before its runs start, and the ranking is a total order.
func tune(ctx context.Context, r Runner, base *sim.Scenario, req Request) (*Result, error) {
	pools := base
	base = poolView(base, req.Goal.Role)
	t := &tuner{planner: &planner{runner: r, base: base, req: req, memo: map[string]Outcome{}}, yours: settingOf(base), pools: pools}
	s := req.Search
	res := &Result{Goal: req.Goal, Constraints: req.Constraints, Search: s}

	fixed := t.fixedCandidate()
	yours := t.candidate(t.yours, StageYours)
	var coarse []*Candidate
	for _, target := range s.Targets {
		for _, w := range s.ScaleDownWindowsMS {
			st := t.yours
			st.target, st.windowMS = target, w
			coarse = append(coarse, t.candidate(st, StageCoarse))
		}
	}
	perSeed := len(t.variants(t.yours)) + 1
	reserve := min(s.RefineTop*perSeed, (s.MaxRuns-2)/2)
	baselines := map[string]bool{fixed.ScenarioID: true, yours.ScenarioID: true}
	coarse, dropped := fit(coarse, s.MaxRuns-2-reserve, func(id string) bool { return baselines[id] })
	var notes []string
	if dropped > 0 {
		notes = append(notes, t.budgetNote(dropped, "coarse grid"))
	}
	if err := t.runBatch(ctx, slices.Concat([]*Candidate{fixed, yours}, coarse)); err != nil {
		return nil, err
	}

	explored := slices.Concat([]*Candidate{yours}, coarse)
	refined, refineNotes, err := t.refine(ctx, t.seeds(explored))
	if err != nil {
		return nil, err
	}
	notes = append(notes, refineNotes...)

	var ranked []Candidate
	listed := map[string]bool{}
	for _, c := range slices.Concat(explored, refined) {
		if listed[c.ScenarioID] {
			continue // the same settings reached twice
		}
		listed[c.ScenarioID] = true
		t.judge(c)
		ranked = append(ranked, *c)
	}
	t.judge(fixed)
	t.judge(yours)
	for i := range ranked {
		savingsOf(&ranked[i], fixed, yours)
	}
	for _, b := range []*Candidate{fixed, yours} {
		savingsOf(b, fixed, yours)
		res.Baselines = append(res.Baselines, *b)
	}
	rankTune(ranked)
	markParetoBy(ranked, gpuHours, ttftP99)
	res.Candidates = ranked
	res.Runs, res.Reused, res.Notes = t.runs, t.reused, notes
	res.Recommended, res.Reason = t.recommend(ranked, res.Baselines)
	return res, nil
}

// settingOf reads the searched settings from a scenario with an autoscaler.
func settingOf(sc *sim.Scenario) setting {
	a := sc.Autoscaler
	st := setting{target: a.Target, windowMS: a.ScaleDownWindow(), maxRemove: a.ScaleDownStep(),
		sel: a.Select, grace: a.GraceMS, migration: sc.Router.MigrationLimit}
	return withPolicies(st, a.ScaleDownPolicies())
}

// with returns the setting with dimension d set to the i-th value of its search list.
func (t *tuner) with(st setting, d, i int) setting {
	s := t.req.Search
	switch d {
	case dimMaxRemove:
		st.maxRemove = s.MaxRemovePerTick[i]
		st = withPolicies(st, nil) // the step limit alone
	case dimPolicies:
		st = withPolicies(st, s.ScaleDownPolicies[i])
	case dimSelect:
		st.sel = s.Selections[i]
	case dimGrace:
		st.grace = s.GraceMS[i]
	case dimMigration:
		st.migration = s.MigrationLimits[i]
	}
	return st
}

// dimValues is how many values dimension d's search list has.
func (t *tuner) dimValues(d int) int {
	s := t.req.Search
	return [numDims]int{len(s.MaxRemovePerTick), len(s.ScaleDownPolicies), len(s.Selections), len(s.GraceMS), len(s.MigrationLimits)}[d]
}

// same says whether two settings agree on dimension d.
func same(a, b setting, d int) bool {
	switch d {
	case dimMaxRemove:
		return equalPtr(a.maxRemove, b.maxRemove)
	case dimPolicies:
		return a.policyKey == b.policyKey
	case dimSelect:
		return a.sel == b.sel
	case dimGrace:
		return equalPtr(a.grace, b.grace)
	}
	return a.migration == b.migration
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// variant is a setting one dimension away from a seed.
type variant struct {
	dim int
	set setting
}

// variants are the settings one dimension away from st, in the order of the dimensions and of
// their search lists.
func (t *tuner) variants(st setting) []variant {
	var out []variant
	for d := range numDims {
		for i := range t.dimValues(d) {
			v := t.with(st, d, i)
			if !same(v, st, d) && !slices.ContainsFunc(out, func(o variant) bool { return o.dim == d && same(o.set, v, d) }) {
				out = append(out, variant{dim: d, set: v})
			}
		}
	}
	return out
}

// seeds are the best refine_top finished candidates of the coarse stage (and the scenario's own
// settings), in rank order; when none is feasible, the closest ones.
func (t *tuner) seeds(explored []*Candidate) []Candidate {
	var done []Candidate
	seen := map[string]bool{}
	for _, c := range explored {
		if c.Status != StatusDone || seen[c.ScenarioID] {
			continue
		}
		seen[c.ScenarioID] = true
		t.judge(c)
		done = append(done, *c)
	}
	rankTune(done)
	return done[:min(len(done), t.req.Search.RefineTop)]
}

// refine runs each seed's variants and then its combination, the seeds side by side. The
// budget left after the coarse stage is split evenly among the seeds in rank order, each
// keeping one run for its combination. Seeds differ in target or window and refining changes
// neither, so no two seeds share a run and none depends on how fast another goes.
func (t *tuner) refine(ctx context.Context, seeds []Candidate) ([]*Candidate, []string, error) {
	if len(seeds) == 0 {
		return nil, nil, nil
	}
	t.mu.Lock()
	budget := t.req.Search.MaxRuns - t.runs
	before := map[string]bool{}
	for id := range t.memo {
		before[id] = true
	}
	t.mu.Unlock()
	n := len(seeds)
	out := make([][]*Candidate, n)
	dropped := make([]int, n)
	g, gctx := errgroup.WithContext(ctx)
	for i, sd := range seeds {
		share := budget / n
		if i < budget%n {
			share++
		}
		g.Go(func() error {
			var err error
			out[i], dropped[i], err = t.refineSeed(gctx, sd, share, before)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var notes []string
	if left := sum(dropped); left > 0 {
		notes = append(notes, t.budgetNote(left, "refinement"))
	}
	return slices.Concat(out...), notes, nil
}

// refineSeed runs the seed's variants within share − 1 runs (all of them below 3), then the
// seed with the best value of each dimension (the first variant along it that does strictly
// better than the seed and the variants before it; the seed's own value when none does), if a
// run is left for it.
func (t *tuner) refineSeed(ctx context.Context, sd Candidate, share int, before map[string]bool) ([]*Candidate, int, error) {
	seed := settingFromCandidate(sd)
	vs := t.variants(seed)
	batch := make([]*Candidate, len(vs))
	for i, v := range vs {
		batch[i] = t.candidate(v.set, StageRefine)
	}
	known := func(id string) bool { return before[id] }
	// A combination is new only when two variants improved on the seed: with fewer than three
	// runs, the variants take them all.
	forVariants := share
	if share >= 3 {
		forVariants = share - 1
	}
	batch, dropped := fit(batch, forVariants, known)
	share -= countNew(batch, known)
	if err := t.runBatch(ctx, batch); err != nil {
		return nil, 0, err
	}
	best := seed
	for d := range numDims {
		top := sd
		for i, c := range batch {
			if vs[i].dim != d {
				continue
			}
			t.judge(c)
			if compareOutcome(*c, top) < 0 { // strictly better: a tie keeps the seed's value
				top = *c
			}
		}
		best = withDim(best, settingFromCandidate(top), d)
	}
	combo := t.candidate(best, StageCombine)
	ran := map[string]bool{sd.ScenarioID: true}
	for _, c := range batch {
		ran[c.ScenarioID] = true
	}
	if ran[combo.ScenarioID] || before[combo.ScenarioID] {
		return batch, dropped, nil // no new combination: one dimension at most improved
	}
	if share < 1 {
		return batch, dropped + 1, nil
	}
	if err := t.runBatch(ctx, []*Candidate{combo}); err != nil {
		return nil, 0, err
	}
	return append(batch, combo), dropped, nil
}

// withDim is dst with dimension d taken from src.
func withDim(dst, src setting, d int) setting {
	switch d {
	case dimMaxRemove:
		dst.maxRemove = src.maxRemove
	case dimPolicies:
		dst = withPolicies(dst, src.policies)
	case dimSelect:
		dst.sel = src.sel
	case dimGrace:
		dst.grace = src.grace
	case dimMigration:
		dst.migration = src.migration
	}
	return dst
}

// settingFromCandidate reads a tune candidate's setting back.
func settingFromCandidate(c Candidate) setting {
	a := c.Autoscaler
	st := setting{target: a.Target, windowMS: a.ScaleDownWindow(), maxRemove: a.ScaleDownStep(),
		sel: a.Select, grace: a.GraceMS, migration: *c.MigrationLimit}
	return withPolicies(st, a.ScaleDownPolicies())
}

// candidate makes the tune candidate of a setting: the base scenario with that autoscaler and
// migration limit. Its label (and so its scenario's name and id) depends only on the setting,
// so the same setting reached in two stages is one run.
func (t *tuner) candidate(st setting, stage string) *Candidate {
	sc := *t.base // a shallow copy: the scenario's shared parts are read-only
	a := *t.base.Autoscaler
	a.Target, a.Select, a.GraceMS = st.target, st.sel, st.grace
	a.SetScaleDown(st.windowMS, st.maxRemove)
	if st.policies != nil {
		a.SetScaleDownPolicies(st.policies)
	}
	sc.Autoscaler = &a
	sc.Router.MigrationLimit = st.migration
	sc.ScaleIn = []sim.ScaleInAction{}
	poolScenario(&sc, t.pools, t.req.Goal.Role, false, 0)
	lbl := t.label(st)
	sc.Name = withNameSuffix(t.base.Name, "plan: "+lbl)
	m := st.migration
	changed := 0
	if st.target != t.yours.target {
		changed++
	}
	if st.windowMS != t.yours.windowMS {
		changed++
	}
	for d := range numDims {
		if !same(st, t.yours, d) {
			changed++
		}
	}
	return &Candidate{Label: lbl, Stage: stage, Selection: st.sel, GraceMS: st.grace, ScaleIn: sc.ScaleIn,
		ScenarioID: sc.ID(), scenario: &sc, Violations: []string{}, Autoscaler: &a, MigrationLimit: &m, changed: changed}
}

// fixedCandidate is the scenario without its autoscaler on the baseline's fixed fleet: the
// autoscaler's max_workers (or goal.baseline_workers) all along.
func (t *tuner) fixedCandidate() *Candidate {
	sc := *t.base
	n := sim.BaselineWorkers(t.base, t.req.Goal.BaselineWorkers)
	sc.Fleet.Workers = n
	sc.Autoscaler = nil
	sc.ScaleIn = []sim.ScaleInAction{}
	lbl := strings.TrimPrefix(sim.BaselinePhrase(t.base, t.req.Goal.BaselineWorkers), "a ")
	if r := t.req.Goal.Role; r != "" {
		sc.Fleet.Workers = t.base.Fleet.Workers
		poolScenario(&sc, t.pools, r, true, n)
		lbl = strings.Replace(lbl, "fixed fleet", "fixed "+r+" pool", 1)
	}
	sc.Name = withNameSuffix(t.base.Name, "plan: "+lbl)
	m := t.base.Router.MigrationLimit
	return &Candidate{Label: lbl, Stage: StageFixed, Selection: "none", ScaleIn: sc.ScaleIn,
		ScenarioID: sc.ID(), scenario: &sc, Violations: []string{}, MigrationLimit: &m}
}

// label names a setting: "target 48, window 1 min, 1 worker a step, highest_id, grace 30 s,
// migration limit 1".
func (t *tuner) label(st setting) string {
	step := "no step limit"
	if st.maxRemove != nil {
		step = Workers(*st.maxRemove) + " a step"
	}
	if st.policies != nil {
		step = PolicyPhrase(st.policies)
	}
	grace := "no grace"
	if st.grace != nil {
		grace = "grace " + FormatMS(*st.grace)
	}
	pool := ""
	if r := t.req.Goal.Role; r != "" {
		pool = r + " pool: "
	}
	return fmt.Sprintf("%starget %s, window %s, %s, %s, %s, migration limit %d",
		pool, formatFloat(st.target), FormatMS(st.windowMS), step, st.sel, grace, st.migration)
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

// withPolicies sets a setting's scale-down policies (nil: none, the step limit applies).
func withPolicies(st setting, ps []sim.ScalingPolicy) setting {
	st.policies, st.policyKey = nil, ""
	if ps != nil {
		st.policies = slices.Clone(ps)
		st.policyKey = PolicyPhrase(ps)
	}
	return st
}

// PolicyPhrase says what scale-down policies allow: "at most 1 worker removed per 1 min",
// "at most 10 % of the workers removed per 1 min or 2 workers per 15 s (the larger)".
func PolicyPhrase(ps []sim.ScalingPolicy) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		what := Workers(p.Value)
		if p.Type == sim.PolicyTypePercent {
			what = fmt.Sprintf("%d %% of the workers", p.Value)
		}
		parts[i] = what + " removed per " + FormatMS(float64(p.PeriodMS))
	}
	out := "at most " + parts[0]
	for _, p := range parts[1:] {
		out += " or " + p
	}
	if len(parts) > 1 {
		out += " (the larger)"
	}
	return out
}
