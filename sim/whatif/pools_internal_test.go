package whatif

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// A tune candidate of one pool is a scenario with pools: the tuned pool's autoscaler changed,
// the other pool's as the scenario has it; the fixed baseline drops only the tuned pool's
// autoscaler and sizes that pool at its max_workers. A drain candidate drops both autoscalers.
func TestPoolCandidatesKeepTheOtherPool(t *testing.T) {
	data, err := os.ReadFile("testdata/pd-small-autoscalers.json")
	require.NoError(t, err)
	base, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	req, err := Normalize(base, Request{Goal: Goal{Tune: TuneAutoscaler, Role: sim.RoleDecode}})
	require.NoError(t, err)
	view := poolView(base, sim.RoleDecode)
	tu := &tuner{planner: &planner{base: view, req: req, memo: map[string]Outcome{}}, yours: settingOf(view), pools: base}
	st := tu.yours
	st.target = 0.9
	c := tu.candidate(st, StageCoarse)
	sc := c.scenario
	assert.Nil(t, sc.Autoscaler)
	require.NotNil(t, sc.PoolAutoscalers)
	assert.Equal(t, 0.9, sc.PoolAutoscalers.Decode.Target)
	assert.Equal(t, *base.PoolAutoscalers.Prefill, *sc.PoolAutoscalers.Prefill)
	assert.Equal(t, 0.6, base.PoolAutoscalers.Decode.Target, "the base is not changed")

	f := tu.fixedCandidate().scenario
	require.NotNil(t, f.PoolAutoscalers)
	assert.Nil(t, f.PoolAutoscalers.Decode)
	assert.Equal(t, *base.PoolAutoscalers.Prefill, *f.PoolAutoscalers.Prefill)
	assert.Equal(t, base.PoolAutoscalers.Decode.MaxWorkers, f.Disaggregation.Decode.Workers)
	assert.Equal(t, base.Disaggregation.Prefill.Workers, f.Disaggregation.Prefill.Workers)
	assert.Equal(t, 3, base.Disaggregation.Decode.Workers, "the base's pool is not changed")

	dreq, err := Normalize(base, Request{Goal: Goal{Remove: 1, Role: sim.RolePrefill}})
	require.NoError(t, err)
	p := &planner{base: base, req: dreq, memo: map[string]Outcome{}}
	d := p.candidate("x", StageExplore, p.schedule(sim.SelectHighestID, nil, 1, 0, nil)).scenario
	assert.Nil(t, d.Autoscaler)
	assert.Nil(t, d.PoolAutoscalers)
	require.Len(t, d.ScaleIn, 1)
	assert.Equal(t, sim.RolePrefill, d.ScaleIn[0].Role)
}
