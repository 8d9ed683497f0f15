package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// E12 of docs/model.md#model-5 under the three prefill drain modes: with wait the handoff lands,
// with fixed (4 ms) it fails with source_removed, with skip with source_skipped.
func TestSimPairPrefillDrainRunsThreeModes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runSim(context.Background(), []string{"-config", "../../sim/testdata/examples/pd_drain_wait.json", "-pair", "prefill-drain"}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	var out struct {
		Modes []string
		Runs  map[string]struct {
			Name    string
			Summary struct {
				Requests       struct{ Failed int }
				Disaggregation struct {
					Failed map[string]int
				}
			}
		}
		Comparisons map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	assert.Equal(t, []string{"wait", "fixed", "skip"}, out.Modes)
	assert.Equal(t, 0, out.Runs["wait"].Summary.Requests.Failed)
	assert.Equal(t, 1, out.Runs["fixed"].Summary.Disaggregation.Failed["source_removed"])
	assert.Equal(t, 1, out.Runs["skip"].Summary.Disaggregation.Failed["source_skipped"])
	assert.Equal(t, "pd_drain_wait — drain skip", out.Runs["skip"].Name)
	assert.Contains(t, out.Comparisons, "fixed")
	assert.Contains(t, out.Comparisons, "skip")
	assert.NotContains(t, out.Comparisons, "wait", "wait is the baseline")
}

func TestSimPairLoadFailureAndLease(t *testing.T) {
	for _, c := range []struct{ file, pair, wantB string }{
		{"pd_drain_fixed.json", "load-failure", "pd_drain_fixed — load failure recompute"},
		{"pd_one_request.json", "lease", "pd_one_request — fixed 480 s lease"},
	} {
		var stdout, stderr bytes.Buffer
		code := runSim(context.Background(), []string{"-config", "../../sim/testdata/examples/" + c.file, "-pair", c.pair}, nil, &stdout, &stderr)
		require.Equal(t, 0, code, stderr.String())
		var out struct{ B struct{ Name string } }
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
		assert.Equal(t, c.wantB, out.B.Name)
	}
	var stdout, stderr bytes.Buffer
	code := runSim(context.Background(), []string{"-config", "../../sim/testdata/examples/budget_zero_stops_scan.json", "-pair", "lease"}, nil, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "disaggregation")
}
