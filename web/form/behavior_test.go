package form

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// A behavior built in the form: two scale-down policies and a window, posted with an empty row
// between them and far-off indices, gives that behavior; the form shown again keeps the rows.
func TestFormBehaviorPolicies(t *testing.T) {
	values := url.Values{}
	for name, text := range Default().values {
		values.Set(name, text)
	}
	values.Set(ScaleInModePath, ModeAutoscaler)
	values.Set(BehaviorModePath, BehaviorSet)
	values.Set("autoscaler.behavior.scale_down.window_ms", "120000")
	values.Set("autoscaler.behavior.scale_down.select", "min")
	values.Set("autoscaler.behavior.scale_down.policies[0].type", "pods")
	values.Set("autoscaler.behavior.scale_down.policies[0].value", "1")
	values.Set("autoscaler.behavior.scale_down.policies[0].period_ms", "60000")
	values.Set("autoscaler.behavior.scale_down.policies[1].type", "")
	values.Set("autoscaler.behavior.scale_down.policies[1].value", " ")
	values.Set("autoscaler.behavior.scale_down.policies[12].type", "percent")
	values.Set("autoscaler.behavior.scale_down.policies[12].value", "10")
	values.Set("autoscaler.behavior.scale_down.policies[12].period_ms", "30000")
	f := FromValues(values)
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	b := sc.Autoscaler.Behavior
	require.NotNil(t, b)
	assert.Nil(t, b.ScaleUp, "an untouched direction is left to Kubernetes' defaults")
	require.NotNil(t, b.ScaleDown)
	assert.Equal(t, int64(120000), *b.ScaleDown.WindowMS)
	assert.Equal(t, sim.SelectPolicyMin, b.ScaleDown.Select)
	assert.Equal(t, []sim.ScalingPolicy{{Type: "pods", Value: 1, PeriodMS: 60000}, {Type: "percent", Value: 10, PeriodMS: 30000}}, b.ScaleDown.Policies)

	page := FromScenario(sc).view(templatesPage(), NoErrors(), nil)
	down := page.Behavior.Directions[1]
	require.Len(t, down.Policies, 2)
	assert.Equal(t, "At most 1 worker removed per 60 s.", down.Policies[0].Help)
	assert.Equal(t, "At most 10 % of the workers removed per 30 s.", down.Policies[1].Help)
	up := page.Behavior.Directions[0]
	require.Len(t, up.Policies, 2, "Kubernetes' two scale-up policies, as placeholders")
	assert.Equal(t, "4", up.Policies[0].Fields[1].Placeholder)
	assert.Equal(t, "15000", up.Policies[0].Fields[2].Placeholder)
	assert.Equal(t, "0", up.Fields[0].Placeholder, "the scale-up window's default")
	assert.Equal(t, "300000", down.Fields[0].Placeholder, "the scale-down window defaults to the downscale stabilisation")

	// "Add policy" shows one more row.
	f.AddPolicy(dirDown)
	page = f.view(templatesPage(), NoErrors(), nil)
	assert.Len(t, page.Behavior.Directions[1].Policies, 3)

	// Without a behavior chosen, the rows stay in the form, unsent: the legacy path.
	values.Set(BehaviorModePath, BehaviorNone)
	sc, err = Scenario(FromValues(values), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Nil(t, sc.Autoscaler.Behavior)
}

// Every problem of a behavior lands beside its field, in one pass.
func TestFormBehaviorErrors(t *testing.T) {
	f := Default()
	f.Set(ScaleInModePath, ModeAutoscaler)
	f.Set(BehaviorModePath, BehaviorSet)
	f.Set("autoscaler.behavior.scale_up.window_ms", "1.5")
	f.Set(SourcePath, sim.SourcePods)
	f.policies = map[string][]map[string]string{
		dirDown: {{"type": "pods", "value": "0", "period_ms": "60000"}, {"type": "", "value": "2", "period_ms": "lots"}},
	}
	_, err := Scenario(f, sim.ParseEnv{})
	var inv *Invalid
	require.ErrorAs(t, err, &inv)
	for _, name := range []string{
		"autoscaler.behavior.scale_up.window_ms",
		"autoscaler.behavior.scale_down.policies[0].value",
		"autoscaler.behavior.scale_down.policies[1].type",
		"autoscaler.behavior.scale_down.policies[1].period_ms",
	} {
		assert.NotEmpty(t, inv.Errs.byField[name], "%s: %v", name, inv.Errs.byField)
	}
	assert.Empty(t, inv.Errs.unplaced)
	page := inv.Form.view(templatesPage(), inv.Errs, nil)
	assert.NotEmpty(t, page.Behavior.Directions[1].Policies[1].Fields[0].Error)
}

// A stored scenario in model 3's shorthand prefills the behavior it stands for and submits to
// the same controller; a shorthand a behavior cannot hold exactly stays in its own fields.
func TestFormShorthandSubmitsTheSameController(t *testing.T) {
	for name, doc := range map[string]string{
		"exact":    `{"autoscaler": {"interval_ms": 10000, "scale_down_window_ms": 60000, "max_remove_per_tick": 1}, "workload": {"type": "sessions"}}`,
		"nulls":    `{"autoscaler": {"scale_up_window_ms": 30000, "max_add_per_tick": null}, "workload": {"type": "sessions"}}`,
		"inexact":  `{"autoscaler": {"scale_down_window_ms": 60000.5, "max_add_per_tick": 2}, "workload": {"type": "sessions"}}`,
		"interval": `{"autoscaler": {"interval_ms": 15000.5, "max_remove_per_tick": 1}, "workload": {"type": "sessions"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			sc, err := sim.Parse([]byte(doc), sim.ParseEnv{})
			require.NoError(t, err)
			require.True(t, sc.Autoscaler.UsesShorthand())
			f := FromScenario(sc)
			again, err := Scenario(f, sim.ParseEnv{})
			require.NoError(t, err)
			assert.Equal(t, sc.Autoscaler.ControllerSettings(), again.Autoscaler.ControllerSettings())
			page := f.view(templatesPage(), NoErrors(), nil)
			if name == "inexact" || name == "interval" {
				assert.True(t, again.Autoscaler.UsesShorthand())
				assert.NotNil(t, page.Shorthand, "the shorthand is shown")
				assert.Equal(t, BehaviorNone, f.Get(BehaviorModePath))
			} else {
				assert.False(t, again.Autoscaler.UsesShorthand(), "written as a behavior")
				assert.NotNil(t, again.Autoscaler.Behavior)
				assert.Nil(t, page.Shorthand)
			}
		})
	}
}

// An external source with avg shows KEDA's warning; a pods source sends no aggregate.
func TestFormSourceAndAggregate(t *testing.T) {
	f := Default()
	f.Set(ScaleInModePath, ModeAutoscaler)
	f.Set(AggregatePath, sim.AggregateAvg)
	sc, err := Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.SourcePods, sc.Autoscaler.Source)
	assert.Empty(t, sc.Autoscaler.Aggregate)
	assert.False(t, f.view(templatesPage(), NoErrors(), nil).AvgWarning)

	f.Set(SourcePath, sim.SourceExternal)
	sc, err = Scenario(f, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.AggregateAvg, sc.Autoscaler.Aggregate)
	assert.True(t, f.view(templatesPage(), NoErrors(), nil).AvgWarning)

	f.Set(MetricPath, sim.MetricKVUsage)
	for _, fd := range f.view(templatesPage(), NoErrors(), nil).Autoscaler.Fields {
		if fd.Name == TargetPath {
			assert.Equal(t, "0.7", fd.Placeholder, "kv_usage proposes a fraction")
		}
	}
}

// fleet.workers outside the autoscaler's bounds is a warning on the form (not an error: the
// scenario runs, starting there).
func TestFormFleetOutsideBoundsWarns(t *testing.T) {
	f := Default()
	f.Set(ScaleInModePath, ModeAutoscaler)
	f.Set("fleet.workers", "16")
	f.Set("autoscaler.max_workers", "5")
	assert.Contains(t, f.view(templatesPage(), NoErrors(), nil).FleetWarning, "fleet.workers 16 lies outside the autoscaler's bounds [1, 5]")
	f.Set("autoscaler.max_workers", "")
	assert.Empty(t, f.view(templatesPage(), NoErrors(), nil).FleetWarning, "an empty max is the fleet's workers")
	f.Set("autoscaler.max_workers", "20")
	f.Set("autoscaler.min_workers", "2")
	assert.Empty(t, f.view(templatesPage(), NoErrors(), nil).FleetWarning)
	f.Set(ScaleInModePath, ModeSchedule)
	f.Set("autoscaler.max_workers", "5")
	assert.Empty(t, f.view(templatesPage(), NoErrors(), nil).FleetWarning, "no autoscaler, no bounds")
}
