package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCounterpartFlipsOneToggle(t *testing.T) {
	s := mustParse(t, fullScenario)

	h, err := Counterpart(s, CounterpartHints)
	require.NoError(t, err)
	assert.False(t, h.Router.Hints)
	assert.True(t, s.Router.Hints, "the original is untouched")
	assert.Equal(t, "drain two — no hints", h.Name)
	assert.NotEqual(t, s.ID(), h.ID())

	g, err := Counterpart(s, CounterpartGuard)
	require.NoError(t, err)
	assert.False(t, g.KVCR.RejectDrainingSources)
	assert.Equal(t, "drain two — guard off", g.Name)
	assert.Equal(t, s.Router.Hints, g.Router.Hints)

	for _, kind := range []string{CounterpartHints, CounterpartGuard} {
		c, err := Counterpart(s, kind)
		require.NoError(t, err)
		back, err := Counterpart(c, kind)
		require.NoError(t, err)
		assert.Equal(t, s.Name, back.Name, kind)
		assert.Equal(t, s.ID(), back.ID(), kind)
	}

	// From the off state the marker says what the counterpart turns on.
	off := mustParse(t, `{"name": "x", "router": {"hints": false}, "kvcr": {"reject_draining_sources": false}, "workload": {"type": "sessions"}}`)
	on, err := Counterpart(off, CounterpartHints)
	require.NoError(t, err)
	assert.Equal(t, "x — hinted", on.Name)
	on, err = Counterpart(off, CounterpartGuard)
	require.NoError(t, err)
	assert.Equal(t, "x — guard on", on.Name)

	_, err = Counterpart(s, "bandwidth")
	require.ErrorContains(t, err, `"hints", "guard" or "autoscaler"`)
}

func TestCounterpartIsADeepCopy(t *testing.T) {
	s := mustParse(t, fullScenario)
	before := string(s.CanonicalJSON())
	c, err := Counterpart(s, CounterpartHints)
	require.NoError(t, err)
	c.ScaleIn[0].Workers[0] = 0
	*c.ScaleIn[1].GraceMS = 99
	c.Workload.Requests[0].Blocks[0] = "changed"
	*c.Workload.Requests[1].RouteTo = 2
	c.Fleet.Workers = 1
	assert.Equal(t, before, string(s.CanonicalJSON()))

	tr := mustParse(t, `{"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "limit": 5}}}`)
	ct, err := Counterpart(tr, CounterpartGuard)
	require.NoError(t, err)
	ct.Workload.Trace.Limit = 6
	assert.Equal(t, 5, tr.Workload.Trace.Limit)
	rows, err := ct.loadTrace(nil)
	require.NoError(t, err)
	assert.Len(t, rows, 5, "the parsed rows travel with the copy")

	ss := mustParse(t, `{"workload": {"type": "sessions"}}`)
	cs, err := Counterpart(ss, CounterpartHints)
	require.NoError(t, err)
	cs.Workload.Sessions.Count = 1
	assert.Equal(t, 100, ss.Workload.Sessions.Count)
}

func TestDiffScenarios(t *testing.T) {
	a := mustParse(t, fullScenario)
	h, err := Counterpart(a, CounterpartHints)
	require.NoError(t, err)
	assert.Equal(t, []FieldDiff{{Path: "router.hints", A: "true", B: "false"}}, DiffScenarios(a, h), "the name is ignored")
	assert.Empty(t, DiffScenarios(a, a))

	b := cloneScenario(a)
	b.ScaleIn[0].AtMS = 12.5
	b.Fleet.Workers = 8
	b.ScaleIn[1].GraceMS = nil
	b.Workload.Requests[1].RouteTo = nil
	assert.Equal(t, []FieldDiff{
		{Path: "fleet.workers", A: "4", B: "8"},
		{Path: "scale_in[0].at_ms", A: "10", B: "12.5"},
		{Path: "scale_in[1].grace_ms", A: "5", B: ""},
		{Path: "workload.requests[1].route_to", A: "1", B: ""},
	}, DiffScenarios(a, b))

	// Lists of different lengths are one diff on the whole list.
	c := cloneScenario(a)
	c.Workload.Requests = c.Workload.Requests[:1]
	d := DiffScenarios(a, c)
	require.Len(t, d, 1)
	assert.Equal(t, "workload.requests", d[0].Path)
	assert.Contains(t, d[0].A, `"id":"b"`)
	assert.NotContains(t, d[0].B, `"id":"b"`)

	// A long list is summarised rather than printed whole.
	long := cloneScenario(a)
	for i := range 50 {
		long.Workload.Requests = append(long.Workload.Requests, ScriptedRequest{ID: string(rune('c' + i)), Blocks: []string{"Z"}, OutputTokens: 1})
	}
	d = DiffScenarios(a, long)
	require.Len(t, d, 1)
	assert.Equal(t, "[… 52 items]", d[0].B)

	// Paths sort with list indices in numeric order.
	many := mustParse(t, `{"fleet": {"workers": 16}, "scale_in": [`+
		`{"at_ms": 0, "workers": [0]}, {"at_ms": 0, "workers": [1]}, {"at_ms": 0, "workers": [2]}, {"at_ms": 0, "workers": [3]},`+
		`{"at_ms": 0, "workers": [4]}, {"at_ms": 0, "workers": [5]}, {"at_ms": 0, "workers": [6]}, {"at_ms": 0, "workers": [7]},`+
		`{"at_ms": 0, "workers": [8]}, {"at_ms": 0, "workers": [9]}, {"at_ms": 0, "workers": [10]}], "workload": {"type": "sessions"}}`)
	later := cloneScenario(many)
	later.ScaleIn[2].AtMS = 1
	later.ScaleIn[10].AtMS = 1
	d = DiffScenarios(many, later)
	require.Len(t, d, 2)
	assert.Equal(t, "scale_in[2].at_ms", d[0].Path)
	assert.Equal(t, "scale_in[10].at_ms", d[1].Path)

	// Workloads of different types differ in their type and their members.
	sess := mustParse(t, `{"fleet": {"workers": 4, "gpu_blocks": 640, "host_blocks": 64, "block_size": 16}, "workload": {"type": "sessions"}}`)
	d = DiffScenarios(a, sess)
	paths := []string{}
	for _, x := range d {
		paths = append(paths, x.Path)
	}
	assert.Contains(t, paths, "workload.type")
	assert.Contains(t, paths, "workload.sessions")
	assert.Contains(t, paths, "workload.requests")
}

func fp(v float64) *float64 { return &v }

// reportWithDrains builds a report by hand with two drained workers and one left active.
func reportWithDrains() *Report {
	return &Report{
		Summary: Summary{
			Requests:      RequestCounts{Total: 10, Completed: 9, Killed: 1},
			TTFTMS:        Distribution{P50: fp(3), P99: fp(40)},
			E2EMS:         Distribution{P99: fp(120)},
			DurationMS:    500,
			WorkerSeconds: 1.25,
		},
		KVCR: KVCRCounts{Staged: 6, Success: 2, Partial: 4, Miss: 1, RejectedDraining: 3, RejectedRemoved: 1, StagedFromDraining: 2, Aborted: 1},
		Workers: []WorkerRow{
			{ID: 0, FinalState: StateActive},
			{ID: 1, FinalState: StateRemoved, MarkedAtMS: fp(10), RemovedAtMS: fp(150), DrainMS: fp(140), PinWaitMS: fp(30)},
			{ID: 2, FinalState: StateRemoved, MarkedAtMS: fp(20), RemovedAtMS: fp(90), DrainMS: fp(70), PinWaitMS: fp(0)},
		},
	}
}

func figureValues(figs []Figure) map[string]*float64 {
	m := map[string]*float64{}
	for _, f := range figs {
		m[f.Key] = f.Value
	}
	return m
}

func TestHeadline(t *testing.T) {
	figs := Headline(reportWithDrains())
	v := figureValues(figs)
	assert.Len(t, v, len(figs), "keys are unique")
	want := map[string]float64{
		"latest_removal_ms": 150, "total_drain_ms": 210, "total_pin_wait_ms": 30,
		"pulls_staged": 6, "pulls_success": 2, "pulls_partial": 4, "pulls_miss": 1,
		"pulls_rejected_draining": 3, "pulls_rejected_removed": 1, "pulls_staged_from_draining": 2, "pulls_aborted": 1,
		"ttft_p50_ms": 3, "ttft_p99_ms": 40, "e2e_p99_ms": 120,
		"requests_completed": 9, "requests_killed": 1, "worker_seconds": 1.25, "duration_ms": 500,
	}
	assert.Len(t, figs, len(want))
	for k, w := range want {
		require.NotNil(t, v[k], k)
		assert.Equal(t, w, *v[k], k)
	}
	for _, f := range figs {
		assert.NotEmpty(t, f.Label, f.Key)
		assert.NotEmpty(t, f.Unit, f.Key)
	}

	// Nothing drained and no first token: those figures do not apply.
	v = figureValues(Headline(&Report{Workers: []WorkerRow{{ID: 0, FinalState: StateActive}}}))
	assert.Nil(t, v["latest_removal_ms"])
	assert.Nil(t, v["total_drain_ms"])
	assert.Nil(t, v["total_pin_wait_ms"])
	assert.Nil(t, v["ttft_p50_ms"])
	require.NotNil(t, v["pulls_staged"])
	assert.Equal(t, 0.0, *v["pulls_staged"])
	assert.NotPanics(t, func() { Headline(nil) })
}

func TestCompare(t *testing.T) {
	sa := mustParse(t, fullScenario)
	sb, err := Counterpart(sa, CounterpartGuard)
	require.NoError(t, err)
	ra, rb := reportWithDrains(), reportWithDrains()
	rb.Workers[1].RemovedAtMS = fp(90)
	rb.KVCR.StagedFromDraining = 0
	rb.Summary.TTFTMS.P99 = nil

	c := Compare(sa, sb, ra, rb)
	assert.Equal(t, CounterpartGuard, c.Kind)
	assert.True(t, c.OnlyToggle)
	assert.Equal(t, []FieldDiff{{Path: "kvcr.reject_draining_sources", A: "true", B: "false"}}, c.Diffs)
	byKey := map[string]FigureDelta{}
	for _, f := range c.Figures {
		byKey[f.Key] = f
	}
	latest := byKey["latest_removal_ms"]
	assert.Equal(t, 150.0, *latest.A)
	assert.Equal(t, 90.0, *latest.B)
	assert.Equal(t, -60.0, *latest.Delta)
	assert.InDelta(t, -40.0, *latest.DeltaPct, 1e-9)
	assert.Equal(t, "ms", latest.Unit)

	sfd := byKey["pulls_staged_from_draining"]
	assert.Equal(t, -2.0, *sfd.Delta)
	assert.Equal(t, -100.0, *sfd.DeltaPct)

	p99 := byKey["ttft_p99_ms"]
	assert.NotNil(t, p99.A)
	assert.Nil(t, p99.B)
	assert.Nil(t, p99.Delta, "no delta when one side does not apply")
	assert.Nil(t, p99.DeltaPct)

	// Deltas carry no floating-point noise from the subtraction.
	ra.Workers[1].RemovedAtMS, rb.Workers[1].RemovedAtMS = fp(77), fp(86.554432)
	ra.Workers[2].RemovedAtMS, rb.Workers[2].RemovedAtMS = fp(50), fp(50)
	for _, f := range Compare(sa, sb, ra, rb).Figures {
		if f.Key == "latest_removal_ms" {
			assert.Equal(t, 9.554432, *f.Delta)
		}
	}

	// A zero baseline has a delta but no percentage.
	ra.KVCR.Aborted, rb.KVCR.Aborted = 0, 3
	c = Compare(sa, sb, ra, rb)
	for _, f := range c.Figures {
		if f.Key == "pulls_aborted" {
			assert.Equal(t, 3.0, *f.Delta)
			assert.Nil(t, f.DeltaPct)
		}
	}

	// Both toggles, or more than a toggle.
	both, err := Counterpart(sb, CounterpartHints)
	require.NoError(t, err)
	c = Compare(sa, both, ra, rb)
	assert.Equal(t, "hints+guard", c.Kind)
	assert.True(t, c.OnlyToggle)
	other := cloneScenario(sb)
	other.Fleet.Workers = 8
	c = Compare(sa, other, ra, rb)
	assert.Equal(t, CounterpartGuard, c.Kind)
	assert.False(t, c.OnlyToggle)
	c = Compare(sa, sa, ra, ra)
	assert.Equal(t, "", c.Kind)
	assert.False(t, c.OnlyToggle)
	assert.NotNil(t, c.Diffs)

	// A run without a report yet still compares its scenario.
	c = Compare(sa, sb, ra, nil)
	assert.True(t, c.OnlyToggle)
	for _, f := range c.Figures {
		assert.Nil(t, f.B, f.Key)
		assert.Nil(t, f.Delta, f.Key)
	}
}

// The autoscaler counterpart is the same scenario on a fixed fleet; the comparison is of kind
// "autoscaler", differs only there, and adds GPU-hours, workers and migrations to the figures.
func TestCounterpartAutoscaler(t *testing.T) {
	p, ok := PresetByKey("autoscaler-grace")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	c, err := Counterpart(s, CounterpartAutoscaler)
	require.NoError(t, err)
	assert.Nil(t, c.Autoscaler)
	assert.NotNil(t, s.Autoscaler, "the original keeps its autoscaler")
	assert.Equal(t, s.Name+" — fixed fleet", c.Name)
	assert.Equal(t, s.Autoscaler.MaxWorkers, c.Fleet.Workers, "the baseline is the autoscaler's maximum")
	named, err := FixedFleet(s, 3)
	require.NoError(t, err)
	assert.Equal(t, 3, named.Fleet.Workers, "or the size named")
	assert.Equal(t, "a fixed fleet of 3 workers, the size you named", BaselinePhrase(s, 3))
	assert.Equal(t, fmt.Sprintf("a fixed fleet of %d workers, the autoscaler's maximum", s.Autoscaler.MaxWorkers), BaselinePhrase(s, 0))
	_, err = FixedFleet(s, -1)
	assert.ErrorContains(t, err, "baseline_workers: must be a number of workers from 1")
	c2, err := Counterpart(s, CounterpartAutoscaler)
	require.NoError(t, err)
	c2.Workload.Sessions.RateStages[0].RatePerS = 99
	assert.NotEqual(t, 99.0, s.Workload.Sessions.RateStages[0].RatePerS, "stages are copied")

	ra := &Report{Autoscaler: &AutoscalerReport{}, Summary: Summary{GPUHours: 1, Workers: WorkerCounts{Peak: 12, Final: 9}}}
	rb := &Report{Summary: Summary{GPUHours: 2.5, Workers: WorkerCounts{Peak: 8, Final: 8}}}
	cmp := Compare(s, c, ra, rb)
	assert.Equal(t, CounterpartAutoscaler, cmp.Kind)
	assert.True(t, cmp.OnlyToggle, "%+v", cmp.Diffs)
	got := map[string]FigureDelta{}
	for _, f := range cmp.Figures {
		got[f.Key] = f
	}
	require.Contains(t, got, "gpu_hours")
	assert.Equal(t, 1.5, *got["gpu_hours"].Delta)
	assert.Equal(t, 150.0, *got["gpu_hours"].DeltaPct)
	assert.Equal(t, -4.0, *got["workers_peak"].Delta)

	_, err = Counterpart(c, CounterpartAutoscaler)
	require.ErrorContains(t, err, "has no autoscaler")
	// A hints pair without autoscalers keeps the model-2 figures only.
	h, err := Counterpart(c, CounterpartHints)
	require.NoError(t, err)
	assert.Len(t, Compare(c, h, rb, rb).Figures, len(Headline(nil)))
}

// With pools, the autoscaler counterpart holds each pool with an autoscaler at its max_workers
// and no autoscaler; a named size is refused (it cannot say how to split two pools), and the
// comparison is still of kind "autoscaler" with nothing else different.
func TestCounterpartAutoscalerPools(t *testing.T) {
	p, ok := PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.PoolAutoscalers)
	c, err := Counterpart(s, CounterpartAutoscaler)
	require.NoError(t, err)
	assert.Nil(t, c.PoolAutoscalers)
	assert.Nil(t, c.Autoscaler)
	assert.NotNil(t, s.PoolAutoscalers, "the original keeps its autoscalers")
	assert.Equal(t, s.PoolAutoscalers.Prefill.MaxWorkers, c.Disaggregation.Prefill.Workers)
	assert.Equal(t, s.PoolAutoscalers.Decode.MaxWorkers, c.Disaggregation.Decode.Workers)
	assert.NotEqual(t, s.Disaggregation.Prefill.Workers, c.Disaggregation.Prefill.Workers, "the pools are copied")
	assert.Empty(t, c.ScaleIn)
	again, err := Parse(c.CanonicalJSON(), ParseEnv{})
	require.NoError(t, err, "the fixed pools are a valid scenario")
	assert.Equal(t, c.ID(), again.ID())
	assert.Equal(t, fmt.Sprintf("fixed pools of %d prefill and %d decode workers, the autoscalers' maximums",
		s.PoolAutoscalers.Prefill.MaxWorkers, s.PoolAutoscalers.Decode.MaxWorkers), BaselinePhrase(s, 0))
	_, err = FixedFleet(s, 6)
	assert.ErrorContains(t, err, "leave baseline_workers out")

	cmp := Compare(s, c, &Report{Autoscaler: &AutoscalerReport{}}, &Report{})
	assert.Equal(t, CounterpartAutoscaler, cmp.Kind)
	assert.True(t, cmp.OnlyToggle, "the pools' sizes are part of the toggle: %+v", cmp.Diffs)

	// A pool without an autoscaler keeps its size.
	s.PoolAutoscalers.Prefill = nil
	c, err = FixedFleet(s, 0)
	require.NoError(t, err)
	assert.Equal(t, s.Disaggregation.Prefill.Workers, c.Disaggregation.Prefill.Workers)
	assert.Contains(t, BaselinePhrase(s, 0), "the decode autoscaler's maximum and the prefill pool's own size")
}
