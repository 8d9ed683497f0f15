package sim

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpareCoreKeepsReports runs session workloads with and without RunOptions.SpareCore (the
// session feed's goroutine and the report's E2E percentiles beside the run) and requires the
// same report, byte for byte but the run's wall time: a day of rate stages whose sessions end
// before the count (the feed stops at the last stage), sessions that outnumber a feed batch by
// far with per-request rows, a scale-in that kills requests mid-session (no later turns), and
// one session alone.
func TestSpareCoreKeepsReports(t *testing.T) {
	p, ok := PresetByKey("autoscaler-hour")
	require.True(t, ok)
	docs := map[string]string{
		"preset autoscaler-hour": string(p.JSON),
		"rows": `{"name": "rows", "seed": 7, "fleet": {"workers": 4, "gpu_blocks": 512, "host_blocks": 2048},
			"report": {"per_request": true},
			"workload": {"type": "sessions", "sessions": {"count": 1500, "turns": 4, "rate_per_s": 40,
				"system_prompt_tokens": 700, "prefix_groups": 3, "new_input_tokens": 200, "output_tokens": 60}}}`,
		"killed": `{"name": "killed", "seed": 3, "fleet": {"workers": 3, "gpu_blocks": 256},
			"scale_in": [{"at_ms": 4000, "workers": [1, 2], "grace_ms": 0}],
			"workload": {"type": "sessions", "sessions": {"count": 400, "turns": 3, "rate_per_s": 60}}}`,
		"one": `{"name": "one", "fleet": {"workers": 1},
			"workload": {"type": "sessions", "sessions": {"count": 1, "turns": 2, "rate_per_s": 1}}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			s := mustParse(t, doc)
			var out [2][]byte
			for i, spare := range []bool{false, true} {
				r, err := Run(context.Background(), s, RunOptions{SpareCore: spare})
				require.NoError(t, err)
				if name == "killed" {
					require.Positive(t, r.Summary.Requests.Killed)
				}
				r.Sim.WallMS = 0
				out[i], err = json.Marshal(r)
				require.NoError(t, err)
			}
			require.Greater(t, len(out[0]), 1000)
			require.Equal(t, string(out[0]), string(out[1]))
		})
	}
}
