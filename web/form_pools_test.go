package web

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/form"
)

// The pd-night preset on the form: the Pools section shows prefill + decode with the preset's
// sizes and one-line help naming the runtimes, and the rendered page submitted untouched is
// the preset (form → JSON → form through the HTML).
func TestFormHoldsThePDPreset(t *testing.T) {
	s := newPageServer(t)
	doc := parseHTML(t, get(t, s, "/").Body)
	assert.Equal(t, 1, doc.Find(`a[href="/?preset=pd-night"]`).Length(), "the form offers pd-night")

	doc = parseHTML(t, get(t, s, "/?preset=pd-night").Body)
	pools := byTestID(doc, "pools")
	require.Equal(t, 1, pools.Length())
	assert.Equal(t, form.PoolsPD, pools.Find(`select[name="pools_mode"] option[selected]`).AttrOr("value", ""))
	assert.Equal(t, "4", pools.Find(`input[name="disaggregation.prefill.workers"]`).AttrOr("value", ""))
	assert.Equal(t, "12", pools.Find(`input[name="disaggregation.decode.workers"]`).AttrOr("value", ""))
	text := pools.Text()
	for _, want := range []string{"vLLM ≥ 0.22", "vLLM before 0.22", "Dynamo", "SGLang", "vLLM's default", "set in the Scenario JSON box", "each pool's own autoscaler"} {
		assert.Contains(t, text, want)
	}

	p, ok := sim.PresetByKey("pd-night")
	require.True(t, ok)
	want, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	got, err := form.Scenario(form.FromValues(submittedValues(doc)), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, want.ID(), got.ID(), "\nwant %s\ngot  %s", want.CanonicalJSON(), got.CanonicalJSON())
}

// llm-d's pair of ScaledObjects on the form: each pool's autoscaler in its own fieldset of the
// Pools section (not the JSON box), and the rendered page submitted untouched is the preset.
func TestFormHoldsThePoolAutoscalersPreset(t *testing.T) {
	s := newPageServer(t)
	doc := parseHTML(t, get(t, s, "/?preset=pd-llmd-keda").Body)
	pools := byTestID(doc, "pools")
	require.Equal(t, 1, pools.Length())
	assert.Equal(t, form.PoolAutoscalerSet, pools.Find(`select[name="autoscaler.prefill"] option[selected]`).AttrOr("value", ""))
	assert.Equal(t, form.PoolAutoscalerSet, pools.Find(`select[name="autoscaler.decode"] option[selected]`).AttrOr("value", ""))
	assert.Equal(t, sim.MetricRequestsWaiting, pools.Find(`select[name="autoscaler.prefill.metric"] option[selected]`).AttrOr("value", ""))
	assert.Equal(t, sim.MetricKVUsage, pools.Find(`select[name="autoscaler.decode.metric"] option[selected]`).AttrOr("value", ""))
	assert.Equal(t, "0.8", pools.Find(`input[name="autoscaler.decode.target"]`).AttrOr("value", ""))
	assert.Equal(t, "300000", pools.Find(`input[name="autoscaler.decode.behavior.scale_down.window_ms"]`).AttrOr("value", ""))
	assert.Equal(t, "180000", pools.Find(`input[name="autoscaler.prefill.behavior.scale_up.policies[0].period_ms"]`).AttrOr("value", ""))
	assert.Empty(t, doc.Find(`textarea[name="scenario_json"]`).Text(), "the fields hold it, not the JSON box")

	p, ok := sim.PresetByKey("pd-llmd-keda")
	require.True(t, ok)
	want, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	got, err := form.Scenario(form.FromValues(submittedValues(doc)), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, want.ID(), got.ID(), "\nwant %s\ngot  %s", want.CanonicalJSON(), got.CanonicalJSON())
}
