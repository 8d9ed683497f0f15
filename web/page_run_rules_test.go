package web

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

func runExample(t *testing.T, name string) *sim.Report {
	t.Helper()
	data, err := os.ReadFile("../sim/testdata/examples/" + name)
	require.NoError(t, err)
	sc, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	require.NoError(t, err)
	return rep
}

// The verdicts name the controller's rule that shaped the night (docs/model.md#autoscaler E9, E10, E8).
func TestVerdictsNameTheRule(t *testing.T) {
	v := strings.Join(autoscalerVerdicts(runExample(t, "hpa_legacy_spike.json"), nil), "\n")
	assert.Contains(t, v, "The legacy path (an HPA without behavior) scaled up to 8 at 20 ms although the metric asked for 2")
	assert.Contains(t, v, "(2 decisions)")
	assert.Contains(t, v, "Set a behavior to avoid it.")

	v = strings.Join(autoscalerVerdicts(runExample(t, "hpa_legacy_spike_behavior.json"), nil), "\n")
	assert.NotContains(t, v, "legacy path", "a behavior's window holds, it never pushes up")
	assert.Contains(t, v, "A stabilisation window held 4 decisions")

	v = strings.Join(autoscalerVerdicts(runExample(t, "hpa_starting_holds.json"), nil), "\n")
	assert.Contains(t, v, "Starting workers held 1 decision")

	v = strings.Join(autoscalerVerdicts(runExample(t, "hpa_percent_period.json"), nil), "\n")
	assert.Contains(t, v, "The scaling policies limited 3 decisions")
}
