package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresetsParse(t *testing.T) {
	presets := AllPresets()
	require.NotEmpty(t, presets)
	assert.Len(t, Presets(), len(presets), "the form offers every preset, those with pools included")
	order := map[string]int{"incident": 0, "e2": 1, "mooncake-16to12": 2, "large-fleet": 3,
		"autoscaler-legacy": 4, "autoscaler-defaults": 5, "autoscaler-day": 6, "autoscaler-hour": 7, "autoscaler-keda": 8,
		"autoscaler-dynamo": 9, "autoscaler-grace": 10, "pd-night": 11,
		"pd-llmd-keda": 12, "pd-dynamo-drain": 13, "pd-vllm-lease": 14}
	last := -1
	for _, p := range presets {
		t.Run(p.Key, func(t *testing.T) {
			assert.NotEmpty(t, p.Title)
			assert.NotEmpty(t, p.Description)
			s, err := Parse(p.JSON, ParseEnv{})
			require.NoError(t, err)
			assert.NotEqual(t, DefaultScenarioName, s.Name, "a preset names itself")
		})
		pos, known := order[p.Key]
		require.True(t, known, "unexpected preset %q", p.Key)
		assert.Greater(t, pos, last, "presets are in display order")
		last = pos
		got, ok := PresetByKey(p.Key)
		require.True(t, ok)
		assert.Equal(t, p.Title, got.Title)
	}
	_, ok := PresetByKey("nope")
	assert.False(t, ok)
}

func TestPresetContents(t *testing.T) {
	m, ok := PresetByKey("mooncake-16to12")
	require.True(t, ok)
	s, err := Parse(m.JSON, ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 16, s.Fleet.Workers)
	require.Len(t, s.ScaleIn, 1)
	assert.Equal(t, 4, s.ScaleIn[0].Count)
	assert.Equal(t, SelectHighestID, s.ScaleIn[0].Select)
	require.NotNil(t, s.ScaleIn[0].GraceMS)
	assert.Equal(t, 30000.0, *s.ScaleIn[0].GraceMS)
	rows, err := s.loadTrace(nil)
	require.NoError(t, err)
	require.Len(t, rows, 3000)
	// The scale-in fires in the middle of the traffic.
	assert.Greater(t, s.ScaleIn[0].AtMS, rows[0].TimestampMS)
	assert.Less(t, s.ScaleIn[0].AtMS, rows[len(rows)-1].TimestampMS)

	l, ok := PresetByKey("large-fleet")
	require.True(t, ok)
	s, err = Parse(l.JSON, ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 2048, s.Fleet.Workers)
	assert.Equal(t, 100_000, s.Workload.Sessions.Count*s.Workload.Sessions.Turns)
	assert.Equal(t, 256, s.ScaleIn[0].Count)
	assert.Equal(t, SelectLeastLoaded, s.ScaleIn[0].Select)
}

// The autoscaler presets are days (or hours of one) in real time: hour-long stages, so the
// HPA's windows, intervals and cold starts keep their meaning, and a session count that lets
// arrivals last through every stage (four standard deviations above the expected arrivals).
func TestAutoscalerPresetsAreRealTime(t *testing.T) {
	for _, p := range Presets() {
		s, err := Parse(p.JSON, ParseEnv{})
		require.NoError(t, err)
		if s.Autoscaler == nil {
			continue
		}
		c := s.Workload.Sessions
		require.NotNil(t, c, p.Key)
		expected, total := 0.0, 0.0
		stage := 3_600_000.0
		if p.Key == "autoscaler-hour" {
			stage = 150_000 // the day in an hour, for the start-up-time sweep
		}
		for _, st := range c.RateStages {
			assert.Equal(t, stage, st.DurationMS, "%s: a stage is an hour", p.Key)
			expected += st.RatePerS * st.DurationMS / 1000
			total += st.DurationMS
		}
		assert.GreaterOrEqual(t, float64(c.Count), expected+4*math.Sqrt(expected), "%s: the count lasts the stages", p.Key)
		if p.Long {
			assert.Equal(t, 24*3_600_000.0, total, "%s: a day", p.Key)
		}
	}
}

func presetReport(t *testing.T, key string) (*Scenario, *Report) {
	t.Helper()
	p, ok := PresetByKey(key)
	require.True(t, ok, key)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.Autoscaler, key)
	require.NotEmpty(t, s.Workload.Sessions.RateStages, key)
	return s, mustRun(t, s)
}

func decisionTotals(rep *Report) (drained, started int, reasons map[string]int) {
	reasons = map[string]int{}
	for _, d := range rep.Autoscaler.Decisions {
		drained += len(d.Drained)
		started += len(d.Started)
		reasons[d.Reason]++
	}
	return drained, started, reasons
}

// The day in real time: the autoscaler scales down as load falls and up as it rises, and saves
// GPU-hours against the initial fleet held all day; the session count lets arrivals last the
// whole day (the last request arrives in the last stage).
func TestPresetAutoscalerDay(t *testing.T) {
	if !slowTests() {
		t.Skip("a real-time day, about 15 s of CPU: SCALEIN_SLOW=1 runs it")
	}
	s, rep := presetReport(t, "autoscaler-day")
	assert.Greater(t, rep.Summary.DurationMS, 23.5*3600*1000, "the run lasts the day")
	drained, started, reasons := decisionTotals(rep)
	assert.Positive(t, drained)
	assert.Positive(t, started)
	assert.Positive(t, reasons[ReasonScaleDown])
	assert.Positive(t, reasons[ReasonScaleUp])
	assert.Zero(t, rep.Summary.Requests.Killed)
	fixed := float64(s.Fleet.Workers) * rep.Summary.DurationMS / 1000 / 3600
	assert.Less(t, rep.Summary.GPUHours, fixed, "the autoscaler saves GPU-hours against a fixed fleet")
}

// Planner-like: never more than one worker added or removed by a decision.
func TestPresetAutoscalerDynamo(t *testing.T) {
	s, rep := presetReport(t, "autoscaler-dynamo")
	assert.Equal(t, MetricKVUsage, s.Autoscaler.Metric)
	drained, _, reasons := decisionTotals(rep)
	assert.Positive(t, drained)
	assert.Positive(t, reasons[ReasonStabilized], "the sustained windows hold some recommendations")
	for _, d := range rep.Autoscaler.Decisions {
		assert.LessOrEqual(t, len(d.Drained)+len(d.Cancelled), 1, "at %v ms", d.TMS)
		assert.LessOrEqual(t, len(d.Started)+len(d.Reactivated), 1, "at %v ms", d.TMS)
	}
}

// Grace too short: drains are forced and migration moves the requests a kill would take; with
// migration off the same run kills them.
func TestPresetAutoscalerGrace(t *testing.T) {
	s, rep := presetReport(t, "autoscaler-grace")
	forced := 0
	for _, w := range rep.Workers {
		if w.Forced {
			forced++
		}
	}
	assert.Positive(t, forced)
	assert.Positive(t, rep.Summary.Requests.Migrated)
	s.Router.MigrationLimit = 0
	off := mustRun(t, s)
	assert.Zero(t, off.Summary.Requests.Migrated)
	assert.Positive(t, off.Summary.Requests.Killed)
}

// The P/D night: pools as described; the drained prefill workers hold handoffs while draining
// (wait mode), and skip fails what wait served. A real-time two hours: SCALEIN_SLOW=1 runs it.
func TestPresetPDNight(t *testing.T) {
	p, ok := PresetByKey("pd-night")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.Disaggregation)
	assert.Equal(t, 4, s.Disaggregation.Prefill.Workers)
	assert.Equal(t, 12, s.Disaggregation.Decode.Workers)
	assert.Equal(t, RolePrefill, s.ScaleIn[0].Role)
	if !slowTests() {
		t.Skip("two real-time hours, about 10 s of CPU: SCALEIN_SLOW=1 runs them")
	}
	rep := mustRun(t, s)
	assert.Positive(t, rep.Summary.Disaggregation.HeldBlockSecondsDraining)
	assert.Zero(t, *rep.Summary.Requests.Failed)
	skip := cloneScenario(s)
	skip.Disaggregation.PrefillDrain.Mode = DrainSkip
	rs := mustRun(t, skip)
	assert.Positive(t, rs.Summary.Disaggregation.Failed.SourceSkipped)
}

// llm-d's pair of ScaledObjects: one autoscaler per pool, as the issue describes them, and both
// pools scale down as the night empties (decisions in both roles). Under a second of CPU.
func TestPresetPDLlmdKEDA(t *testing.T) {
	p, ok := PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	assert.True(t, p.Pools)
	assert.False(t, p.Long)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.PoolAutoscalers)
	assert.Nil(t, s.Autoscaler)
	assert.Empty(t, s.ScaleIn)
	pre, dec := s.PoolAutoscalers.Prefill, s.PoolAutoscalers.Decode
	require.NotNil(t, pre)
	require.NotNil(t, dec)
	assert.Equal(t, MetricRequestsWaiting, pre.Metric)
	assert.Equal(t, MetricKVUsage, dec.Metric)
	assert.Equal(t, 0.8, dec.Target)
	for _, a := range []*Autoscaler{pre, dec} {
		assert.Equal(t, SourceExternal, a.Source)
		assert.Equal(t, AggregateSum, a.Aggregate)
		require.NotNil(t, a.Behavior)
		assert.Equal(t, []ScalingPolicy{{Type: PolicyTypePods, Value: 1, PeriodMS: 180000}}, a.Behavior.ScaleUp.Policies)
		assert.Equal(t, []ScalingPolicy{{Type: PolicyTypePods, Value: 1, PeriodMS: 300000}}, a.Behavior.ScaleDown.Policies)
		assert.Equal(t, int64(300000), *a.Behavior.ScaleDown.WindowMS)
	}
	rep := mustRun(t, s)
	downs := map[string]int{}
	for _, d := range rep.Autoscaler.Decisions {
		if d.Reason == ReasonScaleDown {
			downs[d.Role]++
		}
		assert.LessOrEqual(t, len(d.Drained), 1, "1 pod per 300 s down, at %v ms", d.TMS)
	}
	assert.Positive(t, downs[RolePrefill], "the prefill ScaledObject scales in")
	assert.Positive(t, downs[RoleDecode], "the decode ScaledObject scales in")
	assert.Zero(t, *rep.Summary.Requests.Failed)
	assert.Greater(t, rep.Summary.DurationMS, 2*3600*1000.0-60000, "the night lasts its two hours")
}

// Dynamo's fixed drain: the drained prefill workers go 30 s after they are marked, and the
// handoffs the busy decode pool had not pulled fail with source_removed; under wait none does.
func TestPresetPDDynamoDrain(t *testing.T) {
	p, ok := PresetByKey("pd-dynamo-drain")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.Disaggregation)
	assert.Equal(t, DrainFixed, s.Disaggregation.PrefillDrain.Mode)
	assert.Equal(t, 30000.0, s.Disaggregation.PrefillDrain.FixedMS)
	require.Len(t, s.ScaleIn, 1)
	assert.Equal(t, RolePrefill, s.ScaleIn[0].Role)
	rep := mustRun(t, s)
	drained := 0
	for _, w := range rep.Workers {
		if w.DrainMS != nil {
			drained++
			assert.Equal(t, RolePrefill, w.Role)
			assert.Equal(t, 30000.0, *w.DrainMS, "worker %d leaves at its fixed deadline", w.ID)
			assert.False(t, w.Forced)
		}
	}
	assert.Equal(t, 2, drained)
	assert.Positive(t, rep.Summary.Disaggregation.Failed.SourceRemoved, "holds dropped at the fixed deadline")
	wait := cloneScenario(s)
	wait.Disaggregation.PrefillDrain.Mode = DrainWait
	rw := mustRun(t, wait)
	assert.Zero(t, rw.Summary.Disaggregation.Failed.SourceRemoved)
}

// vLLM before 0.22: a fixed 480 s hold on a busy decode pool. Prompts stay held on their prefill
// workers far longer than on the same night with twice the decode workers, and the drained prefill
// workers wait for their handoffs until the grace forces them out.
func TestPresetPDVLLMLease(t *testing.T) {
	p, ok := PresetByKey("pd-vllm-lease")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, s.Disaggregation)
	assert.Equal(t, LeaseFixed, s.Disaggregation.Lease.Mode)
	assert.Equal(t, 480000.0, s.Disaggregation.Lease.TTLMS)
	rep := mustRun(t, s)
	d := rep.Summary.Disaggregation
	require.Positive(t, d.Handoffs)
	busy := d.HeldBlockSeconds / float64(d.Handoffs)
	quiet := cloneScenario(s)
	quiet.Disaggregation.Decode.Workers *= 2
	rq := mustRun(t, quiet)
	calm := rq.Summary.Disaggregation.HeldBlockSeconds / float64(rq.Summary.Disaggregation.Handoffs)
	assert.Greater(t, busy, 10*calm, "a busy decode pool holds prompts long: %.1f against %.1f block-seconds a handoff", busy, calm)
	assert.Positive(t, d.HeldBlockSecondsDraining)
	// What the description says of -pair lease: no hold here waits 480 s unpulled, so heartbeat
	// gives the same figures.
	assert.Zero(t, d.Failed.LeaseExpired)
	hb := cloneScenario(s)
	hb.Disaggregation.Lease = Lease{Mode: LeaseHeartbeat}
	rh := mustRun(t, hb)
	assert.Equal(t, d.HeldBlockSeconds, rh.Summary.Disaggregation.HeldBlockSeconds)
	for _, w := range rep.Workers {
		if w.DrainMS != nil {
			require.NotNil(t, w.PinWaitMS)
			assert.Positive(t, *w.PinWaitMS, "worker %d waited for its handoffs", w.ID)
		}
	}
}
