package whatif_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

func value(t *testing.T, h []sim.Figure, key string) *float64 {
	t.Helper()
	for _, f := range h {
		if f.Key == key {
			return f.Value
		}
	}
	t.Fatalf("no figure %q", key)
	return nil
}

// Four workers; 2 and 3 run long requests (until 302 and 502 ms), 0 and 1 are idle after 8 ms.
// Removing two workers from 100 ms: by hand, the best is to drain 0 and 1 at once, gone at
// 100 ms with nothing killed; any schedule touching 2 or 3 waits for them or kills a request.
func TestPlanKnownBest(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 100}}
	res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 2}, base, req)
	require.NoError(t, err)
	require.NotNil(t, res.Recommended, res.Reason)
	best := res.Candidates[0]
	assert.Equal(t, res.Recommended.ScenarioID, best.ScenarioID)
	assert.True(t, best.Feasible)
	assert.Equal(t, 100.0, *value(t, best.Headline, "latest_removal_ms"))
	assert.Equal(t, 0.0, *value(t, best.Headline, "requests_killed"))
	assert.Contains(t, res.Recommended.Reason, "gone at 100 ms")
	assert.Regexp(t, `of the \d+ feasible candidates out of \d+\.$`, res.Recommended.Reason)
	assert.NotContains(t, res.Recommended.Reason, "(s)")

	// The recommended schedule, run on its own, drains workers 0 and 1 at 100 ms.
	sc := *base
	sc.ScaleIn = res.Recommended.ScaleIn
	rep, err := sim.Run(context.Background(), &sc, sim.RunOptions{})
	require.NoError(t, err)
	var drained []int
	for _, row := range rep.ScaleIn {
		assert.Equal(t, 100.0, row.AtMS)
		drained = append(drained, row.Drained...)
	}
	assert.ElementsMatch(t, []int{0, 1}, drained)

	// Every schedule drains exactly two workers, none before 100 ms.
	for _, c := range res.Candidates {
		n := 0
		for _, a := range c.ScaleIn {
			assert.GreaterOrEqual(t, a.AtMS, 100.0, c.Label)
			n += a.Count + len(a.Workers)
		}
		assert.Equal(t, 2, n, c.Label)
	}
	// The Pareto front is drawn among the feasible candidates; the best is on it.
	assert.True(t, best.Pareto)
	for _, c := range res.Candidates {
		if c.Pareto {
			assert.True(t, c.Feasible, c.Label)
		}
	}
	// Ranks are 1…n, feasible first.
	for i, c := range res.Candidates {
		assert.Equal(t, i+1, c.Rank)
		if i > 0 && c.Feasible {
			assert.True(t, res.Candidates[i-1].Feasible)
		}
	}

	// Deterministic: the same request gives the same plan, and every run is reused.
	again, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: 1}, base, req)
	require.NoError(t, err)
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(again)
	assert.JSONEq(t, string(a), string(b))
}

func TestPlanReusesRuns(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	r := &whatif.LocalRunner{Parallel: 2}
	req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 100}}
	first, err := whatif.Plan(context.Background(), r, base, req)
	require.NoError(t, err)
	assert.Zero(t, first.Reused)
	second, err := whatif.Plan(context.Background(), r, base, req)
	require.NoError(t, err)
	assert.Equal(t, second.Runs, second.Reused, "a second identical plan simulates nothing")
}

// Two workers; worker 1 runs one request until 302 ms. Draining it from 100 ms kills that
// request unless the grace reaches 302 − 100 = 202 ms: the bisection (1 ms steps) finds 202.
func TestPlanBisectsTheSmallestSafeGrace(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	base.Fleet.Workers = 2
	base.Workload.Requests = base.Workload.Requests[:1]
	one := 1
	base.Workload.Requests[0].RouteTo = &one
	rep, err := sim.Run(context.Background(), base, sim.RunOptions{})
	require.NoError(t, err)
	done := rep.Summary.DurationMS
	require.Equal(t, 302.0, done)

	for _, probes := range []int{1, 2, 5} {
		req := whatif.Request{Goal: whatif.Goal{Remove: 1, StartMS: 100},
			Search: whatif.Search{Selections: []string{sim.SelectHighestID}, GraceStepMS: 1, GraceProbes: probes}}
		res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{}, base, req)
		require.NoError(t, err)
		smallestSafe, largestUnsafe, grace := -1.0, -1.0, 0
		for _, c := range res.Candidates {
			if c.Stage != whatif.StageGrace {
				continue
			}
			grace++
			killed := *value(t, c.Headline, "requests_killed")
			if killed == 0 && (smallestSafe < 0 || *c.GraceMS < smallestSafe) {
				smallestSafe = *c.GraceMS
			}
			if killed > 0 && *c.GraceMS > largestUnsafe {
				largestUnsafe = *c.GraceMS
			}
		}
		assert.Equal(t, 202.0, smallestSafe, "%d probes", probes)
		assert.Equal(t, 201.0, largestUnsafe, "%d probes", probes)
		assert.LessOrEqual(t, res.Runs, whatif.DefaultMaxPlanRuns)
		t.Logf("%d probe(s) a round: %d graces simulated", probes, grace)
	}
}

func TestPlanNothingFeasible(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	limit := 1.0
	req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 100}, Constraints: whatif.Constraints{TTFTP99MS: &limit}}
	res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{}, base, req)
	require.NoError(t, err)
	assert.Nil(t, res.Recommended)
	assert.Contains(t, res.Reason, "none of the")
	assert.Contains(t, res.Reason, "TTFT p99 3 ms is above the limit of 1 ms")
	for _, c := range res.Candidates {
		assert.False(t, c.Feasible)
		assert.NotEmpty(t, c.Violations)
	}
}

func TestPlanRunBudget(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 100}, Search: whatif.Search{MaxRuns: 4}}
	res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{}, base, req)
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Runs, 4)
	assert.NotEmpty(t, res.Notes)
	assert.Contains(t, res.Notes[0], "search.max_runs 4")
}

func TestNormalizeErrors(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	neg := int64(-1)
	cases := []struct {
		name     string
		req      whatif.Request
		wantPath string
	}{
		{"remove zero", whatif.Request{}, "goal.remove"},
		{"remove all", whatif.Request{Goal: whatif.Goal{Remove: 4}}, "goal.remove"},
		{"start negative", whatif.Request{Goal: whatif.Goal{Remove: 1, StartMS: -1}}, "goal.start_ms"},
		{"max killed negative", whatif.Request{Goal: whatif.Goal{Remove: 1}, Constraints: whatif.Constraints{MaxKilled: &neg}}, "constraints.max_killed"},
		{"unknown selection", whatif.Request{Goal: whatif.Goal{Remove: 1}, Search: whatif.Search{Selections: []string{"random"}}}, "search.selections[0]"},
		{"waves above remove", whatif.Request{Goal: whatif.Goal{Remove: 2}, Search: whatif.Search{Waves: []int{1, 3}}}, "search.waves[1]"},
		{"gap zero", whatif.Request{Goal: whatif.Goal{Remove: 2}, Search: whatif.Search{GapsMS: []float64{0}}}, "search.gaps_ms[0]"},
		{"max runs one", whatif.Request{Goal: whatif.Goal{Remove: 2}, Search: whatif.Search{MaxRuns: 1}}, "search.max_runs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := whatif.Normalize(base, tc.req)
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.wantPath, ve.Errors[0].Path, ve.Error())
		})
	}
}

// shuffledRunner finishes each call after a random pause, so the planner's concurrent calls
// end in a different order each time.
type shuffledRunner struct {
	inner whatif.Runner
	rng   *rand.Rand
	mu    sync.Mutex
}

func (s *shuffledRunner) Run(ctx context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	s.mu.Lock()
	pause := time.Duration(s.rng.IntN(20)) * time.Millisecond
	s.mu.Unlock()
	time.Sleep(pause)
	return s.inner.Run(ctx, scs)
}

// The same request gives the same plan whatever the slot count and the order runs finish in,
// with three grace searches running at once, with and without a budget that cuts them short.
func TestPlanDeterministicAcrossSlotsAndOrder(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	for _, maxRuns := range []int{0, 24} {
		req := whatif.Request{Goal: whatif.Goal{Remove: 2, StartMS: 100}, Search: whatif.Search{GraceStepMS: 1, GraceProbes: 3, MaxRuns: maxRuns}}
		var want string
		runners := map[string]whatif.Runner{
			"1 slot":  &whatif.LocalRunner{Parallel: 1},
			"4 slots": &whatif.LocalRunner{Parallel: 4},
		}
		for seed := range uint64(4) {
			runners[fmt.Sprintf("shuffled %d", seed)] = &shuffledRunner{inner: &whatif.LocalRunner{Parallel: 3}, rng: rand.New(rand.NewPCG(seed, 1))}
		}
		for _, name := range slices.Sorted(maps.Keys(runners)) {
			res, err := whatif.Plan(context.Background(), runners[name], base, req)
			require.NoError(t, err, name)
			b, err := json.Marshal(res)
			require.NoError(t, err)
			if want == "" {
				want = string(b)
				searches := map[string]bool{}
				for _, c := range res.Candidates {
					if c.Stage == whatif.StageGrace {
						searches[fmt.Sprint(c.Selection, c.Waves)] = true
					}
				}
				require.Len(t, searches, 3, "three grace searches")
				if maxRuns > 0 {
					require.Equal(t, maxRuns, res.Runs)
					require.Contains(t, res.Notes[len(res.Notes)-1], "cut short 3 of the 3 grace search(es)")
				}
				continue
			}
			assert.JSONEq(t, want, string(b), "max_runs %d, %s", maxRuns, name)
		}
	}
}
