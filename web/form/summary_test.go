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
// form asks for (the general groups, the workload type and the fields of the scenario's
// workload type), under the form's label, with a value; so a field added to the form is
// summarised too. Every workload type is covered: the presets and a scripted scenario.
func TestScenarioSummaryListsEveryFormField(t *testing.T) {
	docs := map[string][]byte{"scripted": []byte(runtest.Scenario("scripted"))}
	for _, p := range sim.Presets() {
		docs[p.Key] = p.JSON
	}
	types := map[string]bool{}
	for name, doc := range docs {
		sc, err := sim.Parse(doc, sim.ParseEnv{})
		require.NoError(t, err, name)
		types[sc.Workload.Type] = true
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
		assert.Contains(t, shown, "Schedule", name)
	}
	assert.Equal(t, map[string]bool{sim.WorkloadSessions: true, sim.WorkloadTrace: true, sim.WorkloadRequests: true}, types,
		"the documents cover every workload type")
}
