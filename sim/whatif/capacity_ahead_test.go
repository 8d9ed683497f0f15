package whatif_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// Issue 35: on a runner that can run ahead of need, a capacity search starts the probes of
// the rounds it may reach while a slot would idle. These tests run the same searches on a
// runner that cannot (one round at a time, as before) and on one whose runs end in orders the
// test sets, and compare the results byte for byte.

// probeRate is a capacity probe's rate per worker (sessions probes).
func probeRate(sc *sim.Scenario) float64 {
	ss := sc.Workload.Sessions
	return ss.RatePerS * float64(ss.Turns) / float64(sc.Fleet.Workers)
}

// curveFake answers a capacity probe from its rate: attainment 1 up to capacity, falling
// past it; the probe at broken fails. Other runs (a diagnose plan's) go to other.
type curveFake struct {
	capacity float64
	broken   float64
	other    whatif.Runner
}

func (f *curveFake) Run(ctx context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	out := make([]whatif.Outcome, len(scs))
	for i, sc := range scs {
		if !strings.HasPrefix(sc.Name, "capacity probe") {
			o, err := f.other.Run(ctx, []*sim.Scenario{sc})
			if err != nil {
				return nil, err
			}
			out[i] = o[0]
			continue
		}
		rate := probeRate(sc)
		if rate == f.broken {
			out[i] = whatif.Outcome{ScenarioID: sc.ID(), RunID: sc.ID(), Status: whatif.StatusFailed, Error: "the run failed: broken on purpose"}
			continue
		}
		v := 1.0
		if rate > f.capacity {
			v = min(0.985, f.capacity/rate)
		}
		out[i] = whatif.Outcome{ScenarioID: sc.ID(), RunID: sc.ID(), Status: whatif.StatusDone,
			Headline: []sim.Figure{{Key: sim.HeadlineSLOAttainment, Unit: sim.UnitShare, Value: &v}}}
	}
	return out, nil
}

// aheadFake is an AheadRunner of slots slots answering like inner, each run taking the time
// delay gives it, so runs end in an order the test sets rather than the order they were asked
// in. It records how often each scenario was asked for and said unused, and the most runs in
// flight at once (not counting those whose context is cancelled: their slot is being freed).
type aheadFake struct {
	inner whatif.Runner
	slots int
	delay func(sc *sim.Scenario) time.Duration

	mu          sync.Mutex
	asked       map[string]int
	unused      map[string]int
	inFlight    map[*[]*sim.Scenario]context.Context
	maxInFlight int
	order       []float64 // the rate of each run asked for, in order
}

func (f *aheadFake) Slots() int { return f.slots }

func (f *aheadFake) Unused(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unused[id]++
}

func (f *aheadFake) Run(ctx context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	f.mu.Lock()
	for _, sc := range scs {
		f.asked[sc.ID()]++
		f.order = append(f.order, probeRateOr(sc, 0))
	}
	f.inFlight[&scs] = ctx
	n := 0
	for call, c := range f.inFlight {
		if c.Err() == nil {
			n += len(*call)
		}
	}
	f.maxInFlight = max(f.maxInFlight, n)
	var d time.Duration
	for _, sc := range scs {
		d = max(d, f.delay(sc))
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.inFlight, &scs)
		f.mu.Unlock()
	}()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return f.inner.Run(ctx, scs)
}

func newAheadFake(inner whatif.Runner, slots int, delay func(*sim.Scenario) time.Duration) *aheadFake {
	return &aheadFake{inner: inner, slots: slots, delay: delay, asked: map[string]int{}, unused: map[string]int{},
		inFlight: map[*[]*sim.Scenario]context.Context{}}
}

// orders are the delays the tests try: the lower rate first, the higher first, and random.
func orders() map[string]func() func(*sim.Scenario) time.Duration {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	out := map[string]func() func(*sim.Scenario) time.Duration{
		"lower rate ends first": func() func(*sim.Scenario) time.Duration {
			return func(sc *sim.Scenario) time.Duration { return ms(1 + min(probeRateOr(sc, 1e6), 1e6)/2e5) }
		},
		"higher rate ends first": func() func(*sim.Scenario) time.Duration {
			return func(sc *sim.Scenario) time.Duration { return ms(6 - min(probeRateOr(sc, 0), 1e6)/2e5) }
		},
	}
	for seed := range uint64(3) {
		out[fmt.Sprintf("random %d", seed)] = func() func(*sim.Scenario) time.Duration {
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(seed, 35))
			return func(*sim.Scenario) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				return ms(rng.Float64() * 4)
			}
		}
	}
	return out
}

// probeRateOr is a probe's rate, or or for another run.
func probeRateOr(sc *sim.Scenario, or float64) float64 {
	if strings.HasPrefix(sc.Name, "capacity probe") {
		return probeRate(sc)
	}
	return or
}

func planJSON(t *testing.T, r whatif.Runner, base *sim.Scenario, req whatif.Request) (string, *whatif.Result) {
	t.Helper()
	res, err := whatif.Plan(context.Background(), r, base, req)
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b), res
}

// checkAheadAccounts: every run the result used was run once and never said unused; every
// other run asked for was said unused.
func checkAheadAccounts(t *testing.T, f *aheadFake, used map[string]bool) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for id := range used {
		assert.Equal(t, 1, f.asked[id]-f.unused[id], "used run %s: asked %d, unused %d", id, f.asked[id], f.unused[id])
	}
	for id, n := range f.asked {
		if !used[id] {
			assert.Equal(t, n, f.unused[id], "run %s was asked %d times and not used", id, n)
		}
	}
}

func TestCapacityAheadSameResult(t *testing.T) {
	cases := []struct {
		name    string
		fake    curveFake
		maxRuns int
	}{
		{"converges", curveFake{capacity: 4.1}, 0},
		{"converges within a tight budget", curveFake{capacity: 37.3}, 5},
		{"three runs", curveFake{capacity: 0.9}, 3},
		{"every rate fails", curveFake{capacity: 1e-9}, 0},
		{"every rate meets it", curveFake{capacity: 1e9}, 40},
		{"a probe fails", curveFake{capacity: 4.1, broken: -1}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := whatif.Request{Goal: whatif.Goal{Capacity: &whatif.CapacityGoal{}}, Search: whatif.Search{MaxRuns: c.maxRuns}}
			fake := c.fake
			if fake.broken < 0 { // the fourth rate the search probes fails
				_, first := planJSON(t, &curveFake{capacity: fake.capacity}, sessionsWithSLO(t), req)
				f := newAheadFake(&curveFake{capacity: fake.capacity}, 1, func(*sim.Scenario) time.Duration { return 0 })
				_, _ = planJSON(t, f, sessionsWithSLO(t), req)
				require.Greater(t, len(first.Capacity.Curve), 4)
				fake.broken = f.order[3]
			}
			want, ref := planJSON(t, &fake, sessionsWithSLO(t), req)
			used := map[string]bool{}
			for _, p := range ref.Capacity.Curve {
				used[p.ScenarioID] = true
			}
			assert.Len(t, used, ref.Runs)
			if c.maxRuns > 0 {
				assert.LessOrEqual(t, ref.Runs, c.maxRuns)
			}
			if c.fake.broken != 0 {
				require.NotEmpty(t, ref.Notes)
				assert.Contains(t, ref.Notes[len(ref.Notes)-1], "failed: the run failed: broken on purpose")
			}
			for name, order := range orders() {
				for _, slots := range []int{1, 2, 3} {
					f := newAheadFake(&fake, slots, order())
					got, _ := planJSON(t, f, sessionsWithSLO(t), req)
					assert.Equal(t, want, got, "%s on %d slots", name, slots)
					checkAheadAccounts(t, f, used)
					assert.LessOrEqual(t, f.maxInFlight, slots, "%s: never more runs in flight than slots", name)
				}
			}
		})
	}
}

// Ahead of need is not free: on two slots the searches of TestCapacityAheadSameResult start
// some runs they do not use, but in the converging case the slots are kept busy: the search
// asks for a run beyond the round reached.
func TestCapacityAheadRunsAhead(t *testing.T) {
	fake := curveFake{capacity: 4.1}
	req := whatif.Request{Goal: whatif.Goal{Capacity: &whatif.CapacityGoal{}}}
	_, ref := planJSON(t, &fake, sessionsWithSLO(t), req)
	// The lower rate of a round ends first: when it fails the goal, the next round is known
	// without the higher one, whose slot the next round's lower rate takes at once.
	f := newAheadFake(&fake, 2, orders()["lower rate ends first"]())
	_, res := planJSON(t, f, sessionsWithSLO(t), req)
	assert.Equal(t, ref.Runs, res.Runs)
	total := 0
	for _, n := range f.asked {
		total += n
	}
	assert.Greater(t, total, ref.Runs, "some runs started ahead of need")
	assert.Equal(t, 2, f.maxInFlight)
}

// A diagnose plan's subsets and static fleet fill the slots its capacity search leaves idle;
// its result is the same as one round at a time.
func TestDiagnoseAheadSameResult(t *testing.T) {
	lags := &lagFake{outcome: func(s, d, w bool) (float64, float64) {
		return 0.90 + 0.004*bit(s) + 0.012*bit(d) + 0.031*bit(w), 10 - 0.5*bit(s) - 4.1*bit(d) - 1.2*bit(w)
	}}
	for _, capacity := range []float64{3.3, 1e-9} { // the second finds no capacity: the fillers go unused
		fake := curveFake{capacity: capacity, other: lags}
		req := whatif.Request{Goal: whatif.Goal{Diagnose: &whatif.DiagnoseGoal{}}}
		want, ref := planJSON(t, &fake, diagnoseBase(t), req)
		used := map[string]bool{}
		for _, p := range ref.Capacity.Curve {
			used[p.ScenarioID] = true
		}
		if ref.Diagnose != nil {
			for _, s := range ref.Diagnose.Subsets {
				used[s.ScenarioID] = true
			}
			for _, fl := range ref.Diagnose.Fleets {
				used[fl.ScenarioID] = true
			}
		} else {
			assert.Nil(t, ref.Capacity.RatePerWorker)
		}
		assert.Len(t, used, ref.Runs)
		for name, order := range orders() {
			f := newAheadFake(&fake, 2, order())
			got, _ := planJSON(t, f, diagnoseBase(t), req)
			assert.Equal(t, want, got, "capacity %v, %s", capacity, name)
			checkAheadAccounts(t, f, used)
		}
	}
}

// The command line's runner counts in Usage only the runs a plan used, whatever it started
// ahead of need: simulated runs = the plan's runs on a fresh runner; the others are Wasted.
func TestLocalRunnerLeavesUnusedOut(t *testing.T) {
	for _, slots := range []int{1, 2, 3} {
		runner := &whatif.LocalRunner{Parallel: slots}
		res, err := whatif.Plan(context.Background(), runner, oneRequestScenario(t, "mix"), capacityRequest())
		require.NoError(t, err)
		n, took := runner.Usage()
		assert.Equal(t, res.Runs, n, "%d slots", slots)
		assert.Positive(t, took)
		wasted, wastedTime := runner.Wasted()
		assert.GreaterOrEqual(t, wasted, 0)
		assert.Equal(t, wasted == 0, wastedTime == 0)
		t.Logf("%d slots: %d runs used, %d not (%v)", slots, n, wasted, wastedTime)
	}
}
