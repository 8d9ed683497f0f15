package hpa_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

// The night starts with the replicas the operator runs: the scaled workload's replicas (a
// Deployment, StatefulSet, LeaderWorkerSet, a Dynamo worker service) or the HPA's
// status.currentReplicas; else the scenario's workers clamped into [min, max], with a note.
func TestImportStartingFleet(t *testing.T) {
	file := func(name string) string {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		return string(data)
	}
	withStatus := hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "") + "status:\n  currentReplicas: 5\n  desiredReplicas: 5\n"
	cases := []struct {
		name, manifest string
		scenario       int
		want           int
		from           string // a substring of the note ("" when filled from the file)
	}{
		{"Deployment replicas", file("testdata/edit/stream-deployment-hpa.yaml"), 16, 3, ""},
		{"StatefulSet replicas and status", file("testdata/charts/kubectl-list-v2beta2.yaml"), 16, 2, ""},
		{"LeaderWorkerSet replicas", file("testdata/charts/llm-d-decode-keda.yaml"), 16, 2, ""},
		{"Dynamo worker service replicas", file("testdata/charts/dynamo-graph-keda.yaml"), 16, 2, ""},
		{"HPA status.currentReplicas", withStatus, 16, 5, ""},
		{"nothing: clamped to max", file("testdata/charts/production-stack-hpa-adapter.yaml"), 16, 4, "the scenario's 16 workers lie outside [1, 4], so the night starts at 4"},
		{"nothing: within bounds", file("testdata/charts/production-stack-hpa-adapter.yaml"), 3, 3, "the night starts at the scenario's 3 workers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := `{"fleet": {"workers": ` + itoa(tc.scenario) + `}, "workload": {"type": "sessions", "sessions": {}}}`
			out, im, _, err := hpa.IntoScenario([]byte(base), []byte(tc.manifest), sim.ParseEnv{})
			require.NoError(t, err)
			s, err := sim.Parse(out, sim.ParseEnv{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Fleet.Workers)
			var notes []string
			for _, p := range im.Problems {
				if p.Path == "fleet.workers" {
					notes = append(notes, p.Message)
				}
			}
			if tc.from == "" {
				assert.Contains(t, im.Filled, "fleet.workers")
				require.NotNil(t, im.Workers)
				assert.Contains(t, strings.ToLower(im.WorkersFrom), "replicas")
				assert.Empty(t, notes)
				return
			}
			assert.NotContains(t, im.Filled, "fleet.workers")
			require.Len(t, notes, 1)
			assert.Contains(t, notes[0], tc.from)
		})
	}
}

// Replicas outside the autoscaler's bounds are kept (they are what runs) and named.
func TestImportStartingFleetOutsideBounds(t *testing.T) {
	m := strings.Replace(hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", ""), "maxReplicas: 8", "maxReplicas: 4", 1) +
		"status:\n  currentReplicas: 6\n"
	out, im, _, err := hpa.IntoScenario([]byte(`{"workload": {"type": "sessions", "sessions": {}}}`), []byte(m), sim.ParseEnv{})
	require.NoError(t, err)
	s, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 6, s.Fleet.Workers)
	assert.Contains(t, im.Problems, hpa.Problem{Path: "fleet.workers",
		Message: `6 from document 1 (HorizontalPodAutoscaler "vllm-hpa") status.currentReplicas lies outside the autoscaler's bounds [2, 4]: the first decision brings it to 4`})
}

func itoa(n int) string { return strconv.Itoa(n) }
