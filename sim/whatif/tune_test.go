package whatif_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// fakeTuneRunner answers with outcomes computed from the autoscaler settings by a formula whose
// best point under a limit can be worked out by hand (see TestTuneFakeKnownBest). It counts
// how often each scenario was asked for and marks repeats as reused.
type fakeTuneRunner struct {
	mu    sync.Mutex
	asked map[string]int
}

func (f *fakeTuneRunner) Run(_ context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.asked == nil {
		f.asked = map[string]int{}
	}
	out := make([]whatif.Outcome, len(scs))
	for i, sc := range scs {
		id := sc.ID()
		out[i] = fakeOutcome(sc)
		out[i].Reused = f.asked[id] > 0
		f.asked[id]++
	}
	return out, nil
}

// fakeOutcome: the fixed fleet uses 10 GPU-hours at TTFT p99 1 s. With an autoscaler at factor
// f = target/32: GPU-hours 10 − 2f + window/300 s − 0.5 without a step limit − 0.1 for
// least_loaded + grace/300 s − 0.05 × migration limit; TTFT p99 500 f ms + 100 ms without a
// step limit; one request killed when the grace is under 30 s and nothing migrates.
func fakeOutcome(sc *sim.Scenario) whatif.Outcome {
	o := whatif.Outcome{ScenarioID: sc.ID(), RunID: sc.ID(), Status: whatif.StatusDone}
	fig := func(key string, v float64) sim.Figure { return sim.Figure{Key: key, Value: &v} }
	a := sc.Autoscaler
	if a == nil {
		o.Headline = []sim.Figure{fig("ttft_p99_ms", 1000), fig("e2e_p99_ms", 5000), fig("requests_killed", 0)}
		o.Fleet = whatif.FleetFigures{GPUHours: 10, PeakWorkers: sc.Fleet.Workers}
		return o
	}
	f := a.Target / 32
	gpu := 10 - 2*f + a.ScaleDownWindow()/300000
	ttft := 500 * f
	changes := 6
	if a.ScaleDownStep() == nil {
		gpu -= 0.5
		ttft += 100
		changes = 3
	}
	if a.Select == sim.SelectLeastLoaded {
		gpu -= 0.1
	}
	killed := 0.0
	if a.GraceMS != nil {
		gpu += *a.GraceMS / 300000
		if *a.GraceMS < 30000 && sc.Router.MigrationLimit == 0 {
			killed = 1
		}
	}
	gpu -= 0.05 * float64(sc.Router.MigrationLimit)
	if ps := a.ScaleDownPolicies(); len(ps) == 1 && ps[0].Type == sim.PolicyTypePercent && ps[0].Value == 10 {
		gpu -= 0.3 // a behavior's scale-down policy of 10 % a minute (TestTuneSearchesScaleDownPolicies)
	}
	o.Headline = []sim.Figure{fig("ttft_p99_ms", ttft), fig("e2e_p99_ms", 4000), fig("requests_killed", killed)}
	o.Fleet = whatif.FleetFigures{GPUHours: gpu, FleetChanges: changes, Migrated: int64(sc.Router.MigrationLimit), PeakWorkers: 4}
	return o
}

// autoscaled is the four-worker scenario with an autoscaler at its defaults (target 32,
// window 300 s, no step limit, highest_id, grace 30 s) and no migration.
func autoscaled(t *testing.T) *sim.Scenario {
	t.Helper()
	base := mustScenario(t, "testdata/four-workers.json")
	grace := 30000.0
	base.Autoscaler = &sim.Autoscaler{IntervalMS: 15000, Metric: sim.MetricRequestsPerWorker, Target: 32, Tolerance: 0.1,
		MinWorkers: 1, MaxWorkers: 4, DownscaleWindowMS: 300000, Source: sim.SourcePods, Select: sim.SelectHighestID, GraceMS: &grace, StartupMS: 120000}
	return base
}

func tuneRequest(ttftLimit float64) whatif.Request {
	return whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}, Constraints: whatif.Constraints{TTFTP99MS: &ttftLimit}}
}

// By hand, under a TTFT limit of 800 ms: the coarse grid (target × window, the rest as in the
// scenario, so no step limit: TTFT 500 f + 100) is feasible up to f = 1, best at f = 1 and
// window 0 (7.6 GPU-hours). Refining it, least_loaded saves 0.1, migration limit 2 saves 0.1,
// a grace of 15 s kills (no migration) and 60 s costs more, a step limit of 1 costs 0.5; the
// combination least_loaded + migration 2 gives 7.4, the best: 26 % under the fixed fleet's 10
// and 14 % under the scenario's own 8.6 (window 300 s).
func TestTuneFakeKnownBest(t *testing.T) {
	base := autoscaled(t)
	res, err := whatif.Plan(context.Background(), &fakeTuneRunner{}, base, tuneRequest(800))
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	best := res.Candidates[0]
	assert.Equal(t, whatif.StageCombine, best.Stage)
	assert.Equal(t, "target 32, window 0 s, no step limit, least_loaded, grace 30 s, migration limit 2", best.Label)
	assert.InDelta(t, 7.4, best.Fleet.GPUHours, 1e-9)
	// What the manifests carry is "Set …"; which pods go first is said apart.
	assert.Equal(t, "Set target 32 requests per worker and no scale-down window, any number of workers a step, grace 30 s, migration limit 2: "+
		"26 % fewer GPU-hours than a fixed fleet of 4 workers, the autoscaler's maximum (and 14 % fewer than your settings), TTFT p99 600 ms (limit 800 ms), nothing killed, 2 requests migrated. "+
		"Not in the manifests: the simulation drained least loaded first (autoscaler.select, yours highest id first); an HPA cannot say which pods go first, Kubernetes chooses them (controller.kubernetes.io/pod-deletion-cost can steer it).",
		res.Recommended.Reason)
	require.NotNil(t, res.Recommended.Autoscaler)
	assert.Equal(t, 0.0, res.Recommended.Autoscaler.ScaleDownWindow())
	assert.Equal(t, sim.SelectLeastLoaded, res.Recommended.Autoscaler.Select)
	assert.Equal(t, 2, *res.Recommended.MigrationLimit)

	// Both baselines ran and are reported with their figures.
	require.Len(t, res.Baselines, 2)
	assert.Equal(t, "fixed fleet of 4 workers, the autoscaler's maximum", res.Baselines[0].Label)
	assert.Equal(t, 10.0, res.Baselines[0].Fleet.GPUHours)
	assert.Nil(t, res.Baselines[0].Autoscaler)
	assert.Equal(t, whatif.StageYours, res.Baselines[1].Stage)
	assert.InDelta(t, 8.6, res.Baselines[1].Fleet.GPUHours, 1e-9)

	// Feasible first, then by GPU-hours; ranks 1…n; every feasible candidate meets the limit.
	for i, c := range res.Candidates {
		assert.Equal(t, i+1, c.Rank)
		if c.Feasible {
			assert.LessOrEqual(t, *value(t, c.Headline, "ttft_p99_ms"), 800.0, c.Label)
			if i > 0 {
				require.True(t, res.Candidates[i-1].Feasible)
				assert.LessOrEqual(t, res.Candidates[i-1].Fleet.GPUHours, c.Fleet.GPUHours)
			}
		} else {
			assert.NotEmpty(t, c.Violations, c.Label)
		}
	}
	// The coarse grid is every target × window; no label is listed twice.
	coarse := 0
	labels := map[string]bool{}
	for _, c := range res.Candidates {
		if c.Stage == whatif.StageCoarse {
			coarse++
		}
		assert.False(t, labels[c.Label], c.Label)
		labels[c.Label] = true
	}
	assert.Equal(t, 5*3-1, coarse, "15 points, one of them the scenario's own settings")
	// The Pareto front (GPU-hours against TTFT p99) holds the best and only feasible candidates.
	assert.True(t, best.Pareto)
	for _, c := range res.Candidates {
		if c.Pareto {
			assert.True(t, c.Feasible, c.Label)
		}
	}
	assert.LessOrEqual(t, res.Runs, whatif.DefaultMaxPlanRuns)
}

func TestTuneDeterministicAcrossSlotsAndOrder(t *testing.T) {
	base := autoscaled(t)
	for _, maxRuns := range []int{0, 12} {
		req := tuneRequest(800)
		req.Search.MaxRuns = maxRuns
		var want string
		runners := map[string]whatif.Runner{"fake": &fakeTuneRunner{}}
		for seed := range uint64(5) {
			runners[fmt.Sprintf("shuffled %d", seed)] = &shuffledRunner{inner: &fakeTuneRunner{}, rng: rand.New(rand.NewPCG(seed, 2))}
		}
		for _, name := range slices.Sorted(maps.Keys(runners)) {
			res, err := whatif.Plan(context.Background(), runners[name], base, req)
			require.NoError(t, err, name)
			b, err := json.Marshal(res)
			require.NoError(t, err)
			if want == "" {
				want = string(b)
				if maxRuns > 0 {
					assert.Equal(t, maxRuns, res.Runs)
					assert.Contains(t, res.Notes[0], "search.max_runs 12")
				}
				continue
			}
			assert.JSONEq(t, want, string(b), "max_runs %d, %s", maxRuns, name)
		}
	}
}

func TestTuneReusesRuns(t *testing.T) {
	base := autoscaled(t)
	r := &fakeTuneRunner{}
	first, err := whatif.Plan(context.Background(), r, base, tuneRequest(800))
	require.NoError(t, err)
	assert.Zero(t, first.Reused)
	for id, n := range r.asked {
		assert.Equal(t, 1, n, "scenario %s asked for once within one plan", id)
	}
	second, err := whatif.Plan(context.Background(), r, base, tuneRequest(800))
	require.NoError(t, err)
	assert.Equal(t, second.Runs, second.Reused, "a second identical plan simulates nothing")
	assert.Equal(t, first.Recommended, second.Recommended)
}

// Under 100 ms nothing is feasible; the closest is the lowest TTFT: f = 0.5 with a step limit
// (250 ms), found by refining the closest coarse point (350 ms), and among those the fewest
// GPU-hours (least_loaded and migration limit 2 combined).
func TestTuneNothingFeasible(t *testing.T) {
	res, err := whatif.Plan(context.Background(), &fakeTuneRunner{}, autoscaled(t), tuneRequest(100))
	require.NoError(t, err)
	assert.Nil(t, res.Recommended)
	assert.Contains(t, res.Reason, "None of the")
	assert.Contains(t, res.Reason, `the closest, "target 16, window 0 s, 1 worker a step, least_loaded, grace 30 s, migration limit 2"`)
	assert.Contains(t, res.Reason, "TTFT p99 250 ms is above the limit of 100 ms")
	for _, c := range res.Candidates {
		assert.False(t, c.Feasible)
	}
}

func TestTuneNormalizeDefaults(t *testing.T) {
	base := autoscaled(t)
	req, err := whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}})
	require.NoError(t, err)
	s := req.Search
	assert.Equal(t, []float64{16, 24, 32, 48, 64}, s.Targets)
	assert.Equal(t, []float64{0, 60000, 300000}, s.ScaleDownWindowsMS)
	require.Len(t, s.MaxRemovePerTick, 2)
	assert.Equal(t, 1, *s.MaxRemovePerTick[0])
	assert.Nil(t, s.MaxRemovePerTick[1])
	assert.Equal(t, []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached}, s.Selections)
	require.Len(t, s.GraceMS, 3)
	assert.Equal(t, []float64{15000, 30000, 60000}, []float64{*s.GraceMS[0], *s.GraceMS[1], *s.GraceMS[2]})
	assert.Equal(t, []int{0, 1, 2}, s.MigrationLimits)
	assert.Equal(t, whatif.DefaultRefineTop, s.RefineTop)
	assert.Equal(t, whatif.DefaultMaxPlanRuns, s.MaxRuns)
	assert.Equal(t, int64(0), *req.Constraints.MaxKilled)

	// A kv_usage target of 0.7 gives 0.35 … 1.4 without float noise; migration 2 gives 1, 2, 3.
	base.Autoscaler.Target = 0.7
	base.Router.MigrationLimit = 2
	req, err = whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}})
	require.NoError(t, err)
	assert.Equal(t, []float64{0.35, 0.525, 0.7, 1.05, 1.4}, req.Search.Targets)
	assert.Equal(t, []int{1, 2, 3}, req.Search.MigrationLimits)

	// A drain plan's JSON is unchanged by the tune fields (they are left out), so its id is too.
	drain, err := whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Remove: 1}})
	require.NoError(t, err)
	b, err := json.Marshal(drain)
	require.NoError(t, err)
	for _, key := range []string{"tune", "targets", "scale_down_windows_ms", "max_remove_per_tick", "migration_limits", "refine_top", "e2e_p99_ms"} {
		assert.NotContains(t, string(b), `"`+key+`"`)
	}
}

func TestTuneNormalizeErrors(t *testing.T) {
	base := autoscaled(t)
	noAutoscaler := mustScenario(t, "testdata/four-workers.json")
	tune := whatif.Goal{Tune: whatif.TuneAutoscaler}
	zero, neg := 0, -1.0
	cases := []struct {
		name     string
		base     *sim.Scenario
		req      whatif.Request
		wantPath string
		wantMsg  string
	}{
		{"no autoscaler", noAutoscaler, whatif.Request{Goal: tune}, "goal.tune", "needs a scenario with an autoscaler"},
		{"unknown tune", base, whatif.Request{Goal: whatif.Goal{Tune: "router"}}, "goal.tune", `must be "autoscaler"`},
		{"remove with tune", base, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler, Remove: 1}}, "goal.remove", "is for a drain plan"},
		{"waves with tune", base, whatif.Request{Goal: tune, Search: whatif.Search{Waves: []int{1}}}, "search.waves", "is for a drain plan"},
		{"target zero", base, whatif.Request{Goal: tune, Search: whatif.Search{Targets: []float64{8, 0}}}, "search.targets[1]", "must be a positive target"},
		{"empty windows", base, whatif.Request{Goal: tune, Search: whatif.Search{ScaleDownWindowsMS: []float64{}}}, "search.scale_down_windows_ms", "at least one value"},
		{"step zero", base, whatif.Request{Goal: tune, Search: whatif.Search{MaxRemovePerTick: []*int{&zero}}}, "search.max_remove_per_tick[0]", "or null for no limit"},
		{"worker set", base, whatif.Request{Goal: tune, Search: whatif.Search{Selections: []string{whatif.SelectLeastWork}}}, "search.selections[0]", "autoscaler's policies"},
		{"grace negative", base, whatif.Request{Goal: tune, Search: whatif.Search{GraceMS: []*float64{&neg}}}, "search.grace_ms[0]", "or null for no grace"},
		{"migration too high", base, whatif.Request{Goal: tune, Search: whatif.Search{MigrationLimits: []int{101}}}, "search.migration_limits[0]", "from 0"},
		{"max runs two", base, whatif.Request{Goal: tune, Search: whatif.Search{MaxRuns: 2}}, "search.max_runs", "the two baselines"},
		{"e2e zero", base, whatif.Request{Goal: tune, Constraints: whatif.Constraints{E2EP99MS: new(float64)}}, "constraints.e2e_p99_ms", "positive"},
		{"targets in a drain plan", base, whatif.Request{Goal: whatif.Goal{Remove: 1}, Search: whatif.Search{Targets: []float64{8}}}, "search.targets", "is for a tune plan"},
		{"null grace in a drain plan", base, whatif.Request{Goal: whatif.Goal{Remove: 1}, Search: whatif.Search{GraceMS: []*float64{nil}}}, "search.grace_ms[0]", "no grace is always tried"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := whatif.Normalize(tc.base, tc.req)
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.wantPath, ve.Errors[0].Path, ve.Error())
			assert.Contains(t, ve.Errors[0].Message, tc.wantMsg)
		})
	}
}

// A sweep varies the autoscaler's numbers, its choice fields and its nullable limit and grace.
func TestExpandAutoscalerFields(t *testing.T) {
	base := mustScenario(t, "testdata/lull.json")
	require.Nil(t, base.Autoscaler.ScaleDownStep())
	axes := []whatif.Axis{
		{Path: "autoscaler.target", Values: []any{num("6"), num("18")}},
		{Path: "autoscaler.select", Values: []any{"least_cached"}},
		{Path: "autoscaler.max_remove_per_tick", Values: []any{num("2")}},
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 2)
	a := points[1].Scenario.Autoscaler
	assert.Equal(t, 18.0, a.Target)
	assert.Equal(t, sim.SelectLeastCached, a.Select)
	require.NotNil(t, a.ScaleDownStep())
	assert.Equal(t, 2, *a.ScaleDownStep())

	_, err = whatif.Expand(base, []whatif.Axis{{Path: "autoscaler.select", Values: []any{"random"}}}, sim.ParseEnv{}, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "axes[0].values[0]")
}

// On a scenario with a behavior, a tune plan searches scale-down policies too (docs/model.md#autoscaler):
// the fake makes "10 % per 60 s" save 0.3 GPU-hours, so the recommendation names that policy,
// and every candidate is a valid scenario (a behavior, never with the shorthand).
func TestTuneSearchesScaleDownPolicies(t *testing.T) {
	base := autoscaled(t)
	w := int64(300000)
	base.Autoscaler.Behavior = &sim.Behavior{ScaleDown: &sim.ScalingRules{WindowMS: &w}}
	req, err := whatif.Normalize(base, tuneRequest(800))
	require.NoError(t, err)
	assert.Equal(t, whatif.DefaultScaleDownPolicies(), req.Search.ScaleDownPolicies)
	res, err := whatif.Plan(context.Background(), &fakeTuneRunner{}, base, tuneRequest(800))
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	assert.Contains(t, res.Candidates[0].Label, "at most 10 % of the workers removed per 60 s")
	assert.Contains(t, res.Recommended.Reason, "at most 10 % of the workers removed per 60 s")
	assert.Equal(t, []sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 10, PeriodMS: 60000}}, res.Recommended.Autoscaler.ScaleDownPolicies())
	for _, c := range res.Candidates {
		sc := *base
		sc.Autoscaler = c.Autoscaler
		_, err := sim.Parse(sc.CanonicalJSON(), sim.ParseEnv{})
		require.NoError(t, err, c.Label)
	}

	// A bad policy list is named by its path.
	bad := tuneRequest(800)
	bad.Search.ScaleDownPolicies = [][]sim.ScalingPolicy{{{Type: "pods", Value: 0, PeriodMS: 0}}}
	_, err = whatif.Normalize(base, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "search.scale_down_policies[0][0].value: must be an integer in [1, 2147483647] (got 0)")
	assert.Contains(t, err.Error(), "search.scale_down_policies[0][0].period_ms")
	// A value the scenario itself would refuse is refused here too, not carried into candidates.
	bad.Search.ScaleDownPolicies = [][]sim.ScalingPolicy{{{Type: "pods", Value: math.MaxInt32 + 1, PeriodMS: 60000}}}
	_, err = whatif.Normalize(base, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "search.scale_down_policies[0][0].value: must be an integer in [1, 2147483647] (got 2147483648)")
}
