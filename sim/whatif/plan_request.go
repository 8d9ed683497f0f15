package whatif

import (
	"fmt"
	"math"
	"slices"

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

// Goal is what the plan must achieve: drain exactly Remove workers, none before StartMS; or,
// with Tune set ("autoscaler"), the autoscaler settings that use the fewest GPU-hours (tune.go);
// or one worker's capacity (Capacity), or the autoscaler's distance from an ideal fleet
// (Diagnose). Kind names which.
type Goal struct {
	Remove  int     `json:"remove"`
	StartMS float64 `json:"start_ms"`
	Tune    string  `json:"tune,omitempty"`
	// Capacity, when set, asks one worker's capacity at the scenario's slo instead (capacity.go).
	Capacity *CapacityGoal `json:"capacity,omitempty"`
	// Diagnose, when set, asks how far the scenario's autoscaler is from an ideal fleet and what
	// each of its lags costs (diagnose.go).
	Diagnose *DiagnoseGoal `json:"diagnose,omitempty"`
	// BaselineWorkers is the size of the fixed fleet a tune or diagnose plan compares with; 0
	// is the autoscaler's max_workers (sim.BaselineWorkers).
	BaselineWorkers int `json:"baseline_workers,omitempty"`
	// Role is the pool a drain plan drains on a scenario with prefill and decode pools
	// ("prefill" or "decode"; docs/planning.md#pools); it is refused without them.
	Role string `json:"role,omitempty"`
}

// Kind is which kind of plan a goal asks for.
type Kind int

// The kinds of plan, one per goal. A goal with several kinds' fields set is the first of
// diagnose, capacity, tune, drain (the kind's Normalize then refuses the others by name).
const (
	KindDrain    Kind = iota // drain Remove workers, none before StartMS (plan.go)
	KindTune                 // the autoscaler's settings with the fewest GPU-hours (tune.go)
	KindCapacity             // one worker's capacity at the slo (capacity.go)
	KindDiagnose             // the autoscaler against an ideal fleet, and its lags' costs (diagnose.go)
)

// Kind is the kind of plan the goal asks for.
func (g Goal) Kind() Kind {
	switch {
	case g.Diagnose != nil:
		return KindDiagnose
	case g.Capacity != nil:
		return KindCapacity
	case g.Tune != "":
		return KindTune
	}
	return KindDrain
}

// String is the kind's name: "drain", "tune", "capacity" or "diagnose" (the plan form's goal
// values).
func (k Kind) String() string {
	switch k {
	case KindTune:
		return "tune"
	case KindCapacity:
		return "capacity"
	case KindDiagnose:
		return "diagnose"
	}
	return "drain"
}

// Constraints make a candidate feasible. MaxKilled defaults to 0; no latency limit by default.
type Constraints struct {
	TTFTP99MS *float64 `json:"ttft_p99_ms"`
	E2EP99MS  *float64 `json:"e2e_p99_ms,omitempty"`
	MaxKilled *int64   `json:"max_killed"`
	// MinAttainment is the least share of requests that must meet the scenario's slo (0.99 is
	// 99 %); nil: not judged. It needs a scenario with an slo.
	MinAttainment *float64 `json:"min_attainment,omitempty"`
}

// Search shapes the candidate space; zero values take the defaults (filled in by Normalize).
type Search struct {
	// Selections: simulator policies and baseline-chosen sets (see allSelections).
	Selections []string `json:"selections"`
	// Waves: how many waves to split the removal into; 1 is all at once, Remove is one by one.
	Waves []int `json:"waves"`
	// GapsMS: time between waves.
	GapsMS []float64 `json:"gaps_ms"`
	// GraceMS: fixed grace periods tried besides "no grace" in the first stage of a drain plan;
	// the graces of a tune plan, where null is "no grace".
	GraceMS []*float64 `json:"grace_ms"`
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

	// The tune plan's lists (goal.tune; tune_request.go has their defaults). Selections and
	// GraceMS above are shared with it.
	Targets            []float64 `json:"targets,omitempty"`
	ScaleDownWindowsMS []float64 `json:"scale_down_windows_ms,omitempty"`
	// MaxRemovePerTick: null is no limit.
	MaxRemovePerTick []*int `json:"max_remove_per_tick,omitempty"`
	// ScaleDownPolicies are scale-down policy lists (a behavior's scale_down.policies,
	// docs/model.md#autoscaler) tried in place of the scenario's; a candidate with one takes the behavior path.
	ScaleDownPolicies [][]sim.ScalingPolicy `json:"scale_down_policies,omitempty"`
	MigrationLimits   []int                 `json:"migration_limits,omitempty"`
	// RefineTop is how many of the best coarse candidates are refined over the other settings.
	RefineTop int `json:"refine_top,omitempty"`
}

// Request is one planning question.
type Request struct {
	Goal        Goal        `json:"goal"`
	Constraints Constraints `json:"constraints"`
	Search      Search      `json:"search"`
}

// Normalize fills the defaults and checks the request against the base scenario. Problems come
// back as a *sim.ValidationError with paths like "goal.remove" or "search.waves[1]".
func Normalize(base *sim.Scenario, req Request) (Request, error) {
	if base.Disaggregation != nil {
		if err := refusePools(req.Goal); err != nil {
			return req, err
		}
		if r := req.Goal.Role; req.Goal.Kind() == KindTune && poolView(base, r).Autoscaler == nil {
			return req, &sim.ValidationError{Errors: []sim.FieldError{{Path: "goal.role",
				Message: fmt.Sprintf("the %s pool has no autoscaler (autoscaler.%s), so there is nothing to tune: add one (its settings are where the search starts), or tune the other pool", r, r)}}}
		}
	} else if req.Goal.Role != "" {
		return req, &sim.ValidationError{Errors: []sim.FieldError{{Path: "goal.role",
			Message: fmt.Sprintf("names a pool (prefill or decode), but the scenario has one fleet (no disaggregation): leave it out (got %q)", req.Goal.Role)}}}
	}
	switch req.Goal.Kind() {
	case KindDiagnose:
		return normalizeDiagnose(base, req)
	case KindCapacity:
		return normalizeCapacity(base, req)
	case KindTune:
		return normalizeTune(poolView(base, req.Goal.Role), req)
	case KindDrain:
	}
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	g := req.Goal
	workers, of := base.Fleet.Workers, ""
	if d := base.Disaggregation; d != nil {
		workers, of = d.Prefill.Workers, " "+g.Role
		if g.Role == sim.RoleDecode {
			workers = d.Decode.Workers
		}
	}
	switch {
	case g.Remove < 1:
		add("goal.remove", "must be at least 1: how many%s workers to drain (got %d)", of, g.Remove)
	case g.Remove > workers-1:
		add("goal.remove", "must leave at least one of the %d%s workers active: at most %d (got %d)", workers, of, workers-1, g.Remove)
	}
	if math.IsNaN(g.StartMS) || g.StartMS < 0 || g.StartMS > 1e10 {
		add("goal.start_ms", "must be an instant in ms between 0 and 1e10 (got %v)", g.StartMS)
	}
	if g.BaselineWorkers != 0 {
		add("goal.baseline_workers", "is the fixed fleet a tune or diagnose plan compares an autoscaler with; a drain plan has none: leave it out (got %d)", g.BaselineWorkers)
	}
	c := normalizeConstraints(add, base, req.Constraints)

	s := req.Search
	rejectTuneSearch(add, s)
	if s.Selections == nil {
		s.Selections = slices.Clone(allSelections)
		if base.Disaggregation != nil {
			s.Selections = poolSelections(g.Role)
		}
	}
	checkList(add, "search.selections", len(s.Selections))
	for i, sel := range s.Selections {
		switch {
		case !slices.Contains(allSelections, sel):
			add(fmt.Sprintf("search.selections[%d]", i), "must be one of %q (got %q)", allSelections, sel)
		case base.Disaggregation != nil && !slices.Contains(poolSelections(g.Role), sel):
			add(fmt.Sprintf("search.selections[%d]", i), "%s %s", sel, poolSelectionWhy(sel, g.Role))
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
		s.GraceMS = []*float64{}
	}
	if len(s.GraceMS) > maxSearchValues {
		add("search.grace_ms", "has %d values; at most %d", len(s.GraceMS), maxSearchValues)
	}
	for i, v := range s.GraceMS {
		switch {
		case v == nil:
			add(fmt.Sprintf("search.grace_ms[%d]", i), "must be a number of ms; no grace is always tried (got null)")
		case math.IsNaN(*v) || *v < 0 || *v > 1e9:
			add(fmt.Sprintf("search.grace_ms[%d]", i), "must be a number of ms from 0 to 1e9 (got %v)", *v)
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
		add("search.max_runs", "must be between 2 and %d (got %d); 0 or leaving it out takes the default %d", maxPlanRunsLimit, s.MaxRuns, DefaultMaxPlanRuns)
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

// normalizeConstraints checks the limits both plan kinds share and fills max_killed's default.
func normalizeConstraints(add func(string, string, ...any), base *sim.Scenario, c Constraints) Constraints {
	checkMinAttainment(add, base, c.MinAttainment)
	if c.TTFTP99MS != nil && (math.IsNaN(*c.TTFTP99MS) || math.IsInf(*c.TTFTP99MS, 0) || *c.TTFTP99MS <= 0) {
		add("constraints.ttft_p99_ms", "must be a positive, finite number of ms, or left out for no TTFT limit (got %v)", *c.TTFTP99MS)
	}
	if c.E2EP99MS != nil && (math.IsNaN(*c.E2EP99MS) || math.IsInf(*c.E2EP99MS, 0) || *c.E2EP99MS <= 0) {
		add("constraints.e2e_p99_ms", "must be a positive, finite number of ms, or left out for no end-to-end limit (got %v)", *c.E2EP99MS)
	}
	if c.MaxKilled == nil {
		zero := int64(0)
		c.MaxKilled = &zero
	} else if *c.MaxKilled < 0 {
		add("constraints.max_killed", "must be 0 or more (got %d)", *c.MaxKilled)
	}
	return c
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
