package form

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// TestScenarioSummaryListsEveryFormField: the run page's scenario summary shows every field the
// form asks for (the general groups, the scale-in choice with the autoscaler's fields or the
// schedule, the workload type and the fields of the scenario's workload type), under the
// form's label, with a value; so a field added to the form is summarised too. Every workload
// type and both scale-in modes are covered: the presets and a scripted scenario.
func TestScenarioSummaryListsEveryFormField(t *testing.T) {
	docs := map[string][]byte{"scripted": []byte(runtest.Scenario("scripted"))}
	for _, p := range sim.Presets() {
		docs[p.Key] = p.JSON
	}
	types := map[string]bool{}
	autoscaled := false
	for name, doc := range docs {
		sc, err := sim.Parse(doc, sim.ParseEnv{})
		require.NoError(t, err, name)
		types[sc.Workload.Type] = true
		autoscaled = autoscaled || sc.Autoscaler != nil
		shown := map[string]map[string]string{} // group title → label → value
		for _, g := range ScenarioInputs(sc) {
			shown[g.Title] = map[string]string{}
			for _, it := range g.Items {
				shown[g.Title][it.Label] = it.Value
			}
		}
		want := map[string][]fieldSpec{}
		for _, g := range generalGroups {
			want[g.Legend] = g.Fields
		}
		fields, ok := workloadFields(sc.Workload.Type)
		require.True(t, ok, name)
		want["Workload"] = append([]fieldSpec{workloadTypeField}, fields...)
		want["Pools"] = []fieldSpec{poolsModeField}
		poolless := 0
		for _, g := range poolGroups() {
			if sc.Disaggregation != nil {
				want[g.Legend] = g.Fields
			} else {
				poolless += len(g.Fields)
			}
		}
		if sc.Autoscaler != nil {
			want[autoscalerGroup.Legend] = append([]fieldSpec{scaleInModeField}, autoscalerGroup.Fields...)
			assert.NotContains(t, shown, "Schedule", name)
		} else {
			want["Schedule"] = []fieldSpec{scaleInModeField}
		}
		single := 0
		singleFields(func(fieldSpec) { single++ }) // every single field is one of those wanted
		wanted := 0
		for _, fs := range want {
			wanted += len(fs)
		}
		otherWorkloads := 0
		for _, w := range workloadGroups {
			if w.Type != sc.Workload.Type {
				otherWorkloads += len(w.Group.Fields)
			}
		}
		// The behavior's fields and the model-3 shorthand are summarised together, by direction.
		together := 1 + len(behaviorFields()) + len(shorthandGroup.Fields)
		modeless := len(autoscalerGroup.Fields) + together
		if sc.Autoscaler != nil {
			modeless = together
			assert.NotEmpty(t, shown[autoscalerGroup.Legend][behaviorModeField.Label], name)
		}
		// A pool's autoscaler: its choice and common fields listed, its behavior summarised by
		// direction; without one (or without pools) its fields are not shown.
		for _, role := range poolAutoscalerRoles {
			g := poolAutoscalerGroup(role)
			var a *sim.Autoscaler
			if sc.PoolAutoscalers != nil {
				a = map[string]*sim.Autoscaler{sim.RolePrefill: sc.PoolAutoscalers.Prefill, sim.RoleDecode: sc.PoolAutoscalers.Decode}[role]
			}
			if a == nil {
				poolless += len(g.Fields)
				continue
			}
			want[g.Legend] = g.Fields[:1+len(poolAutoscalerCommon)]
			wanted += 1 + len(poolAutoscalerCommon)
			poolless += len(g.Fields) - 1 - len(poolAutoscalerCommon)
			assert.NotEmpty(t, shown[g.Legend][behaviorModeField.Label], name)
			assert.Contains(t, shown["Schedule"][scaleInModeField.Label], ModeAutoscaler, name)
		}
		assert.Equal(t, single, wanted+otherWorkloads+modeless+poolless, "%s: a single field of the form is in no group the summary shows", name)
		for title, fields := range want {
			for _, fs := range fields {
				v, ok := shown[title][fs.Label]
				if assert.True(t, ok, "%s: %s is not summarised under %s", name, fs.Path, title) {
					assert.NotEmpty(t, v, "%s: %s", name, fs.Path)
				}
			}
		}
		assert.Equal(t, format.Number(sc.Fleet.Timing.DecodeMSPer1kKVTokens)+" ms per 1k KV tokens",
			shown["Timing"]["Decode per 1k KV tokens"], name)
	}
	assert.Equal(t, map[string]bool{sim.WorkloadSessions: true, sim.WorkloadTrace: true, sim.WorkloadRequests: true}, types,
		"the documents cover every workload type")
	assert.True(t, autoscaled, "the documents cover the autoscaler")
}
