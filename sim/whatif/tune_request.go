package whatif

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
)

// TuneAutoscaler is the only goal.tune value: search the scenario's autoscaler settings.
const TuneAutoscaler = "autoscaler"

// Tune plan defaults (docs/planning.md, "Tuning the autoscaler", explains each).
const (
	DefaultRefineTop     = 3
	maxMigrationLimit    = 100
	minTuneRuns          = 3 // the two baselines and one candidate
	maxTuneSettingMS     = 1e10
	tuneSignificantDigit = 6
)

// DefaultTargetFactors multiply the scenario's target into the default target list.
var DefaultTargetFactors = []float64{0.5, 0.75, 1, 1.5, 2}

// DefaultScaleDownWindowsMS are the default scale-down windows: none, one minute and HPA's
// default of five minutes.
var DefaultScaleDownWindowsMS = []float64{0, 60000, 300000}

// tunePolicies are the selections an autoscaler can use (the worker sets of a drain plan need a
// fixed count of workers, which an autoscaler does not have).
var tunePolicies = []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached}

// normalizeTune fills the tune plan's defaults and checks its request against the base
// scenario, which must have an autoscaler. The fields of a drain plan are refused by name
// rather than ignored.
func normalizeTune(base *sim.Scenario, req Request) (Request, error) {
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	g := req.Goal
	if g.Tune != TuneAutoscaler {
		add("goal.tune", "must be %q, the only setting a tune plan searches (got %q)", TuneAutoscaler, g.Tune)
	}
	if g.Remove != 0 {
		add("goal.remove", "is for a drain plan; leave it out with goal.tune (got %d)", g.Remove)
	}
	if g.StartMS != 0 {
		add("goal.start_ms", "is for a drain plan; leave it out with goal.tune (got %v)", g.StartMS)
	}
	if msg := sim.CheckBaselineWorkers("goal.baseline_workers", g.BaselineWorkers); msg != "" {
		add("goal.baseline_workers", "%s", msg[len("goal.baseline_workers: "):])
	}
	a := base.Autoscaler
	if a == nil {
		add("goal.tune", "needs a scenario with an autoscaler (docs/model.md#model-3): add an \"autoscaler\" object (its settings are where the search starts) and plan again")
		a = &sim.Autoscaler{Target: 1, Select: sim.SelectHighestID} // keeps checking the rest
	}
	c := normalizeConstraints(add, base, req.Constraints)

	s := req.Search
	for _, f := range []struct {
		path string
		set  bool
	}{
		{"search.waves", s.Waves != nil}, {"search.gaps_ms", s.GapsMS != nil},
		{"search.bisect_grace", s.BisectGrace != nil}, {"search.bisect_top", s.BisectTop != 0},
		{"search.grace_step_ms", s.GraceStepMS != 0}, {"search.grace_probes", s.GraceProbes != 0},
		{"search.guard", s.Guard != nil},
	} {
		if f.set {
			add(f.path, "is for a drain plan (goal.remove); a tune plan does not use it: leave it out")
		}
	}

	if s.Targets == nil {
		for _, f := range DefaultTargetFactors {
			s.Targets = append(s.Targets, roundSignificant(f*a.Target, tuneSignificantDigit))
		}
	}
	checkList(add, "search.targets", len(s.Targets))
	for i, v := range s.Targets {
		if math.IsNaN(v) || v <= 0 || v > 1e9 {
			add(fmt.Sprintf("search.targets[%d]", i), "must be a positive target value of the autoscaler's metric (%s), up to 1e9 (got %v)", a.Metric, v)
		}
	}
	if s.ScaleDownWindowsMS == nil {
		s.ScaleDownWindowsMS = slices.Clone(DefaultScaleDownWindowsMS)
	}
	checkList(add, "search.scale_down_windows_ms", len(s.ScaleDownWindowsMS))
	for i, v := range s.ScaleDownWindowsMS {
		if math.IsNaN(v) || v < 0 || v > maxTuneSettingMS {
			add(fmt.Sprintf("search.scale_down_windows_ms[%d]", i), "must be a number of ms from 0 to 1e10 (got %v)", v)
		}
	}
	if s.MaxRemovePerTick == nil {
		one := 1
		s.MaxRemovePerTick = []*int{&one, nil}
	}
	checkList(add, "search.max_remove_per_tick", len(s.MaxRemovePerTick))
	for i, v := range s.MaxRemovePerTick {
		if v != nil && (*v < 1 || *v > 1e6) {
			add(fmt.Sprintf("search.max_remove_per_tick[%d]", i), "must be a number of workers from 1 to 1e6, or null for no limit (got %d)", *v)
		}
	}
	if s.ScaleDownPolicies == nil && a.Behavior != nil {
		s.ScaleDownPolicies = DefaultScaleDownPolicies()
	}
	if s.ScaleDownPolicies != nil {
		checkList(add, "search.scale_down_policies", len(s.ScaleDownPolicies))
	}
	for i, list := range s.ScaleDownPolicies {
		lp := fmt.Sprintf("search.scale_down_policies[%d]", i)
		if len(list) == 0 || len(list) > sim.MaxPolicies {
			add(lp, `must be a list of 1 to %d policies like [{"type": "percent", "value": 10, "period_ms": 60000}]`, sim.MaxPolicies)
		}
		for j, pol := range list {
			pp := fmt.Sprintf("%s[%d]", lp, j)
			if pol.Type != sim.PolicyTypePods && pol.Type != sim.PolicyTypePercent {
				add(pp+".type", `must be "pods" or "percent" (got %q)`, pol.Type)
			}
			if pol.Value < 1 || pol.Value > math.MaxInt32 { // the scenario's bound (sim.Parse)
				add(pp+".value", "must be an integer in [1, %d] (got %d)", math.MaxInt32, pol.Value)
			}
			if pol.PeriodMS < 1 || pol.PeriodMS > sim.MaxPolicyPeriodMS {
				add(pp+".period_ms", "must be an integer in [1, %d] (got %d)", sim.MaxPolicyPeriodMS, pol.PeriodMS)
			}
		}
	}
	if s.Selections == nil {
		s.Selections = slices.Clone(tunePolicies)
	}
	checkList(add, "search.selections", len(s.Selections))
	for i, sel := range s.Selections {
		if !slices.Contains(tunePolicies, sel) {
			add(fmt.Sprintf("search.selections[%d]", i), "must be one of the autoscaler's policies %q (got %q)", tunePolicies, sel)
		}
	}
	if s.GraceMS == nil {
		s.GraceMS = defaultTuneGraces(a.GraceMS)
	}
	checkList(add, "search.grace_ms", len(s.GraceMS))
	for i, v := range s.GraceMS {
		if v != nil && (math.IsNaN(*v) || *v < 0 || *v > 1e9) {
			add(fmt.Sprintf("search.grace_ms[%d]", i), "must be a number of ms from 0 to 1e9, or null for no grace (got %v)", *v)
		}
	}
	if s.MigrationLimits == nil {
		m := base.Router.MigrationLimit
		s.MigrationLimits = uniqueInts([]int{max(0, m-1), m, m + 1})
		if m == 0 {
			s.MigrationLimits = []int{0, 1, 2}
		}
	}
	checkList(add, "search.migration_limits", len(s.MigrationLimits))
	for i, v := range s.MigrationLimits {
		if v < 0 || v > maxMigrationLimit {
			add(fmt.Sprintf("search.migration_limits[%d]", i), "must be from 0 (no migration) to %d (got %d)", maxMigrationLimit, v)
		}
	}
	if s.RefineTop == 0 {
		s.RefineTop = DefaultRefineTop
	} else if s.RefineTop < 0 || s.RefineTop > maxSearchValues {
		add("search.refine_top", "must be between 1 and %d (got %d); 0 or leaving it out takes the default %d", maxSearchValues, s.RefineTop, DefaultRefineTop)
	}
	if s.MaxRuns == 0 {
		s.MaxRuns = DefaultMaxPlanRuns
	} else if s.MaxRuns < minTuneRuns || s.MaxRuns > maxPlanRunsLimit {
		add("search.max_runs", "must be between %d (the two baselines and one candidate) and %d (got %d); 0 or leaving it out takes the default %d", minTuneRuns, maxPlanRunsLimit, s.MaxRuns, DefaultMaxPlanRuns)
	}
	if len(errs) > 0 {
		return req, &sim.ValidationError{Errors: errs}
	}
	return Request{Goal: g, Constraints: c, Search: s}, nil
}

// DefaultScaleDownPolicies are the scale-down policy lists a tune plan tries on a scenario
// with a behavior: one worker a minute, 10 % and 50 % of the fleet a minute, and Kubernetes'
// default (100 % per 15 s).
func DefaultScaleDownPolicies() [][]sim.ScalingPolicy {
	return [][]sim.ScalingPolicy{
		{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 60000}},
		{{Type: sim.PolicyTypePercent, Value: 10, PeriodMS: 60000}},
		{{Type: sim.PolicyTypePercent, Value: 50, PeriodMS: 60000}},
		{{Type: sim.PolicyTypePercent, Value: 100, PeriodMS: 15000}},
	}
}

// rejectTuneSearch names the tune plan's search fields in a drain plan's request.
func rejectTuneSearch(add func(string, string, ...any), s Search) {
	for _, f := range []struct {
		path string
		set  bool
	}{
		{"search.targets", s.Targets != nil}, {"search.scale_down_windows_ms", s.ScaleDownWindowsMS != nil},
		{"search.max_remove_per_tick", s.MaxRemovePerTick != nil}, {"search.migration_limits", s.MigrationLimits != nil},
		{"search.scale_down_policies", s.ScaleDownPolicies != nil},
		{"search.refine_top", s.RefineTop != 0},
	} {
		if f.set {
			add(f.path, `is for a tune plan (goal {"tune": "autoscaler"}); a drain plan does not use it: leave it out`)
		}
	}
}

// defaultTuneGraces is half, the same and double the scenario's grace; 0, 15 s and 30 s for a
// grace of 0; and no grace, 30 s and 60 s for none.
func defaultTuneGraces(g *float64) []*float64 {
	ms := func(v float64) *float64 { return &v }
	switch {
	case g == nil:
		return []*float64{nil, ms(30000), ms(60000)}
	case *g == 0:
		return []*float64{ms(0), ms(15000), ms(30000)}
	}
	return []*float64{ms(math.Round(*g / 2)), ms(*g), ms(2 * *g)}
}

// roundSignificant rounds to n significant digits, so 0.75 × 0.7 is 0.525 and not
// 0.5249999999999999.
func roundSignificant(v float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}
