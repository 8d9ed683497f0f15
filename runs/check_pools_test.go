package runs

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// A tune plan of one pool takes that pool's origin from a P/D import; a drain plan, or a tune
// plan without a role, takes none.
func TestPlanOriginOfAPool(t *testing.T) {
	manifest, err := os.ReadFile("../sim/hpa/testdata/pd/llm-d-keda.yaml")
	require.NoError(t, err)
	out, im, _, err := hpa.IntoScenario([]byte(`{"workload": {"type": "sessions", "sessions": {}}}`), manifest, sim.ParseEnv{})
	require.NoError(t, err)
	base, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	raw, err := json.Marshal(im.Pools.Decode.Origin)
	require.NoError(t, err)

	stored, err := planOrigin(raw, base, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler, Role: sim.RoleDecode}})
	require.NoError(t, err)
	assert.Contains(t, string(stored), "ms-llama-decode")

	for _, g := range []whatif.Goal{{Tune: whatif.TuneAutoscaler}, {Remove: 1, Role: sim.RoleDecode}} {
		_, err = planOrigin(raw, base, whatif.Request{Goal: g})
		require.Error(t, err, "%+v", g)
		assert.Contains(t, err.Error(), "of the pool goal.role names")
	}
}
