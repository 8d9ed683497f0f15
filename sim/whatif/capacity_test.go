package whatif_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// oneRequestMix: one worker that runs a request of 64 tokens and one output token in one pass
// of exactly 3 ms (prefill_ms 2 + decode_ms 1; the other timing terms 0, so cached blocks
// change nothing). With TTFT ≤ 3 ms, requests evenly spaced at least 3 ms apart each run alone
// and meet it; closer than 3 ms, each waits for the pass before it and misses. One worker's
// capacity at the SLO is exactly 1000 / 3 = 333.33 requests/s.
const oneRequestMix = `{"name": "%s",
  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
  "kvcr": {"enabled": false},
  "slo": {"ttft_ms": 3},
  "workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 1, "route_to": 1}]}}`

func oneRequestScenario(t *testing.T, name string) *sim.Scenario {
	t.Helper()
	s, err := sim.Parse([]byte(strings.Replace(oneRequestMix, "%s", name, 1)), sim.ParseEnv{})
	require.NoError(t, err)
	return s
}

func capacityRequest() whatif.Request {
	return whatif.Request{Goal: whatif.Goal{Capacity: &whatif.CapacityGoal{Workers: 1, DurationMS: 1000}}}
}

func TestCapacityByHand(t *testing.T) {
	runner := &whatif.LocalRunner{Parallel: 2}
	res, err := whatif.Plan(context.Background(), runner, oneRequestScenario(t, "mix"), capacityRequest())
	require.NoError(t, err)
	c := res.Capacity
	require.NotNil(t, c)
	require.NotNil(t, c.RatePerWorker, c.Answer)
	require.NotNil(t, c.AboveRate, c.Answer)
	const exact = 1000.0 / 3
	assert.LessOrEqual(t, *c.RatePerWorker, exact)
	assert.Greater(t, *c.AboveRate, exact)
	assert.LessOrEqual(t, *c.AboveRate / *c.RatePerWorker, 1.02)
	assert.True(t, c.Converged)
	assert.LessOrEqual(t, res.Runs, 12)
	assert.Equal(t, 1.0, *c.Attainment)
	assert.Less(t, *c.AboveAttainment, 0.01, "past the capacity every request but the first waits")
	assert.Equal(t, 0.99, c.MinAttainment)
	assert.Equal(t, 1, c.Workers)

	// The curve: every probe by rate, feasible exactly up to 333.33/s.
	require.Len(t, c.Curve, res.Runs)
	for i, p := range c.Curve {
		if i > 0 {
			assert.Less(t, c.Curve[i-1].RatePerWorker, p.RatePerWorker)
		}
		assert.Equal(t, p.RatePerWorker <= exact, p.Feasible, "%v/s", p.RatePerWorker)
		assert.Equal(t, whatif.StatusDone, p.Status)
	}
	assert.Regexp(t, `^One worker serves 3[23]\d(\.\d+)? requests/s within TTFT ≤ 3 ms for 100 % of requests \(goal 99 %\); at 33\d(\.\d+)?/s attainment falls to \d(\.\d+)? %\.$`, c.Answer)
	assert.Equal(t, c.Answer, res.Reason)
	t.Logf("%d runs: %s", res.Runs, c.Answer)
}

// The same mix, timing and routing under another name and another initial fleet reuses every
// probe: the probes are named by their rate and fleet only.
func TestCapacityReusesProbes(t *testing.T) {
	runner := &whatif.LocalRunner{Parallel: 2}
	first, err := whatif.Plan(context.Background(), runner, oneRequestScenario(t, "mix"), capacityRequest())
	require.NoError(t, err)
	other := oneRequestScenario(t, "the same mix, renamed")
	other.Fleet.Workers = 3
	again, err := whatif.Plan(context.Background(), runner, other, capacityRequest())
	require.NoError(t, err)
	assert.Equal(t, again.Runs, again.Reused)
	assert.Equal(t, first.Capacity, again.Capacity)
}

// countingRunner answers from a formula: attainment 1 up to 4.1 requests/s per worker (on
// the probe's fleet), 0.93 above; it records the order in which it was asked.
type countingRunner struct {
	mu        sync.Mutex
	asked     []float64
	scenarios map[float64]*sim.Scenario
}

func (f *countingRunner) Run(_ context.Context, scs []*sim.Scenario) ([]whatif.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]whatif.Outcome, len(scs))
	for i, sc := range scs {
		rate := sc.Workload.Sessions.RatePerS * float64(sc.Workload.Sessions.Turns) / float64(sc.Fleet.Workers)
		f.asked = append(f.asked, rate)
		if f.scenarios == nil {
			f.scenarios = map[float64]*sim.Scenario{}
		}
		f.scenarios[rate] = sc
		v := 1.0
		if rate > 4.1+1e-9 {
			v = 0.93
		}
		out[i] = whatif.Outcome{ScenarioID: sc.ID(), RunID: sc.ID(), Status: whatif.StatusDone,
			Headline: []sim.Figure{{Key: sim.HeadlineSLOAttainment, Unit: sim.UnitShare, Value: &v}}}
	}
	return out, nil
}

func sessionsWithSLO(t *testing.T) *sim.Scenario {
	s, err := sim.Parse([]byte(`{"name": "chat", "slo": {"ttft_ms": 3000, "tpot_ms": 100},
		"workload": {"type": "sessions", "sessions": {"turns": 3}}}`), sim.ParseEnv{})
	require.NoError(t, err)
	return s
}

func TestCapacityFakeKnownAnswer(t *testing.T) {
	f := &countingRunner{}
	res, err := whatif.Plan(context.Background(), f, sessionsWithSLO(t), whatif.Request{Goal: whatif.Goal{Capacity: &whatif.CapacityGoal{}}})
	require.NoError(t, err)
	c := res.Capacity
	require.NotNil(t, c.RatePerWorker, c.Answer)
	require.NotNil(t, c.AboveRate, c.Answer)
	assert.LessOrEqual(t, *c.RatePerWorker, 4.1)
	assert.Greater(t, *c.AboveRate, 4.1)
	assert.LessOrEqual(t, *c.AboveRate / *c.RatePerWorker, 1.02)
	assert.LessOrEqual(t, res.Runs, 12)
	assert.Len(t, f.asked, res.Runs, "no rate asked twice")
	assert.Equal(t, 4, c.Workers, "default: the scenario's 16 workers, at most 4")
	assert.Equal(t, 300000.0, c.DurationMS)
	assert.Contains(t, c.Answer, "requests/s within TTFT ≤ 3 s and TPOT ≤ 100 ms for 100 % of requests (goal 99 %); at ")
	assert.Contains(t, c.Answer, "/s attainment falls to 93 %.")

	// A session of 3 turns starts at rate × workers ÷ 3 per second, for the duration, on the
	// probe's fixed fleet without scale-in.
	sc := f.scenarios[*c.RatePerWorker]
	require.NotNil(t, sc)
	rate := *c.RatePerWorker * 4 / 3
	assert.Equal(t, rate, sc.Workload.Sessions.RatePerS)
	assert.Equal(t, int(math.Ceil(rate*300)), sc.Workload.Sessions.Count)
	assert.Equal(t, 3, sc.Workload.Sessions.Turns)
	assert.Nil(t, sc.Workload.Sessions.RateStages)
	assert.Nil(t, sc.Autoscaler)
	assert.Empty(t, sc.ScaleIn)
	assert.Equal(t, 4, sc.Fleet.Workers)
	assert.Equal(t, "capacity probe: "+strconv.FormatFloat(*c.RatePerWorker, 'f', -1, 64)+" requests/s per worker on 4 workers", sc.Name)
	assert.Equal(t, sessionsWithSLO(t).SLO, sc.SLO)
}

// The result is a function of the request and the outcomes: the same under 1 and 2 slots.
func TestCapacityDeterministicAcrossSlots(t *testing.T) {
	var out []string
	for _, slots := range []int{1, 2} {
		res, err := whatif.Plan(context.Background(), &whatif.LocalRunner{Parallel: slots}, oneRequestScenario(t, "mix"), capacityRequest())
		require.NoError(t, err)
		b, err := json.Marshal(res)
		require.NoError(t, err)
		out = append(out, string(b))
	}
	assert.Equal(t, out[0], out[1])
}

func TestCapacityValidation(t *testing.T) {
	ttft := 100.0
	cases := []struct {
		name, path, fragment string
		base                 func(*testing.T) *sim.Scenario
		req                  func(*whatif.Request)
	}{
		{"ErrNoSLO", "goal.capacity", "needs a scenario with an slo", func(t *testing.T) *sim.Scenario {
			s := sessionsWithSLO(t)
			s.SLO = nil
			return s
		}, nil},
		{"ErrTrace", "goal.capacity", "needs a sessions or scripted requests workload", func(t *testing.T) *sim.Scenario {
			s := sessionsWithSLO(t)
			s.Workload = sim.Workload{Type: sim.WorkloadTrace, Trace: &sim.TraceSpec{Name: sim.BuiltinMooncakeConversation}}
			return s
		}, nil},
		{"ErrMinAttainment", "goal.capacity.min_attainment", "at most 1", sessionsWithSLO, func(r *whatif.Request) { r.Goal.Capacity.MinAttainment = 99 }},
		{"ErrWorkers", "goal.capacity.workers", "between 1 and 64", sessionsWithSLO, func(r *whatif.Request) { r.Goal.Capacity.Workers = -1 }},
		{"ErrConstraints", "constraints", "only limit is goal.capacity.min_attainment", sessionsWithSLO, func(r *whatif.Request) { r.Constraints.TTFTP99MS = &ttft }},
		{"ErrSearch", "search", "only search.max_runs", sessionsWithSLO, func(r *whatif.Request) { r.Search.Waves = []int{1} }},
		{"ErrWithRemove", "goal", "leave out goal.remove", sessionsWithSLO, func(r *whatif.Request) { r.Goal.Remove = 2 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := whatif.Request{Goal: whatif.Goal{Capacity: &whatif.CapacityGoal{}}}
			if c.req != nil {
				c.req(&req)
			}
			_, err := whatif.Plan(context.Background(), &countingRunner{}, c.base(t), req)
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			found := false
			for _, fe := range ve.Errors {
				found = found || (fe.Path == c.path && strings.Contains(fe.Message, c.fragment))
			}
			assert.True(t, found, "%v", ve)
		})
	}
}
