package whatif_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

func mustScenario(t *testing.T, file string) *sim.Scenario {
	t.Helper()
	return mustScenarioB(t, file)
}

func mustScenarioB(t testing.TB, file string) *sim.Scenario {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	s, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	return s
}

func num(s string) any { return json.Number(s) }

func TestExpandRowMajor(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	axes := []whatif.Axis{
		{Path: "kvcr.bandwidth_gbps", Values: []any{num("5"), num("40")}},
		{Path: "kvcr.reject_draining_sources", Values: []any{true, false}},
		{Path: "router.policy", Values: []any{"kv_aware"}},
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 4)
	want := [][]any{{num("5"), true}, {num("5"), false}, {num("40"), true}, {num("40"), false}}
	for i, p := range points {
		assert.Equal(t, want[i][0], p.Values[0], "point %d", i)
		assert.Equal(t, want[i][1], p.Values[1], "point %d", i)
		bw, _ := want[i][0].(json.Number).Float64()
		assert.Equal(t, bw, p.Scenario.KVCR.BandwidthGBps)
		assert.Equal(t, want[i][1], p.Scenario.KVCR.RejectDrainingSources)
		assert.Contains(t, p.Scenario.Name, "kvcr.bandwidth_gbps=")
	}
	assert.Equal(t, base.Fleet, points[0].Scenario.Fleet, "other fields stay as in the base")
}

func TestExpandScheduleFields(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	base.ScaleIn = []sim.ScaleInAction{{AtMS: 100, Count: 1, Select: sim.SelectHighestID}}
	axes := []whatif.Axis{
		{Path: "scale_in[0].grace_ms", Values: []any{num("0"), num("50")}}, // absent in the base
		{Path: "scale_in[0].select", Values: []any{"least_loaded"}},
		{Path: "scale_in[0].count", Values: []any{num("2")}},
	}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	require.Len(t, points, 2)
	a := points[1].Scenario.ScaleIn[0]
	require.NotNil(t, a.GraceMS)
	assert.Equal(t, 50.0, *a.GraceMS)
	assert.Equal(t, "least_loaded", a.Select)
	assert.Equal(t, 2, a.Count)
}

func TestExpandErrors(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	base.ScaleIn = []sim.ScaleInAction{{AtMS: 100, Count: 1, Select: sim.SelectHighestID}}
	many := make([]any, 20)
	for i := range many {
		many[i] = json.Number(strconv.Itoa(i + 1))
	}
	cases := []struct {
		name     string
		axes     []whatif.Axis
		wantPath string
		wantMsg  string
	}{
		{"no axes", nil, "axes", "at least one axis"},
		{"four axes", make([]whatif.Axis, 4), "axes", "at most 3"},
		{"unknown field", []whatif.Axis{{Path: "kvcr.bandwith_gbps", Values: []any{num("1")}}}, "axes[0].path", `did you mean "bandwidth_gbps"`},
		{"object", []whatif.Axis{{Path: "fleet.timing", Values: []any{num("1")}}}, "axes[0].path", "is an object"},
		{"list", []whatif.Axis{{Path: "scale_in", Values: []any{num("1")}}}, "axes[0].path", "is a list"},
		{"text", []whatif.Axis{{Path: "workload.type", Values: []any{"sessions"}}}, "axes[0].path", "is a text field"},
		{"name", []whatif.Axis{{Path: "name", Values: []any{"x"}}}, "axes[0].path", "the name does not change"},
		{"report", []whatif.Axis{{Path: "report.per_request", Values: []any{true}}}, "axes[0].path", "report options"},
		{"index out of range", []whatif.Axis{{Path: "scale_in[3].at_ms", Values: []any{num("1")}}}, "axes[0].path", "index 3 is out of range"},
		{"bad syntax", []whatif.Axis{{Path: "kvcr..latency_ms", Values: []any{num("1")}}}, "axes[0].path", "empty field name"},
		{"twice", []whatif.Axis{{Path: "kvcr.latency_ms", Values: []any{num("1")}}, {Path: "kvcr.latency_ms", Values: []any{num("2")}}}, "axes[1].path", "already axes[0]"},
		{"no values", []whatif.Axis{{Path: "kvcr.latency_ms"}}, "axes[0].values", "at least one value"},
		{"wrong type", []whatif.Axis{{Path: "kvcr.latency_ms", Values: []any{num("1"), "fast"}}}, "axes[0].values[1]", "must be a number"},
		{"bool type", []whatif.Axis{{Path: "router.hints", Values: []any{num("1")}}}, "axes[0].values[0]", "true or false"},
		{"bad choice", []whatif.Axis{{Path: "scale_in[0].select", Values: []any{"random"}}}, "axes[0].values[0]", "must be one of"},
		{"scenario rule", []whatif.Axis{{Path: "kvcr.bandwidth_gbps", Values: []any{num("5"), num("0")}}}, "axes[0].values[1]", "kvcr.bandwidth_gbps: must be > 0"},
		{"cross-field rule", []whatif.Axis{{Path: "scale_in[0].count", Values: []any{num("4")}}}, "axes[0].values[0]", "at least one worker must stay active"},
		{"duplicate value", []whatif.Axis{{Path: "kvcr.latency_ms", Values: []any{num("1"), num("1.0")}}}, "axes[0].values[1]", "listed twice"},
		{"too many points", []whatif.Axis{{Path: "kvcr.latency_ms", Values: many}, {Path: "router.host_hit_weight", Values: many}}, "axes", "400 points; the limit is 256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := whatif.Expand(base, tc.axes, sim.ParseEnv{}, 0)
			var ve *sim.ValidationError
			require.ErrorAs(t, err, &ve)
			require.NotEmpty(t, ve.Errors)
			assert.Equal(t, tc.wantPath, ve.Errors[0].Path)
			assert.Contains(t, ve.Errors[0].Message, tc.wantMsg)
		})
	}
}

func TestExpandCombinationError(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	base.ScaleIn = []sim.ScaleInAction{{AtMS: 100, Count: 1, Select: sim.SelectHighestID}}
	// Each value alone is fine; max_num_seqs 200 with max_batched_tokens 100 is not.
	_, err := whatif.Expand(base, []whatif.Axis{
		{Path: "fleet.max_num_seqs", Values: []any{num("4"), num("200")}},
		{Path: "fleet.max_batched_tokens", Values: []any{num("256"), num("100")}},
	}, sim.ParseEnv{}, 0)
	var ve *sim.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "axes", ve.Errors[0].Path)
	assert.Contains(t, ve.Errors[0].Message, "fleet.max_num_seqs=200, fleet.max_batched_tokens=100 gives an invalid scenario: fleet.max_batched_tokens: must be ≥")
}

func TestSweepCSVAndReuse(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	axes := []whatif.Axis{{Path: "kvcr.bandwidth_gbps", Values: []any{num("5"), num("40")}}}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	r := &whatif.LocalRunner{Parallel: 2}
	res, err := whatif.RunSweep(context.Background(), r, axes, points)
	require.NoError(t, err)
	for i, p := range res.Points {
		rep, err := sim.Run(context.Background(), points[i].Scenario, sim.RunOptions{})
		require.NoError(t, err)
		assert.Equal(t, rep.Digest, p.Digest, "point %d equals a direct run", i)
		assert.Equal(t, sim.Headline(rep), p.Headline)
	}
	var buf bytes.Buffer
	require.NoError(t, whatif.WriteCSV(&buf, res.Axes, res.Points))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], "kvcr.bandwidth_gbps,run_id,status,latest_removal_ms,"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "5,"+points[0].Scenario.ID()+",done,"), lines[1])

	outs, err := r.Run(context.Background(), []*sim.Scenario{points[1].Scenario, points[0].Scenario})
	require.NoError(t, err)
	assert.True(t, outs[0].Reused && outs[1].Reused, "a second identical request reuses every run")
	assert.Equal(t, res.Points[1].Digest, outs[0].Digest)
}

// Concurrent calls share the runner's slots and its runs: a scenario two calls ask for at once
// is simulated once, and both get its outcome.
func TestLocalRunnerConcurrentCalls(t *testing.T) {
	base := mustScenario(t, "testdata/four-workers.json")
	axes := []whatif.Axis{{Path: "kvcr.bandwidth_gbps", Values: []any{num("5"), num("10"), num("20"), num("40")}}}
	points, err := whatif.Expand(base, axes, sim.ParseEnv{}, 0)
	require.NoError(t, err)
	scenarios := make([]*sim.Scenario, len(points))
	for i, p := range points {
		scenarios[i] = p.Scenario
	}
	var mu sync.Mutex
	simulated := 0
	r := &whatif.LocalRunner{Parallel: 2, Progress: func(done, total int) {
		mu.Lock()
		simulated = max(simulated, total)
		mu.Unlock()
	}}
	outs := make([][]whatif.Outcome, 3)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			var err error
			outs[i], err = r.Run(context.Background(), slices.Concat(scenarios[i:], scenarios[:i]))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, len(scenarios), simulated, "each scenario simulated once")
	fresh := 0
	for i, o := range outs {
		require.Len(t, o, len(scenarios))
		for j := range o {
			want := scenarios[(i+j)%len(scenarios)].ID()
			assert.Equal(t, want, o[j].ScenarioID)
			assert.Equal(t, whatif.StatusDone, o[j].Status)
			if !o[j].Reused {
				fresh++
			}
		}
	}
	assert.Equal(t, len(scenarios), fresh, "one call per scenario ran it; the others reused it")
}
