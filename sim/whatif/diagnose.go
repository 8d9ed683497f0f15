package whatif

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// A diagnose plan (issue 27), goal.diagnose: how far the scenario's autoscaler is from a
// perfect one, and which of its lags costs most. It finds one worker's capacity μ at the slo
// (a capacity search whose probes are shared with capacity plans), then runs the same night:
//
//   - as written (the scenario itself);
//   - with every subset of its three lags removed (2³ = 8 runs, the scenario among them);
//   - under the ideal fleet: an autoscaler on the offered rate λ(t) itself with target μ and
//     none of the lags, which keeps max(min_workers, ceil(λ/μ)) workers (idealScenario);
//   - on a static fleet of max_workers.
//
// The gap in attainment and GPU-hours between the scenario and the run with no lag is split
// among the lags by their Shapley values (shapley.go); what remains between "no lag" and the
// ideal fleet is the metric and target the autoscaler scales on, which no lag explains.

// DiagnoseGoal is goal.diagnose. Zero values take the defaults.
type DiagnoseGoal struct {
	// RatePerWorker is μ, one worker's capacity at the slo in requests/s; 0 finds it with a
	// capacity search (Capacity's settings), reusing the runs of any capacity plan of the mix.
	RatePerWorker float64 `json:"rate_per_worker_per_s,omitempty"`
	// Capacity shapes that search (min_attainment, workers, duration_ms).
	Capacity *CapacityGoal `json:"capacity,omitempty"`
}

// The three lags of an autoscaler, in the order of the Shapley players.
const (
	LagSignal   = "signal"   // metric_delay_ms and the sync interval: the controller sees old load
	LagDecision = "decision" // stabilisation windows and policies: it holds or limits a change
	LagWarmUp   = "warm_up"  // startup_ms and pending_ms: a worker it starts serves later
)

// Lags lists the lags in player order: bit i of a subset is Lags[i].
var Lags = []string{LagSignal, LagDecision, LagWarmUp}

var lagLabels = map[string]string{LagSignal: "signal lag", LagDecision: "decision lag", LagWarmUp: "warm-up"}

// LagLabel names a lag in words ("warm-up").
func LagLabel(lag string) string { return lagLabels[lag] }

// Diagnose plan defaults.
const (
	// LagFreeIntervalMS is the sync interval of a run without signal lag (and of the ideal
	// fleet): a decision every second, or the scenario's own interval if shorter.
	LagFreeIntervalMS = 1000
	// DefaultDiagnoseMaxRuns: a capacity search (12), 8 lag subsets, the ideal and the static
	// fleet.
	DefaultDiagnoseMaxRuns = DefaultCapacityMaxRuns + 8 + 2
	// unlimitedPolicyPeriodMS is the period of the policies of a run without decision lag. They
	// allow any change, so the period changes nothing; it is Kubernetes' default.
	unlimitedPolicyPeriodMS = 15000
)

// Fleet kinds of a diagnose plan.
const (
	FleetScenario = "scenario"
	FleetNoLag    = "no_lag"
	FleetIdeal    = "ideal"
	FleetStatic   = "static"
)

// FleetOutcome is one night's run: its attainment and what its fleet cost. AverageReplicas =
// worker_seconds ÷ duration.
type FleetOutcome struct {
	Kind            string   `json:"kind"`
	Label           string   `json:"label"`
	ScenarioID      string   `json:"scenario_id"`
	RunID           string   `json:"run_id,omitempty"`
	Status          string   `json:"status"`
	Error           string   `json:"error,omitempty"`
	Attainment      *float64 `json:"attainment"`
	GPUHours        *float64 `json:"gpu_hours"`
	AverageReplicas *float64 `json:"average_replicas"`
}

// LagSubset is one of the 8 runs: the scenario with these lags removed.
type LagSubset struct {
	Removed []string `json:"removed"`
	FleetOutcome
}

// LagShare is one lag's Shapley value: the attainment (in points, 1 point = 1 % of requests)
// and the GPU-hours removing it gains, averaged over the orders of removal. A negative
// GPU-hours cost means the lag saves GPU-hours (a window that holds a scale-up, say).
type LagShare struct {
	Lag              string  `json:"lag"`
	Label            string  `json:"label"`
	AttainmentPoints float64 `json:"attainment_points"`
	GPUHours         float64 `json:"gpu_hours"`
}

// IdealBound is the ideal fleet computed from the load rather than simulated: max(min_workers,
// ceil(λ/μ)) workers in each rate stage, λ the stage's request rate (sessions/s × turns). The
// ideal fleet's run keeps the same count in each stage, so the two differ only by the
// interval the run takes to see a stage change and by the run's tail after the last stage.
type IdealBound struct {
	Stages          []BoundStage `json:"stages"`
	DurationMS      float64      `json:"duration_ms"`
	WorkerSeconds   float64      `json:"worker_seconds"`
	GPUHours        float64      `json:"gpu_hours"`
	AverageReplicas float64      `json:"average_replicas"`
}

// BoundStage is one stage of the bound.
type BoundStage struct {
	StartMS    float64 `json:"start_ms"`
	DurationMS float64 `json:"duration_ms"`
	RatePerS   float64 `json:"requests_per_s"`
	Workers    int     `json:"workers"`
}

// DiagnoseResult is a diagnose plan's answer.
type DiagnoseResult struct {
	RatePerWorker float64 `json:"rate_per_worker_per_s"`
	// IdealTarget is the ideal fleet's target on the metric offered_rate: μ in requests/s, in
	// the controller's milli-units.
	IdealTarget float64        `json:"ideal_target"`
	Fleets      []FleetOutcome `json:"fleets"`
	Subsets     []LagSubset    `json:"subsets"`
	// Lags are the Shapley shares, costliest in attainment first; nil when a subset's run failed.
	Lags []LagShare `json:"lags"`
	// AttainmentGapPoints and GPUHoursGap are what removing every lag gains: the sum of the
	// shares (the scenario minus the run with no lag, signs as in LagShare).
	AttainmentGapPoints *float64    `json:"attainment_gap_points"`
	GPUHoursGap         *float64    `json:"gpu_hours_gap"`
	Bound               *IdealBound `json:"bound,omitempty"`
	Comparison          string      `json:"comparison"`
	Answer              string      `json:"answer"`
}

// normalizeDiagnose fills a diagnose plan's defaults and checks it against the scenario: an
// autoscaler to diagnose, an slo to judge by, and a mix whose capacity can be probed.
func normalizeDiagnose(base *sim.Scenario, req Request) (Request, error) {
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	g := req.Goal
	d := *g.Diagnose
	if g.Remove != 0 || g.StartMS != 0 || g.Tune != "" || g.Capacity != nil {
		add("goal", "a diagnose plan asks only goal.diagnose; leave out goal.remove, goal.start_ms, goal.tune and goal.capacity (its capacity search takes goal.diagnose.capacity)")
	}
	if base.Autoscaler == nil {
		add("goal.diagnose", `needs a scenario with an autoscaler, whose lags it measures: add "autoscaler": {} (Kubernetes' defaults), or load an autoscaler preset`)
	}
	if msg := sim.CheckBaselineWorkers("goal.baseline_workers", g.BaselineWorkers); msg != "" {
		add("goal.baseline_workers", "%s", msg[len("goal.baseline_workers: "):])
	}
	if math.IsNaN(d.RatePerWorker) || d.RatePerWorker < 0 || (d.RatePerWorker > 0 && d.RatePerWorker < minCapacityRatePerS) || d.RatePerWorker > maxCapacityRatePerS {
		add("goal.diagnose.rate_per_worker_per_s", "must be one worker's capacity in requests/s, from %s to %s, or left out to find it with a capacity search (got %v)", formatFloat(minCapacityRatePerS), formatFloat(maxCapacityRatePerS), d.RatePerWorker)
	}
	capGoal := CapacityGoal{}
	if d.Capacity != nil {
		capGoal = *d.Capacity
	}
	// The capacity goal's own checks (slo, workload, its fields), with its paths moved under
	// goal.diagnose.capacity.
	capReq, err := normalizeCapacity(base, Request{Goal: Goal{Capacity: &capGoal}, Search: Search{MaxRuns: 2}})
	if ve, ok := err.(*sim.ValidationError); ok {
		for _, fe := range ve.Errors {
			switch {
			case fe.Path == "goal.capacity":
				fe.Path = "goal.diagnose"
			case len(fe.Path) > len("goal.capacity."):
				fe.Path = "goal.diagnose.capacity." + fe.Path[len("goal.capacity."):]
			}
			errs = append(errs, fe)
		}
	}
	con := req.Constraints
	if con.TTFTP99MS != nil || con.E2EP99MS != nil || con.MaxKilled != nil || con.MinAttainment != nil {
		add("constraints", "a diagnose plan judges runs by the scenario's slo; leave constraints out (the capacity's share is goal.diagnose.capacity.min_attainment)")
	}
	s := req.Search
	if s.MaxRuns == 0 {
		s.MaxRuns = DefaultDiagnoseMaxRuns
	} else if s.MaxRuns < 12 || s.MaxRuns > maxPlanRunsLimit {
		add("search.max_runs", "must be between 12 (the 8 lag subsets, the ideal and the static fleet, and two more) and %d (got %d)", maxPlanRunsLimit, s.MaxRuns)
	}
	if !reflect.DeepEqual(s, Search{MaxRuns: s.MaxRuns}) {
		add("search", "a diagnose plan takes only search.max_runs; leave the other search fields out")
	}
	if len(errs) > 0 {
		return req, &sim.ValidationError{Errors: errs}
	}
	c := *capReq.Goal.Capacity
	d.Capacity = &c
	g.Diagnose = &d
	return Request{Goal: g, Search: Search{MaxRuns: s.MaxRuns}}, nil
}

// diagnose runs a diagnose plan: μ, then the 8 subsets, the ideal and the static fleet in one
// batch.
func diagnose(ctx context.Context, r Runner, base *sim.Scenario, req Request) (*Result, error) {
	p := &planner{runner: r, base: base, req: req, memo: map[string]Outcome{}}
	defer p.dropAllAhead()
	g := *req.Goal.Diagnose
	res := &Result{Goal: req.Goal, Search: req.Search, Candidates: []Candidate{}}
	cs := newCapacitySearch(p, *g.Capacity)
	fixed := 8 + 2 // the subsets, the ideal and the static fleet
	mu := g.RatePerWorker

	// The subsets and the static fleet do not depend on μ: on a runner that can run ahead of
	// need they fill the slots the capacity search leaves idle (plan_ahead.go).
	var subsets []*Candidate
	for mask := range 1 << len(Lags) {
		sc := withoutLags(base, mask)
		c := &Candidate{Label: subsetLabel(mask), Stage: "diagnose", Selection: "none", ScenarioID: sc.ID(), scenario: sc, Violations: []string{}}
		subsets = append(subsets, c)
	}
	static := diagnoseCandidate("static fleet", staticScenario(base, req.Goal.BaselineWorkers))
	cs.fill = append(slices.Clone(subsets), static)

	var notes []string
	if mu == 0 {
		var err error
		// The search leaves room for the fixed runs.
		if notes, err = cs.search(ctx, req.Search.MaxRuns-fixed); err != nil {
			return nil, err
		}
		res.Capacity = cs.result()
		if res.Capacity.RatePerWorker == nil {
			res.Runs, res.Reused, res.Notes = p.runs, p.reused, append(notes, "no capacity, so no ideal fleet: "+res.Capacity.Answer)
			res.Reason = res.Notes[len(res.Notes)-1]
			return res, nil
		}
		mu = *res.Capacity.RatePerWorker
	}
	mu = clampRate(mu)
	target := idealTarget(mu)

	ideal := diagnoseCandidate("ideal fleet", idealScenario(base, target))
	if err := p.runBatch(ctx, append(slices.Clone(subsets), ideal, static)); err != nil {
		return nil, err
	}

	d := &DiagnoseResult{RatePerWorker: mu, IdealTarget: target}
	for mask, c := range subsets {
		d.Subsets = append(d.Subsets, LagSubset{Removed: lagsOf(mask), FleetOutcome: fleetOutcome("", c)})
	}
	d.Fleets = []FleetOutcome{
		fleetOutcome(FleetScenario, subsets[0]),
		fleetOutcome(FleetNoLag, subsets[len(subsets)-1]),
		fleetOutcome(FleetIdeal, ideal),
		fleetOutcome(FleetStatic, static),
	}
	d.Fleets[3].Label = sim.BaselinePhrase(base, req.Goal.BaselineWorkers)
	d.Lags, d.AttainmentGapPoints, d.GPUHoursGap = lagShares(d.Subsets)
	if d.Lags == nil {
		notes = append(notes, "a lag subset's run did not finish, so the lags are not attributed")
	}
	d.Bound = idealBound(base, mu)
	d.Comparison = fleetComparison(d.Fleets)
	d.Answer = lagAnswer(d.Lags)
	if d.AttainmentGapPoints != nil {
		d.Answer = fmt.Sprintf("Removing all three lags changes attainment by %s points and GPU-hours by %s. ",
			signed(math.Round(*d.AttainmentGapPoints*10)/10), signed(roundSignificant(-*d.GPUHoursGap, 2))) + d.Answer
	}
	res.Diagnose = d
	res.Runs, res.Reused, res.Notes = p.runs, p.reused, notes
	res.Reason = d.Comparison + " " + d.Answer
	return res, nil
}

func diagnoseCandidate(label string, sc *sim.Scenario) *Candidate {
	return &Candidate{Label: label, Stage: "diagnose", Selection: "none", ScenarioID: sc.ID(), scenario: sc, Violations: []string{}}
}

func fleetOutcome(kind string, c *Candidate) FleetOutcome {
	f := FleetOutcome{Kind: kind, Label: fleetLabels[kind], ScenarioID: c.ScenarioID, RunID: c.RunID, Status: c.Status, Error: c.Error}
	if kind == "" {
		f.Label = c.Label
	}
	if c.Status != StatusDone {
		return f
	}
	f.Attainment = figure(c.Headline, sim.HeadlineSLOAttainment)
	gpuh := c.fleet.GPUHours
	f.GPUHours = &gpuh
	ws, dur := figure(c.Headline, sim.HeadlineWorkerSeconds), figure(c.Headline, sim.HeadlineDurationMS)
	if ws != nil && dur != nil && *dur > 0 {
		avg := *ws / (*dur / 1000)
		f.AverageReplicas = &avg
	}
	return f
}

var fleetLabels = map[string]string{
	FleetScenario: "the scenario's autoscaler",
	FleetNoLag:    "its autoscaler with no lag",
	FleetIdeal:    "the ideal fleet",
	FleetStatic:   "a static fleet",
}

// lagsOf lists the lags a subset removes, in player order.
func lagsOf(mask int) []string {
	out := []string{}
	for i, lag := range Lags {
		if mask&(1<<i) != 0 {
			out = append(out, lag)
		}
	}
	return out
}

func subsetLabel(mask int) string {
	if mask == 0 {
		return "as written"
	}
	s := "without "
	for i, lag := range lagsOf(mask) {
		if i > 0 {
			s += " and "
		}
		s += LagLabel(lag)
	}
	return s
}

// lagShares attributes the gap between the scenario (subset 0) and the run without any lag
// (the last subset) to the lags by their Shapley values, in attainment points and GPU-hours.
// The GPU-hour shares are costs: what the lag adds (the Shapley value of removing it, negated).
func lagShares(subsets []LagSubset) (shares []LagShare, attGap, gpuGap *float64) {
	var att, gpu [8]float64
	for mask, s := range subsets {
		if s.Status != StatusDone || s.Attainment == nil || s.GPUHours == nil {
			return nil, nil, nil
		}
		att[mask] = *s.Attainment * 100
		gpu[mask] = *s.GPUHours
	}
	pa, pg := Shapley3(att), Shapley3(gpu)
	for i, lag := range Lags {
		shares = append(shares, LagShare{Lag: lag, Label: LagLabel(lag), AttainmentPoints: pa[i], GPUHours: -pg[i]})
	}
	// The costliest first: by the attainment points as the answer shows them (to 0.1), then,
	// when those are equal (often all 0 on a night every fleet serves), by the GPU-hours the
	// lag adds.
	slices.SortStableFunc(shares, func(a, b LagShare) int {
		if c := cmp.Compare(shownPoints(b.AttainmentPoints), shownPoints(a.AttainmentPoints)); c != 0 {
			return c
		}
		return cmp.Compare(b.GPUHours, a.GPUHours)
	})
	a, g := att[7]-att[0], gpu[0]-gpu[7]
	return shares, &a, &g
}

// withoutLags is the scenario with the lags of mask removed (bit i: Lags[i]); mask 0 is the
// scenario itself, unchanged, so its run is the scenario's own. The model-3 shorthand is first
// written as the behavior it means, so shortening the interval does not change its policies'
// periods.
//
//   - signal: metric_delay_ms 0 and interval_ms at most LagFreeIntervalMS;
//   - decision: the behavior path with both windows 0 and policies that allow any change
//     (scale up by max_workers pods, down by 100 %), select max; tolerances are kept: a dead
//     band is not a lag;
//   - warm-up: startup_ms and pending_ms 0.
func withoutLags(base *sim.Scenario, mask int) *sim.Scenario {
	if mask == 0 {
		return base
	}
	sc := *base
	a := explicitBehavior(*base.Autoscaler)
	if mask&1 != 0 {
		a.MetricDelayMS = 0
		a.IntervalMS = min(a.IntervalMS, LagFreeIntervalMS)
	}
	if mask&2 != 0 {
		removeDecisionLag(&a)
	}
	if mask&4 != 0 {
		a.StartupMS, a.PendingMS = 0, 0
	}
	sc.Autoscaler = &a
	sc.Name = withNameSuffix(base.Name, "diagnose: "+subsetLabel(mask))
	return &sc
}

// explicitBehavior writes the model-3 shorthand as the behavior it means
// (Autoscaler.ControllerSettings); an autoscaler without shorthand is returned as it is.
func explicitBehavior(a sim.Autoscaler) sim.Autoscaler {
	if a.Behavior != nil || !a.UsesShorthand() {
		a.Behavior = a.Behavior.Clone()
		return a
	}
	period := int64(math.Round(a.IntervalMS))
	up := &sim.ScalingRules{Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: a.MaxWorkers, PeriodMS: period}}}
	down := &sim.ScalingRules{Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 100, PeriodMS: period}}}
	if a.ScaleUpWindowMS != nil {
		w := int64(math.Round(*a.ScaleUpWindowMS))
		up.WindowMS = &w
	}
	if a.ScaleDownWindowMS != nil {
		w := int64(math.Round(*a.ScaleDownWindowMS))
		down.WindowMS = &w
	}
	if k := a.MaxAddPerTick.Ptr(); k != nil {
		up.Policies[0].Value = *k
	}
	if k := a.MaxRemovePerTick.Ptr(); k != nil {
		down.Policies[0] = sim.ScalingPolicy{Type: sim.PolicyTypePods, Value: *k, PeriodMS: period}
	}
	a.Behavior = &sim.Behavior{ScaleUp: up, ScaleDown: down}
	a.ScaleUpWindowMS, a.ScaleDownWindowMS = nil, nil
	a.MaxAddPerTick, a.MaxRemovePerTick = sim.PerTick{}, sim.PerTick{}
	return a
}

// removeDecisionLag puts the autoscaler on the behavior path with no window and no rate limit.
func removeDecisionLag(a *sim.Autoscaler) {
	zero := int64(0)
	up := &sim.ScalingRules{WindowMS: &zero, Select: sim.SelectPolicyMax,
		Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: a.MaxWorkers, PeriodMS: unlimitedPolicyPeriodMS}}}
	down := &sim.ScalingRules{WindowMS: &zero, Select: sim.SelectPolicyMax,
		Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 100, PeriodMS: unlimitedPolicyPeriodMS}}}
	if b := a.Behavior; b != nil {
		if b.ScaleUp != nil {
			up.Tolerance = b.ScaleUp.Tolerance
		}
		if b.ScaleDown != nil {
			down.Tolerance = b.ScaleDown.Tolerance
		}
	}
	a.Behavior = &sim.Behavior{ScaleUp: up, ScaleDown: down}
	a.DownscaleWindowMS = 0
	a.ScaleUpWindowMS, a.ScaleDownWindowMS = nil, nil
	a.MaxAddPerTick, a.MaxRemovePerTick = sim.PerTick{}, sim.PerTick{}
}

// idealTarget is μ in the controller's milli-units, at least 0.001.
func idealTarget(mu float64) float64 {
	return max(0.001, math.Round(mu*1000)/1000)
}

// idealScenario is the night under the ideal fleet: an ordinary scenario whose autoscaler
// scales on the offered rate λ(t) (the metric offered_rate, known from the workload, an External
// metric) with target μ, tolerance 0 and every lag removed: a decision every second at most
// (never less often than the scenario's), no metric delay, no window, no rate limit, no cold
// start. Each decision then asks ceil(λ/μ) workers within the scenario's bounds, so the fleet
// is max(min_workers, ceil(λ/μ)) and changes only when λ does (a decision after it). It keeps
// the scenario's bounds, select and grace, and makes draining workers active again before it
// starts new ones.
func idealScenario(base *sim.Scenario, target float64) *sim.Scenario {
	sc := *base
	a := *base.Autoscaler
	a.IntervalMS = min(a.IntervalMS, LagFreeIntervalMS)
	a.Metric, a.Source, a.Aggregate = sim.MetricOfferedRate, sim.SourceExternal, sim.AggregateSum
	a.Target = target
	a.Tolerance = 0
	a.MetricDelayMS, a.StartupMS, a.PendingMS = 0, 0, 0
	a.ReuseDraining = true
	removeDecisionLag(&a)
	zero := 0.0
	a.Behavior.ScaleUp.Tolerance, a.Behavior.ScaleDown.Tolerance = &zero, &zero
	sc.Autoscaler = &a
	sc.Name = withNameSuffix(base.Name, fmt.Sprintf("diagnose: the ideal fleet (offered rate ÷ %s requests/s per worker)", formatFloat(target)))
	return &sc
}

// staticScenario is the night on the baseline's fixed fleet (max_workers unless named) and no
// autoscaler.
func staticScenario(base *sim.Scenario, named int) *sim.Scenario {
	sc := *base
	sc.Fleet.Workers = sim.BaselineWorkers(base, named)
	sc.Autoscaler = nil
	sc.Name = withNameSuffix(base.Name, "diagnose: a static fleet of "+Workers(sc.Fleet.Workers))
	return &sc
}

// idealBound is the ideal fleet from the load alone, for a sessions workload: each rate stage
// (or the one steady rate until count sessions have started) needs max(min_workers,
// ceil(λ/μ)) workers, λ = sessions/s × turns. Later turns trail their session's start by the
// think time, so λ is the stage's rate of first turns carried over its turns: a bound, not a
// run. nil for other workloads.
func idealBound(base *sim.Scenario, mu float64) *IdealBound {
	ss := base.Workload.Sessions
	if base.Workload.Type != sim.WorkloadSessions || ss == nil || mu <= 0 {
		return nil
	}
	type stage struct{ durMS, rate float64 }
	var stages []stage
	if len(ss.RateStages) > 0 {
		for _, st := range ss.RateStages {
			stages = append(stages, stage{st.DurationMS, st.RatePerS})
		}
	} else if ss.RatePerS > 0 {
		stages = []stage{{float64(ss.Count) / ss.RatePerS * 1000, ss.RatePerS}}
	}
	b := &IdealBound{Stages: []BoundStage{}}
	minW := base.Autoscaler.MinWorkers
	for _, st := range stages {
		lambda := st.rate * float64(ss.Turns)
		n := max(minW, int(math.Ceil(lambda/mu-1e-9)))
		b.Stages = append(b.Stages, BoundStage{StartMS: b.DurationMS, DurationMS: st.durMS, RatePerS: lambda, Workers: n})
		b.DurationMS += st.durMS
		b.WorkerSeconds += float64(n) * st.durMS / 1000
	}
	if b.DurationMS == 0 {
		return nil
	}
	b.GPUHours = b.WorkerSeconds * float64(base.Fleet.GPUsPerWorker) / 3600
	b.AverageReplicas = b.WorkerSeconds / (b.DurationMS / 1000)
	return b
}

// fleetComparison says attainment and average replicas side by side: "The ideal fleet: 99.1 %
// at 4.2 average replicas; the scenario's autoscaler: 95.8 % at 5.93; a static fleet: 100 % at
// 12."
func fleetComparison(fleets []FleetOutcome) string {
	s := ""
	for _, kind := range []string{FleetIdeal, FleetScenario, FleetNoLag, FleetStatic} {
		for _, f := range fleets {
			if f.Kind != kind {
				continue
			}
			part := f.Label + ": "
			switch {
			case f.Status != StatusDone:
				part += "did not finish (" + f.Status + ")"
			case f.Attainment == nil || f.AverageReplicas == nil:
				part += "no request judged"
			default:
				part += shareNotRoundedUp(*f.Attainment) + " of requests met the SLO at " + formatFloat(roundSignificant(*f.AverageReplicas, 3)) + " average replicas"
			}
			if s == "" {
				s = "With " + part
			} else {
				s += "; " + part
			}
		}
	}
	return s + "."
}

// lagAnswer names the costliest lag first: "Warm-up costs 3.1 points of attainment and adds
// 0.2 GPU-hours; decision lag costs 1.2 points and saves 0.5 GPU-hours; signal lag protects 0.4
// points and adds 0 GPU-hours." A lag "protects" points when removing it lowers attainment
// (a window that damps a controller deciding every second, say).
func lagAnswer(shares []LagShare) string {
	if len(shares) == 0 {
		return ""
	}
	gpu := func(v float64) string {
		verb := "adds"
		if v < 0 {
			verb = "saves"
		}
		return verb + " " + formatFloat(roundSignificant(math.Abs(v), 2)) + " GPU-hours"
	}
	var parts []string
	for i, l := range shares {
		pts := shownPoints(l.AttainmentPoints)
		verb := "costs"
		if pts < 0 {
			verb = "protects"
		}
		unit := " points"
		if i == 0 {
			unit = " points of attainment"
		}
		parts = append(parts, l.Label+" "+verb+" "+formatFloat(math.Abs(pts))+unit+" and "+gpu(l.GPUHours))
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + " (Shapley values over the 8 runs with each set of lags removed)."
}

// signed prints a change with its sign: "+1.2", "−0.5", "0".
func signed(v float64) string {
	switch {
	case v > 0:
		return "+" + formatFloat(v)
	case v < 0:
		return "−" + formatFloat(-v)
	}
	return "0"
}

// shownPoints is attainment points as the answer shows them, to 0.1.
func shownPoints(v float64) float64 { return math.Round(v*10) / 10 }
