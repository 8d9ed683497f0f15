package whatif_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

func TestShapley3ByHand(t *testing.T) {
	// v by coalition (bit 0 A, bit 1 B, bit 2 C); worked by hand over the 6 orders: A joins
	// first in ABC and ACB (+1 each), after B in BAC (+2), after C in CAB (+1), last in BCA and
	// CBA (+5 each): (1+1+2+1+5+5)/6 = 2.5; likewise B 3.5 and C 4.
	v := [8]float64{0, 1, 2, 4, 3, 4, 5, 10}
	got := whatif.Shapley3(v)
	assert.InDeltaSlice(t, []float64{2.5, 3.5, 4}, got[:], 1e-12)
}

func TestShapley3Efficiency(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		var v [8]float64
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		phi := whatif.Shapley3(v)
		assert.InDelta(t, v[7]-v[0], phi[0]+phi[1]+phi[2], 1e-12, "the values sum to v(all) − v(none)")
	}
}

// diagnoseBase is the day preset compressed to 24 stages of 30 s (20,000 sessions at most) with
// an slo and all three lags: a 2 s metric delay (and the 15 s interval), the 60 s scale-down
// window, a 30 s cold start.
func diagnoseBase(t *testing.T) *sim.Scenario {
	t.Helper()
	p, ok := sim.PresetByKey("autoscaler-day")
	require.True(t, ok)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(p.JSON, &doc))
	doc["slo"] = map[string]any{"ttft_ms": 500, "tpot_ms": 20}
	doc["autoscaler"].(map[string]any)["metric_delay_ms"] = 2000
	ss := doc["workload"].(map[string]any)["sessions"].(map[string]any)
	ss["count"] = 20000
	for _, st := range ss["rate_stages"].([]any) {
		st.(map[string]any)["duration_ms"] = 30000
	}
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	s, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	return s
}

// lagFake answers a diagnose plan's runs without simulating: it reads which lags a scenario
// has removed from its autoscaler and returns outcome(signal, decision, warmUp removed) for it,
// fixed figures for the probe, the ideal and the static fleet. It records every scenario.
type lagFake struct {
	outcome func(s, d, w bool) (attainment, gpuHours float64)
	mu      sync.Mutex
	asked   []*sim.Scenario
}

func (f *lagFake) Run(_ context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	out := make([]whatif.Outcome, len(scs))
	for i, sc := range scs {
		f.mu.Lock()
		f.asked = append(f.asked, sc)
		f.mu.Unlock()
		att, gpuh, e2e := 0.99, 1.0, 400.0
		a := sc.Autoscaler
		switch {
		case strings.HasPrefix(sc.Name, "capacity probe"):
		case a == nil: // the static fleet
			att, gpuh = 1, 24
		case a.Source == sim.SourceExternal: // the ideal fleet
			att, gpuh = 0.97, 5
		default:
			s := a.MetricDelayMS == 0 && a.IntervalMS == whatif.LagFreeIntervalMS
			d := a.Behavior != nil && a.Behavior.ScaleDown != nil && a.Behavior.ScaleDown.WindowMS != nil && *a.Behavior.ScaleDown.WindowMS == 0
			w := a.StartupMS == 0
			att, gpuh = f.outcome(s, d, w)
		}
		ws, dur := gpuh*3600, 720000.0
		out[i] = whatif.Outcome{ScenarioID: sc.ID(), RunID: sc.ID(), Status: whatif.StatusDone,
			Headline: []sim.Figure{
				{Key: sim.HeadlineSLOAttainment, Value: &att},
				{Key: sim.HeadlineWorkerSeconds, Value: &ws},
				{Key: sim.HeadlineDurationMS, Value: &dur},
			},
			Fleet: whatif.FleetFigures{GPUHours: gpuh, E2EMeanMS: &e2e}}
	}
	return out, nil
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func diagnoseWith(t *testing.T, f *lagFake) *whatif.DiagnoseResult {
	t.Helper()
	req := whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{RatePerWorker: 5}}}
	res, err := whatif.Plan(context.Background(), f, diagnoseBase(t), req)
	require.NoError(t, err)
	require.NotNil(t, res.Diagnose, res.Reason)
	return res.Diagnose
}

func shareOf(t *testing.T, d *whatif.DiagnoseResult, lag string) whatif.LagShare {
	t.Helper()
	for _, l := range d.Lags {
		if l.Lag == lag {
			return l
		}
	}
	t.Fatalf("no share for lag %q in %+v", lag, d.Lags)
	return whatif.LagShare{}
}

func TestDiagnoseAdditiveLags(t *testing.T) {
	// Each lag removed adds its own points and saves its own GPU-hours, whatever else is
	// removed: its Shapley value is exactly that.
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) {
		return 0.90 + 0.004*bit(s) + 0.012*bit(d) + 0.031*bit(w), 10 - 0.5*bit(s) - 4.1*bit(d) - 1.2*bit(w)
	}}
	d := diagnoseWith(t, f)
	for _, c := range []struct {
		lag       string
		pts, gpuh float64
	}{{whatif.LagSignal, 0.4, 0.5}, {whatif.LagDecision, 1.2, 4.1}, {whatif.LagWarmUp, 3.1, 1.2}} {
		l := shareOf(t, d, c.lag)
		assert.InDelta(t, c.pts, l.AttainmentPoints, 1e-9, c.lag)
		assert.InDelta(t, c.gpuh, l.GPUHours, 1e-9, c.lag)
	}
	assert.Equal(t, whatif.LagWarmUp, d.Lags[0].Lag, "the costliest lag first")
	assert.InDelta(t, 4.7, *d.AttainmentGapPoints, 1e-9)
	assert.InDelta(t, 5.8, *d.GPUHoursGap, 1e-9)
	assert.Contains(t, d.Answer, "Warm-up costs 3.1 points of attainment and adds 1.2 GPU-hours; decision lag costs 1.2 points and adds 4.1 GPU-hours; signal lag costs 0.4 points and adds 0.5 GPU-hours (Shapley")
	assert.Contains(t, d.Answer, "Removing all three lags changes attainment by +4.7 points and GPU-hours by −5.8.")

	// 8 distinct subsets, the first the scenario itself; the ideal, the static.
	ids := map[string]bool{}
	for _, s := range d.Subsets {
		ids[s.ScenarioID] = true
	}
	assert.Len(t, ids, 8)
	assert.Equal(t, diagnoseBase(t).ID(), d.Subsets[0].ScenarioID)
	assert.Len(t, f.asked, 10)
}

func TestDiagnoseInteraction(t *testing.T) {
	// Warm-up alone is worth 2 points; removing signal lag is worth 1 point, but only once
	// warm-up is gone too (a fresh signal is no use while new workers take 30 s to serve).
	// By hand: the interaction's point is shared equally between the two lags that make it:
	// warm-up 2 + 0.5, signal 0.5, decision 0; and they sum to the gap, 3 points.
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) {
		return 0.90 + 0.02*bit(w) + 0.01*bit(s)*bit(w), 10
	}}
	d := diagnoseWith(t, f)
	assert.InDelta(t, 2.5, shareOf(t, d, whatif.LagWarmUp).AttainmentPoints, 1e-9)
	assert.InDelta(t, 0.5, shareOf(t, d, whatif.LagSignal).AttainmentPoints, 1e-9)
	assert.InDelta(t, 0, shareOf(t, d, whatif.LagDecision).AttainmentPoints, 1e-9)
	sum := 0.0
	for _, l := range d.Lags {
		sum += l.AttainmentPoints
	}
	assert.InDelta(t, 3, sum, 1e-9)
	assert.InDelta(t, 3, *d.AttainmentGapPoints, 1e-9)
}

func TestDiagnoseFleets(t *testing.T) {
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) { return 0.9, 10 }}
	d := diagnoseWith(t, f)
	byKind := map[string]whatif.FleetOutcome{}
	for _, fl := range d.Fleets {
		byKind[fl.Kind] = fl
	}
	require.Len(t, byKind, 4)
	// Average replicas = worker_seconds ÷ duration: the fake's 5 GPU-hours over 720 s.
	assert.InDelta(t, 5*3600/720.0, *byKind[whatif.FleetIdeal].AverageReplicas, 1e-9)
	assert.InDelta(t, 0.97, *byKind[whatif.FleetIdeal].Attainment, 1e-12)
	assert.Contains(t, d.Comparison, "the ideal fleet: 97 % of requests met the SLO at 25 average replicas")
	// The ideal's target is μ itself, on the offered rate.
	assert.InDelta(t, 5, d.IdealTarget, 1e-12)

	// The bound: the day's 24 stages of 30 s, each max(2, ceil(3 × rate / 5)) workers.
	base := diagnoseBase(t)
	require.NotNil(t, d.Bound)
	assert.Len(t, d.Bound.Stages, 24)
	ws := 0.0
	for i, st := range base.Workload.Sessions.RateStages {
		n := max(2, int(math.Ceil(3*st.RatePerS/5-1e-9)))
		assert.Equal(t, n, d.Bound.Stages[i].Workers, "stage %d", i)
		ws += float64(n) * 30
	}
	assert.InDelta(t, ws, d.Bound.WorkerSeconds, 1e-9)
	assert.InDelta(t, ws/720, d.Bound.AverageReplicas, 1e-9)
}

// Every scenario a diagnose plan builds is one the parser accepts as it is (the same id after
// a round trip through its canonical JSON), and each subset removes what it says.
func TestDiagnoseScenariosAreValid(t *testing.T) {
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) { return 0.9, 10 }}
	diagnoseWith(t, f)
	for _, sc := range f.asked {
		got, err := sim.Parse(sc.CanonicalJSON(), sim.ParseEnv{})
		require.NoError(t, err, sc.Name)
		assert.Equal(t, sc.ID(), got.ID(), sc.Name)
	}
	byName := map[string]*sim.Scenario{}
	for _, sc := range f.asked {
		byName[sc.Name] = sc
	}
	all := byName[diagnoseBase(t).Name+" — diagnose: without signal lag and decision lag and warm-up"]
	require.NotNil(t, all, "names: %v", keys(byName))
	a := all.Autoscaler
	assert.Equal(t, 0.0, a.MetricDelayMS)
	assert.Equal(t, float64(whatif.LagFreeIntervalMS), a.IntervalMS)
	assert.Equal(t, 0.0, a.StartupMS)
	assert.Equal(t, int64(0), *a.Behavior.ScaleDown.WindowMS)
	assert.Equal(t, int64(0), *a.Behavior.ScaleUp.WindowMS)
	w := byName[diagnoseBase(t).Name+" — diagnose: without warm-up"].Autoscaler
	assert.Equal(t, []int{2, 12}, []int{w.MinWorkers, w.MaxWorkers}, "bounds kept")
	assert.Equal(t, 2000.0, w.MetricDelayMS, "the other lags kept")
	assert.Equal(t, int64(60000), *w.Behavior.ScaleDown.WindowMS)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestDiagnoseNeeds(t *testing.T) {
	base := diagnoseBase(t)
	noAuto := *base
	noAuto.Autoscaler = nil
	noSLO := *base
	noSLO.SLO = nil
	for _, c := range []struct {
		name string
		sc   *sim.Scenario
		goal whatif.DiagnoseGoal
		path string
		msg  string
	}{
		{"no autoscaler", &noAuto, whatif.DiagnoseGoal{}, "goal.diagnose", "needs a scenario with an autoscaler"},
		{"no slo", &noSLO, whatif.DiagnoseGoal{}, "goal.diagnose", "needs a scenario with an slo"},
		{"bad rate", base, whatif.DiagnoseGoal{RatePerWorker: -1}, "goal.diagnose.rate_per_worker_per_s", "one worker's capacity"},
		{"bad share", base, whatif.DiagnoseGoal{Capacity: &whatif.CapacityGoal{MinAttainment: 2}}, "goal.diagnose.capacity.min_attainment", "share of requests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := whatif.Normalize(c.sc, whatif.Request{Goal: whatif.Goal{Diagnose: &c.goal}})
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			found := false
			for _, fe := range ve.Errors {
				if fe.Path == c.path && strings.Contains(fe.Message, c.msg) {
					found = true
				}
			}
			assert.True(t, found, "want %s: …%s… in %v", c.path, c.msg, ve.Errors)
		})
	}
}

// On real runs of a shortened day: the plan is the same under 1 and 2 slots, and the shares sum
// to the gap between the scenario and the run without lags.
func TestDiagnoseSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("22 simulated runs")
	}
	base := diagnoseBase(t)
	ss := *base.Workload.Sessions
	ss.RateStages = ss.RateStages[8:16] // the morning's rise: 4 minutes
	base.Workload.Sessions = &ss
	req := whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{RatePerWorker: 4}}}
	var results [2]*whatif.Result
	for i, slots := range []int{1, 2} {
		res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: slots}, base, req)
		require.NoError(t, err)
		require.NotNil(t, res.Diagnose, res.Reason)
		results[i] = res
	}
	a, err := json.Marshal(results[0])
	require.NoError(t, err)
	b, err := json.Marshal(results[1])
	require.NoError(t, err)
	assert.JSONEq(t, string(a), string(b), "the same plan under 1 and 2 slots")

	d := results[0].Diagnose
	t.Logf("%s %s", d.Comparison, d.Answer)
	sum, gpu := 0.0, 0.0
	for _, l := range d.Lags {
		sum += l.AttainmentPoints
		gpu += l.GPUHours
	}
	scenario, noLag := d.Subsets[0], d.Subsets[7]
	assert.InDelta(t, (*noLag.Attainment-*scenario.Attainment)*100, sum, 1e-9)
	assert.InDelta(t, *scenario.GPUHours-*noLag.GPUHours, gpu, 1e-9)
	assert.Equal(t, 10, results[0].Runs)

	// The ideal fleet is the bound, run: within 5 % of its average replicas.
	ideal := d.Fleets[2]
	require.Equal(t, whatif.FleetIdeal, ideal.Kind)
	require.NotNil(t, ideal.AverageReplicas, ideal.Status+" "+ideal.Error)
	require.NotNil(t, d.Bound)
	t.Logf("ideal %.3f average replicas, bound %.3f", *ideal.AverageReplicas, d.Bound.AverageReplicas)
	assert.InEpsilon(t, d.Bound.AverageReplicas, *ideal.AverageReplicas, 0.05)
}

// A lag whose removal lowers attainment (a window that damps a controller) "protects" points.
func TestDiagnoseProtectingLag(t *testing.T) {
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) { return 0.95 - 0.02*bit(d), 10 + bit(d) }}
	d := diagnoseWith(t, f)
	assert.InDelta(t, -2, shareOf(t, d, whatif.LagDecision).AttainmentPoints, 1e-9)
	assert.InDelta(t, -1, shareOf(t, d, whatif.LagDecision).GPUHours, 1e-9)
	assert.Contains(t, d.Answer, "decision lag protects 2 points and saves 1 GPU-hours")
	assert.Contains(t, d.Answer, "changes attainment by −2 points and GPU-hours by +1.")
}

// With the attainment points shown equal (every fleet meets the SLO as often), the answer
// names the costliest lag by GPU-hours first.
func TestDiagnoseEqualPointsOrderByGPUHours(t *testing.T) {
	f := &lagFake{outcome: func(s, d, w bool) (float64, float64) {
		return 0.99, 10 - 0.5*bit(s) - 1*bit(d) - 2*bit(w)
	}}
	d := diagnoseWith(t, f)
	require.Len(t, d.Lags, 3)
	assert.Equal(t, []string{whatif.LagWarmUp, whatif.LagDecision, whatif.LagSignal}, []string{d.Lags[0].Lag, d.Lags[1].Lag, d.Lags[2].Lag})
	assert.True(t, strings.HasPrefix(d.Answer, "Removing all three lags changes attainment by 0 points and GPU-hours by −3.5. Warm-up costs 0 points of attainment and adds 2 GPU-hours"), d.Answer)
}

// TestDiagnoseRealDay is the check on the real thing: the diagnose plan on the 24-hour
// day preset (1.43 M requests) with an slo, its capacity searched, finishes every one of its
// runs (before ids were slots, the ideal fleet and the no-lag run stopped at 16,376 workers);
// the three lag shares add up to the gap, and the ideal fleet's average replicas are within 5 %
// of the computed bound. About 70 s of CPU: SCALEIN_SLOW=1 runs it.
func TestDiagnoseRealDay(t *testing.T) {
	if os.Getenv("SCALEIN_SLOW") != "1" {
		t.Skip("20 runs of a 24-hour day: SCALEIN_SLOW=1 runs it")
	}
	p, ok := sim.PresetByKey("autoscaler-day")
	require.True(t, ok)
	base, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	ttft, tpot := 500.0, 20.0
	base.SLO = &sim.SLO{TTFTMS: &ttft, TPOTMS: &tpot}
	res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 2}, base,
		whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{}}})
	require.NoError(t, err)
	require.NotNil(t, res.Diagnose, res.Reason)
	d := res.Diagnose
	t.Logf("μ %.3f/s; %s %s", d.RatePerWorker, d.Comparison, d.Answer)
	for _, c := range res.Candidates {
		assert.Equal(t, whatif.StatusDone, c.Status, "%s: %s", c.Label, c.Error)
	}
	require.Len(t, d.Lags, 3, "every lag attributed")
	sum := 0.0
	for _, l := range d.Lags {
		sum += l.AttainmentPoints
	}
	require.NotNil(t, d.AttainmentGapPoints)
	assert.InDelta(t, *d.AttainmentGapPoints, sum, 1e-9)
	ideal := d.Fleets[2]
	require.NotNil(t, ideal.AverageReplicas, ideal.Status+" "+ideal.Error)
	t.Logf("ideal %.4f average replicas, bound %.4f", *ideal.AverageReplicas, d.Bound.AverageReplicas)
	assert.InEpsilon(t, d.Bound.AverageReplicas, *ideal.AverageReplicas, 0.05)
}
