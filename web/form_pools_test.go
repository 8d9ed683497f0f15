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
	for _, want := range []string{"vLLM ≥ 0.22", "vLLM before 0.22", "Dynamo", "SGLang", "vLLM's default", "set in the Scenario JSON box"} {
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
