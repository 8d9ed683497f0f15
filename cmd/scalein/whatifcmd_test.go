package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

const fourWorkers = "../../sim/whatif/testdata/four-workers.json"

type sweepOut struct {
	Axes   []whatif.Axis `json:"axes"`
	Points []struct {
		Values     []any        `json:"values"`
		ScenarioID string       `json:"scenario_id"`
		Digest     string       `json:"digest"`
		Headline   []sim.Figure `json:"headline"`
	} `json:"points"`
}

// Each point's digest equals "scalein sim" on that point's scenario.
func TestSweepPointsEqualSimRuns(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "sweep", "-config", fourWorkers,
		"-vary", "kvcr.bandwidth_gbps=5,40", "-vary", "scale_in[0].grace_ms=0,1000", "-parallel", "2")
	// The base has no scale_in: the path must name an action that exists.
	require.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "-vary: axes[1].path: scale_in[0].grace_ms: scale_in has 0 element(s)")
	assert.Empty(t, stdout)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.json")
	data, err := os.ReadFile(fourWorkers)
	require.NoError(t, err)
	data = []byte(strings.Replace(string(data), `"workload"`, `"scale_in": [{"at_ms": 100, "count": 2}], "workload"`, 1))
	require.NoError(t, os.WriteFile(cfg, data, 0o644))
	code, stdout, stderr = runCLI(t, "", "sweep", "-config", cfg,
		"-vary", "kvcr.bandwidth_gbps=5,40", "-vary", "scale_in[0].grace_ms=0,1000", "-vary", "scale_in[0].select=highest_id,least_loaded")
	require.Equal(t, 0, code, stderr)
	var out sweepOut
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.Len(t, out.Points, 8)
	assert.Equal(t, []any{5.0, 0.0, "highest_id"}, out.Points[0].Values)
	assert.Equal(t, []any{5.0, 0.0, "least_loaded"}, out.Points[1].Values, "the last axis varies fastest")
	assert.Equal(t, []any{40.0, 1000.0, "least_loaded"}, out.Points[7].Values)

	base, err := sim.Parse(data, sim.ParseEnv{})
	require.NoError(t, err)
	points, err := whatif.Expand(base, out.Axes, sim.ParseEnv{}, 0) // the axes as the output lists them
	require.NoError(t, err)
	for i, p := range points {
		f := filepath.Join(dir, "point.json")
		require.NoError(t, os.WriteFile(f, p.Scenario.CanonicalJSON(), 0o644))
		code, rep, stderr := runCLI(t, "", "sim", "-config", f)
		require.Equal(t, 0, code, stderr)
		var r sim.Report
		require.NoError(t, json.Unmarshal([]byte(rep), &r))
		assert.Equal(t, r.Digest, out.Points[i].Digest, "point %d", i)
		assert.Equal(t, r.ScenarioID, out.Points[i].ScenarioID, "point %d", i)
	}

	code, stdout, stderr = runCLI(t, "", "sweep", "-config", cfg, "-vary", "kvcr.bandwidth_gbps=5,40", "-format", "csv")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3)
	assert.True(t, strings.HasPrefix(lines[0], "kvcr.bandwidth_gbps,run_id,status,latest_removal_ms"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "5,,done,"), lines[1])
}

func TestSweepUsageErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"no config":   {[]string{"sweep", "-vary", "kvcr.latency_ms=1"}, "-config is required"},
		"no vary":     {[]string{"sweep", "-config", fourWorkers}, "at least one -vary"},
		"bad vary":    {[]string{"sweep", "-config", fourWorkers, "-vary", "kvcr.latency_ms"}, "want PATH=V1,V2"},
		"bad format":  {[]string{"sweep", "-config", fourWorkers, "-vary", "kvcr.latency_ms=1", "-format", "xml"}, "-format must be json or csv"},
		"bad path":    {[]string{"sweep", "-config", fourWorkers, "-vary", "kvcr.latencyms=1,2"}, `axes[0].path: kvcr.latencyms: kvcr has no field "latencyms"; did you mean "latency_ms"?`},
		"bad value":   {[]string{"sweep", "-config", fourWorkers, "-vary", "kvcr.latency_ms=1,-2"}, "axes[0].values[1]: kvcr.latency_ms: must be ≥ 0"},
		"bad choice":  {[]string{"sweep", "-config", fourWorkers, "-vary", "router.policy=kv_aware,random"}, "axes[0].values[1]: must be one of"},
		"many points": {[]string{"sweep", "-config", fourWorkers, "-vary", "kvcr.latency_ms=1,2,3", "-max-points", "2"}, "give 3 points; the limit is 2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestPlanCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "plan", "-config", fourWorkers, "-remove", "2", "-start-ms", "100", "-ttft-p99-ms", "50", "-parallel", "2")
	require.Equal(t, 0, code, stderr)
	var res whatif.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.NotNil(t, res.Recommended)
	assert.Equal(t, 50.0, *res.Constraints.TTFTP99MS)
	assert.Equal(t, int64(0), *res.Constraints.MaxKilled)
	assert.Equal(t, res.Candidates[0].ScenarioID, res.Recommended.ScenarioID)
	for _, c := range res.Candidates {
		assert.NotEmpty(t, c.ScaleIn)
		if c.Status == whatif.StatusDone {
			assert.Len(t, c.Digest, 64)
		}
		assert.Empty(t, c.RunID)
	}
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw))
	assert.Contains(t, raw, "recommended")
	assert.Empty(t, stderr, "quiet without -timing")

	// -timing says how many runs were simulated on how many slots; the plan is the same.
	code, again, stderr := runCLI(t, "", "plan", "-config", fourWorkers, "-remove", "2", "-start-ms", "100", "-ttft-p99-ms", "50", "-parallel", "3", "-timing")
	require.Equal(t, 0, code, stderr)
	assert.JSONEq(t, stdout, again, "the same plan on 3 slots")
	assert.Contains(t, stderr, fmt.Sprintf("scalein plan: %d runs on 3 slots in ", res.Runs))
	assert.Contains(t, stderr, "slots busy")

	cases := map[string]struct {
		args []string
		want string
	}{
		"no remove":     {[]string{"plan", "-config", fourWorkers}, "-remove is required"},
		"remove all":    {[]string{"plan", "-config", fourWorkers, "-remove", "4"}, "goal.remove: must leave at least one of the 4 workers active"},
		"bad search":    {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-search", `{"wave": [1]}`}, "-search is not a valid search object"},
		"bad waves":     {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-search", `{"waves": [2]}`}, "search.waves[0]"},
		"bad ttft":      {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-ttft-p99-ms", "x"}, "want a number of ms"},
		"bad max runs":  {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-max-runs", "1"}, "search.max_runs"},
		"missing file":  {[]string{"plan", "-config", "nope.json", "-remove", "1"}, ""},
		"bad max kills": {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-max-killed", "-1"}, "constraints.max_killed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			if name == "missing file" {
				assert.Equal(t, 1, code)
			} else {
				assert.Equal(t, 2, code, stderr)
			}
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
