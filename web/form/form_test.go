package form

import (
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// TestFormStartsOnlyWhereTheSimulatorHasNoDefault keeps the defaults in one place: a field
// either shows the simulator's default or, where the simulator has none, a starting value.
func TestFormStartsOnlyWhereTheSimulatorHasNoDefault(t *testing.T) {
	noDefault := map[string]bool{workloadTypeField.Path: true, TraceSourceField: true, "workload.trace.limit": true, "workload.requests": true,
		// the scale-in choice is the form's own; max_workers follows fleet.workers when empty
		ScaleInModePath: true, "autoscaler.max_workers": true,
		// model 4: the model-3 shorthand has no default (absent stays absent: the legacy path)
		"autoscaler.scale_down_window_ms": true, "autoscaler.scale_up_window_ms": true,
		"autoscaler.max_remove_per_tick": true, "autoscaler.max_add_per_tick": true,
		// the behavior is absent by default (the legacy path); its fields have none either
		BehaviorModePath: true,
		// no SLO by default: each limit is judged only when given
		SLOTTFTPath: true, SLOTPOTPath: true,
		// no start time by default: times read from the start
		StartsAtPath: true,
		// model 5: the pools choice is the form's own; a pool's fields are the fleet's when empty
		PoolsModePath: true}
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		for _, fs := range poolFields(role) {
			noDefault[fs.Path] = true
		}
	}
	for _, fs := range behaviorFields() {
		noDefault[fs.Path] = true
	}
	// A pool's autoscaler: the choice and its behavior's fields are the form's own, an empty max
	// is the pool's workers; the other fields have the fleet autoscaler's defaults.
	for _, role := range poolAutoscalerRoles {
		for _, fs := range poolAutoscalerGroup(role).Fields {
			if fs.Path == PoolAutoscalerPath(role) || strings.HasPrefix(fs.Path, poolBehaviorPath(role)) || strings.HasSuffix(fs.Path, ".max_workers") {
				noDefault[fs.Path] = true
			}
		}
	}
	singleFields(func(fs fieldSpec) {
		def, has := formDefaults[fs.Path]
		assert.Equal(t, !noDefault[fs.Path], has, "%s: has a simulator default (%q)", fs.Path, def)
		if fs.Start != "" {
			assert.False(t, has, "%s has both a Start value and the simulator's default %q", fs.Path, def)
		}
	})
	assert.Equal(t, "4096", formDefaults["fleet.gpu_blocks"])
	assert.Equal(t, "0.05", formDefaults["fleet.timing.decode_ms_per_seq"])
	assert.Equal(t, "512", formDefaults["workload.trace.trace_block_tokens"])
	assert.Equal(t, "true", formDefaults["kvcr.reject_draining_sources"])

	// The schedule's select names the policy sim.Parse fills in for a count without one.
	sc, err := sim.Parse([]byte(`{"scale_in": [{"at_ms": 0, "count": 1}], "workload": {"type": "sessions"}}`), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Contains(t, scheduleFields[3].Help, "by default "+sc.ScaleIn[0].Select)
	assert.Contains(t, selectionNote, sc.ScaleIn[0].Select+" (the default)")
}

// TestPresetsPrefillRoundTrip: a preset put in the form and submitted untouched is the preset,
// those with prefill and decode pools (pd-night) included: their pools go through the Pools
// section's fields, not the JSON box.
func TestPresetsPrefillRoundTrip(t *testing.T) {
	pools := 0
	for _, p := range sim.AllPresets() {
		if p.Pools {
			pools++
			sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
			require.NoError(t, err)
			f := FromScenario(sc)
			assert.Equal(t, PoolsPD, f.Get(PoolsModePath), p.Key)
			assert.Empty(t, f.Get(RawJSONField), "%s: the Pools fields hold it", p.Key)
			assert.Equal(t, strconv.Itoa(sc.Disaggregation.Decode.Workers), f.Get("disaggregation.decode.workers"), p.Key)
			if sc.PoolAutoscalers != nil {
				// llm-d's pair of ScaledObjects: each pool's autoscaler in its own fields.
				assert.Equal(t, PoolAutoscalerSet, f.Get(PoolAutoscalerPath(sim.RolePrefill)), p.Key)
				assert.Equal(t, PoolAutoscalerSet, f.Get(PoolAutoscalerPath(sim.RoleDecode)), p.Key)
				assert.Equal(t, sc.PoolAutoscalers.Decode.Metric, f.Get("autoscaler.decode.metric"), p.Key)
				assert.Equal(t, sc.PoolAutoscalers.Prefill.Metric, f.Get("autoscaler.prefill.metric"), p.Key)
				assert.Equal(t, BehaviorSet, f.Get("autoscaler.decode.behavior"), p.Key)
			}
		}
		t.Run(p.Key, func(t *testing.T) {
			sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
			require.NoError(t, err)
			again, err := Scenario(FromScenario(sc), sim.ParseEnv{})
			require.NoError(t, err)
			assert.Equal(t, sc.ID(), again.ID(), "\nwant %s\ngot  %s", sc.CanonicalJSON(), again.CanonicalJSON())
		})
	}
	assert.Positive(t, pools, "a preset with pools is among them")
}

// TestFormPools: the Pools section builds the disaggregation object (the fleet's workers and
// KVCR switch left out, a fixed lease's ttl only with a fixed lease), problems land beside the
// pool's fields, and a scenario the fields cannot hold (an autoscaler per pool) goes to the JSON
// box whole.
func TestFormPools(t *testing.T) {
	f := Default()
	f.Set(PoolsModePath, PoolsPD)
	f.Set("disaggregation.prefill.workers", "2")
	f.Set("disaggregation.decode.workers", "6")
	f.Set("disaggregation.decode.max_num_seqs", "8")
	f.Set(LeaseTTLPath, "1000") // heartbeat: not sent
	f.Set(DrainModePath, sim.DrainFixed)
	f.Set(DrainFixedPath, "30000")
	f.Set("disaggregation.load_failure_policy", sim.LoadFailureRecompute)
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	d := sc.Disaggregation
	require.NotNil(t, d)
	assert.Equal(t, 2, d.Prefill.Workers)
	assert.Equal(t, 6, d.Decode.Workers)
	assert.Equal(t, 8, d.Decode.MaxNumSeqs)
	assert.Equal(t, sc.Fleet.MaxNumSeqs, d.Prefill.MaxNumSeqs, "an empty field is the fleet's")
	assert.Equal(t, sim.LeaseHeartbeat, d.Lease.Mode)
	assert.Equal(t, sim.DrainFixed, d.PrefillDrain.Mode)
	assert.Equal(t, sim.LoadFailureRecompute, d.LoadFailurePolicy)
	assert.False(t, sc.KVCR.Enabled)

	// form → JSON → form keeps every Pools field.
	back := FromScenario(sc)
	for _, name := range []string{PoolsModePath, "disaggregation.decode.workers", "disaggregation.decode.max_num_seqs", DrainModePath, DrainFixedPath, "disaggregation.load_failure_policy"} {
		assert.Equal(t, f.Get(name), back.Get(name), name)
	}

	f.Set(LeaseModePath, sim.LeaseFixed)
	f.Set(LeaseTTLPath, "0")
	f.Set("disaggregation.prefill.workers", "")
	_, err = Scenario(f, sim.ParseEnv{})
	invalid, ok := err.(*Invalid)
	require.True(t, ok, "%v", err)
	assert.NotEmpty(t, invalid.Errs.byField[LeaseTTLPath], "%v", invalid.Errs)
	assert.NotEmpty(t, invalid.Errs.byField["disaggregation.prefill.workers"], "%v", invalid.Errs)

	// A counted scale-in needs its pool: the problem lands on the row's Pool select.
	f.Set(LeaseModePath, sim.LeaseHeartbeat)
	f.Set("disaggregation.prefill.workers", "2")
	f.rows = []map[string]string{{"at_ms": "0", "count": "1"}}
	_, err = Scenario(f, sim.ParseEnv{})
	invalid, ok = err.(*Invalid)
	require.True(t, ok, "%v", err)
	assert.Contains(t, strings.Join(invalid.Errs.byField["scale_in[0].role"], "; "), "prefill")
	f.rows[0]["role"] = sim.RolePrefill
	withRole, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.RolePrefill, withRole.ScaleIn[0].Role)

	raw, err := os.ReadFile(filepath.Join("..", "..", "sim", "testdata", "examples", "pd_autoscaler_per_role.json"))
	require.NoError(t, err)
	per, err := sim.Parse(raw, sim.ParseEnv{})
	require.NoError(t, err)
	held := FromScenario(per)
	assert.Empty(t, held.Get(RawJSONField), "an autoscaler per pool is held by the pools' autoscaler fields")
	assert.Equal(t, ModeAutoscaler, held.Get(ScaleInModePath))
	assert.Equal(t, "3", held.Get("autoscaler.decode.max_workers"))
	assert.Equal(t, "none", held.Get("autoscaler.prefill.grace_ms"))
	assert.Equal(t, "0", held.Get("autoscaler.prefill.behavior.scale_down.window_ms"))
	again, err := Scenario(held, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, per.ID(), again.ID())

	// What the fields do not hold (a metric delay, a second policy) sends the scenario to the
	// JSON box whole, which gives it back.
	for name, change := range map[string]func(*sim.Scenario){
		"metric delay": func(c *sim.Scenario) { c.PoolAutoscalers.Decode.MetricDelayMS = 5 },
		"two policies": func(c *sim.Scenario) {
			c.PoolAutoscalers.Prefill.Behavior.ScaleDown.Policies = []sim.ScalingPolicy{
				{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 10}, {Type: sim.PolicyTypePercent, Value: 50, PeriodMS: 20}}
		},
	} {
		c, err := sim.Parse(raw, sim.ParseEnv{})
		require.NoError(t, err)
		change(c)
		c, err = sim.Parse(c.CanonicalJSON(), sim.ParseEnv{})
		require.NoError(t, err, name)
		boxed := FromScenario(c)
		assert.NotEmpty(t, boxed.Get(RawJSONField), name)
		back, err := Scenario(boxed, sim.ParseEnv{})
		require.NoError(t, err, name)
		assert.Equal(t, c.ID(), back.ID(), name)
	}
}

// TestFormPoolAutoscalers: with pools and the autoscaler chosen, each pool's autoscaler fields
// write autoscaler.prefill / autoscaler.decode (one, both or neither set), the fleet's
// autoscaler fields are not sent, and a problem lands beside the pool's field.
func TestFormPoolAutoscalers(t *testing.T) {
	f := Default()
	f.Set(PoolsModePath, PoolsPD)
	f.Set("disaggregation.prefill.workers", "2")
	f.Set("disaggregation.decode.workers", "4")
	f.Set(ScaleInModePath, ModeAutoscaler)
	f.Set("autoscaler.target", "not sent")
	f.Set(PoolAutoscalerPath(sim.RoleDecode), PoolAutoscalerSet)
	f.Set("autoscaler.decode.metric", sim.MetricKVUsage)
	f.Set("autoscaler.decode.source", sim.SourceExternal)
	f.Set("autoscaler.decode.aggregate", sim.AggregateSum)
	f.Set("autoscaler.decode.target", "0.8")
	f.Set("autoscaler.decode.max_workers", "8")
	f.Set("autoscaler.decode.behavior", BehaviorSet)
	f.Set("autoscaler.decode.behavior.scale_down.window_ms", "300000")
	f.Set("autoscaler.decode.behavior.scale_down.policies[0].type", sim.PolicyTypePods)
	f.Set("autoscaler.decode.behavior.scale_down.policies[0].value", "1")
	f.Set("autoscaler.decode.behavior.scale_down.policies[0].period_ms", "300000")
	f.Set("autoscaler.prefill.target", "2") // the prefill pool's autoscaler is not chosen: unsent
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.PoolAutoscalers)
	assert.Nil(t, sc.Autoscaler)
	assert.Nil(t, sc.PoolAutoscalers.Prefill, "none: the prefill pool keeps its size")
	d := sc.PoolAutoscalers.Decode
	require.NotNil(t, d)
	assert.Equal(t, sim.MetricKVUsage, d.Metric)
	assert.Equal(t, 0.8, d.Target)
	assert.Equal(t, 8, d.MaxWorkers)
	require.NotNil(t, d.Behavior)
	assert.Nil(t, d.Behavior.ScaleUp)
	assert.Equal(t, int64(300000), *d.Behavior.ScaleDown.WindowMS)
	assert.Equal(t, []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 300000}}, d.Behavior.ScaleDown.Policies)
	back := FromScenario(sc)
	assert.Empty(t, back.Get(RawJSONField))
	for _, name := range []string{PoolAutoscalerPath(sim.RolePrefill), PoolAutoscalerPath(sim.RoleDecode), "autoscaler.decode.metric", "autoscaler.decode.target",
		"autoscaler.decode.max_workers", "autoscaler.decode.behavior.scale_down.policies[0].value", "autoscaler.decode.behavior.scale_down.window_ms"} {
		assert.Equal(t, f.Get(name), back.Get(name), name)
	}

	// handoffs_held is a prefill metric: on the decode pool the simulator's message lands there.
	f.Set("autoscaler.decode.metric", sim.MetricHandoffsHeld)
	f.Set("autoscaler.decode.behavior.scale_down.policies[0].value", "x")
	_, err = Scenario(f, sim.ParseEnv{})
	invalid, ok := err.(*Invalid)
	require.True(t, ok, "%v", err)
	assert.NotEmpty(t, invalid.Errs.byField["autoscaler.decode.behavior.scale_down.policies[0].value"], "%v", invalid.Errs)
	assert.NotEmpty(t, invalid.Errs.byField["autoscaler.decode.metric"], "%v", invalid.Errs)

	// Neither pool's autoscaler chosen: the autoscaler is {} and both pools keep their sizes
	// (not thirteen messages about the fleet's autoscaler fields).
	f.Set(PoolAutoscalerPath(sim.RoleDecode), PoolAutoscalerNone)
	neither, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Nil(t, neither.Autoscaler)
	if neither.PoolAutoscalers != nil {
		assert.Nil(t, neither.PoolAutoscalers.Prefill)
		assert.Nil(t, neither.PoolAutoscalers.Decode)
	}
	assert.Empty(t, neither.ScaleIn)
	kept := FromScenario(neither) // the same scenario as an empty schedule
	assert.Equal(t, PoolAutoscalerNone, kept.Get(PoolAutoscalerPath(sim.RoleDecode)))
	assert.Empty(t, kept.Get(RawJSONField))
	same, err := Scenario(kept, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, neither.ID(), same.ID())

	// The page shows both pools' autoscaler fieldsets.
	page := Default().View(templates.Page{}, NoErrors(), nil)
	legends := map[string]bool{}
	for _, set := range page.Pools {
		legends[set.Legend] = true
	}
	assert.True(t, legends["Prefill autoscaler"])
	assert.True(t, legends["Decode autoscaler"])
}

// TestFormProblemsAreNotRepeated: a field the form could not read is not faulted a second time
// by sim.Parse (which then holds its default), and an empty requests list is one problem.
func TestFormProblemsAreNotRepeated(t *testing.T) {
	f := Default()
	f.Set("workload.type", sim.WorkloadRequests)
	f.Set("workload.requests", `[{"id": "a",`)
	f.Set("fleet.max_num_seqs", "many")
	_, err := Scenario(f, sim.ParseEnv{})
	invalid, ok := err.(*Invalid)
	require.True(t, ok, "want *Invalid, got %v", err)
	assert.Equal(t, 2, invalid.Errs.count, "%v", invalid.Errs.byField)
	assert.Len(t, invalid.Errs.byField["workload.requests"], 1)
	assert.Contains(t, invalid.Errs.byField["workload.requests"][0], "not valid JSON")
	assert.Len(t, invalid.Errs.byField["fleet.max_num_seqs"], 1)
}

// FuzzScenarioForm: whatever a post holds, reading and validating it neither panics nor fails
// with anything but an *Invalid, and a valid result's JSON parses to the same scenario.
func FuzzScenarioForm(f *testing.F) {
	f.Add("fleet.workers=4&workload.type=sessions&workload.sessions.count=3")
	f.Add("scale_in[0].at_ms=5&scale_in[0].workers=1,2&scale_in[7].count=x&workload.type=requests&workload.requests=[{")
	f.Add("workload.type=trace&workload.trace.source=sha256:zz&scale_in_rows=-4")
	f.Add("scenario_json={\"workload\":{\"type\":\"sessions\"}}")
	f.Fuzz(func(t *testing.T, body string) {
		values, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		f := FromValues(values)
		sc, err := Scenario(f, sim.ParseEnv{})
		if err != nil {
			invalid, ok := err.(*Invalid)
			require.True(t, ok, "want *Invalid, got %T: %v", err, err)
			require.Positive(t, invalid.Errs.count)
			_ = f.view(templatesPage(), invalid.Errs, nil)
			return
		}
		again, err := sim.Parse(sc.CanonicalJSON(), sim.ParseEnv{})
		require.NoError(t, err)
		require.Equal(t, sc.ID(), again.ID())
	})
}

func templatesPage() templates.Page { return templates.Page{Title: "fuzz"} }

// TestDefaultFormIsTheDefaultScenario: the fresh form, read untouched, is the simulator's
// default scenario (same scenario id), so the defaults shown are the defaults run. (web's
// TestRenderedFormIsTheDefaultScenario submits the rendered page.)
func TestDefaultFormIsTheDefaultScenario(t *testing.T) {
	sc, err := Scenario(Default(), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.DefaultScenario().ID(), sc.ID(), "Default → %s", sc.CanonicalJSON())
}

// TestFarOffScheduleIndicesAreRows: a far-off schedule index is a row like any other.
func TestFarOffScheduleIndicesAreRows(t *testing.T) {
	values := url.Values{WorkloadTypePath: {sim.WorkloadSessions}}
	values.Set("scale_in[99999].at_ms", "10")
	values.Set("scale_in[99999].count", "1")
	values.Set("scale_in[99999999999999999999999].at_ms", "20")
	values.Set("scale_in[99999999999999999999999].count", "1")
	f := FromValues(values)
	require.Len(t, f.rows, 2)
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	require.Len(t, sc.ScaleIn, 2)
	assert.Equal(t, 10.0, sc.ScaleIn[0].AtMS)
	assert.Equal(t, 20.0, sc.ScaleIn[1].AtMS)
}

// The autoscaler in the form: the choice sends the autoscaler's fields and no schedule, the
// rate stages and the nullable fields convert, and a scenario with an autoscaler prefills it.
func TestFormAutoscaler(t *testing.T) {
	f := Default()
	f.Set(ScaleInModePath, ModeAutoscaler)
	f.Set("autoscaler.target", "8")
	f.Set("autoscaler.grace_ms", "none")
	f.Set("autoscaler.max_add_per_tick", "2")
	f.Set(RateStagesPath, "30000, 1\n30000 10\n")
	f.rows = []map[string]string{{"at_ms": "100", "count": "1"}} // kept in the form, not sent
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.Autoscaler)
	assert.Empty(t, sc.ScaleIn)
	assert.Equal(t, 8.0, sc.Autoscaler.Target)
	assert.Nil(t, sc.Autoscaler.GraceMS)
	assert.Equal(t, 2, *sc.Autoscaler.MaxAddPerTick.Ptr())
	assert.Equal(t, sc.Fleet.Workers, sc.Autoscaler.MaxWorkers, "empty max_workers follows the fleet")
	assert.Equal(t, []sim.RateStage{{DurationMS: 30000, RatePerS: 1}, {DurationMS: 30000, RatePerS: 10}}, sc.Workload.Sessions.RateStages)

	again := FromScenario(sc)
	assert.Equal(t, ModeAutoscaler, again.Get(ScaleInModePath))
	assert.Equal(t, "none", again.Get("autoscaler.grace_ms"))
	assert.Equal(t, "30000, 1\n30000, 10", again.Get(RateStagesPath))

	// A bad stage line and a bad nullable number are reported on their fields.
	f.Set(RateStagesPath, "30000")
	f.Set("autoscaler.max_add_per_tick", "lots")
	_, err = Scenario(f, sim.ParseEnv{})
	var inv *Invalid
	require.ErrorAs(t, err, &inv)
	assert.Contains(t, strings.Join(inv.Errs.byField[RateStagesPath], ";"), "line 1")
	assert.Contains(t, strings.Join(inv.Errs.byField["autoscaler.max_add_per_tick"], ";"), `"none"`)

	// The day helper fills 24 stages from trough to peak.
	d := Default()
	d.Set(DayPeakField, "20")
	d.FillDay()
	lines := strings.Split(d.Get(RateStagesPath), "\n")
	require.Len(t, lines, 24)
	assert.Equal(t, "3600000, 1", lines[4], "the trough at 04:00, a day in real time")
	assert.Equal(t, "3600000, 20", lines[16], "the peak at 16:00")
	// The count lets arrivals last the whole day, so the preview warns of nothing.
	count, err := strconv.Atoi(d.Get(SessionsCountPath))
	require.NoError(t, err)
	stages := DayStages(1, 20, DayStageMS, 24)
	assert.GreaterOrEqual(t, float64(count), ExpectedSessions(stages)+4*math.Sqrt(ExpectedSessions(stages)))
	pv := ratePreview(d.Get(RateStagesPath), d.Get(SessionsCountPath))
	require.NotNil(t, pv)
	assert.Empty(t, pv.Warning)
	assert.Contains(t, pv.Caption, "24 stages over 24:00:00 h")

	// A count that cuts the day is named with when it ends and the count that would not.
	pv = ratePreview(d.Get(RateStagesPath), "100")
	require.NotNil(t, pv)
	assert.Contains(t, pv.Warning, "ends the load at about 17.4 s of 24:00:00 h")
	assert.Contains(t, pv.Warning, "Set Sessions to "+format.Number(float64(count)))
	at, cut := CountEndsAtMS(stages, count)
	assert.False(t, cut, "ends at %v", at)
}
