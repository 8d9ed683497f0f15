package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

const lull = "../../sim/whatif/testdata/lull.json"

// "scalein plan -tune autoscaler" recommends settings within the limits and -hpa writes them as
// manifests that read back into the same settings.
func TestPlanTuneCommand(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "hpa.yaml")
	code, stdout, stderr := runCLI(t, "", "plan", "-config", lull, "-tune", "autoscaler", "-ttft-p99-ms", "200",
		"-max-killed", "0", "-max-runs", "12", "-parallel", "2", "-hpa", manifest)
	require.Equal(t, 0, code, stderr)
	var res whatif.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.Equal(t, whatif.TuneAutoscaler, res.Goal.Tune)
	assert.Equal(t, 200.0, *res.Constraints.TTFTP99MS)
	assert.LessOrEqual(t, res.Runs, 12)
	require.NotNil(t, res.Recommended, res.Reason)
	require.Len(t, res.Baselines, 2)
	assert.Equal(t, res.Candidates[0].ScenarioID, res.Recommended.ScenarioID)
	assert.Contains(t, res.Recommended.Reason, "fewer GPU-hours than a fixed fleet of 4 workers")
	for _, c := range res.Candidates {
		assert.Empty(t, c.RunID)
		assert.NotNil(t, c.Autoscaler, c.Label)
	}

	data, err := os.ReadFile(manifest)
	require.NoError(t, err)
	assert.Contains(t, string(data), "recommended \""+res.Recommended.Label+"\"")
	im, err := hpa.Import(data, sim.Autoscaler{IntervalMS: 15000})
	require.NoError(t, err)
	assert.Empty(t, im.Problems)
	want := *res.Recommended.Autoscaler
	got := im.Autoscaler
	got.Select, got.StartupMS, got.MetricDelayMS, got.ReuseDraining = want.Select, want.StartupMS, want.MetricDelayMS, want.ReuseDraining
	// The manifest holds the controller the plan recommends: its shorthand comes back as the
	// behavior it stands for.
	ws, gs := want.ControllerSettings(), got.ControllerSettings()
	if ws.Behavior != nil {
		// per direction inside the behavior; the cluster-wide window is not a manifest field
		ws.Tolerance, gs.Tolerance, ws.DownscaleWindowNS, gs.DownscaleWindowNS = 0, 0, 0, 0
	}
	assert.Equal(t, ws, gs)
	assert.Equal(t, want.Metric, got.Metric)
	assert.Equal(t, want.GraceMS, got.GraceMS)
	assert.Equal(t, *res.Recommended.MigrationLimit, *im.MigrationLimit)
}

func TestPlanTuneCommandErrors(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "mine.yaml")
	require.NoError(t, os.WriteFile(existing, []byte("kind: HorizontalPodAutoscaler\n"), 0o644))
	cases := map[string]struct {
		args []string
		want string
	}{
		"no autoscaler":   {[]string{"plan", "-config", fourWorkers, "-tune", "autoscaler"}, "goal.tune: needs a scenario with an autoscaler"},
		"unknown tune":    {[]string{"plan", "-config", lull, "-tune", "router"}, `goal.tune: must be "autoscaler"`},
		"tune and remove": {[]string{"plan", "-config", lull, "-tune", "autoscaler", "-remove", "1"}, "-remove and -start-ms are for a drain plan"},
		"hpa without tune": {[]string{"plan", "-config", fourWorkers, "-remove", "1", "-hpa", "x.yaml"},
			"-hpa writes a tune plan's recommended settings"},
		"hpa exists": {[]string{"plan", "-config", lull, "-tune", "autoscaler", "-hpa", existing},
			"the file exists and is not replaced (it may be your own manifest, to import with scalein import); name a new file, or add -force to replace it"},
		"force without hpa":  {[]string{"plan", "-config", lull, "-tune", "autoscaler", "-force"}, "-force replaces the -hpa file: use it with -hpa"},
		"drain search field": {[]string{"plan", "-config", lull, "-tune", "autoscaler", "-search", `{"waves": [1]}`}, "search.waves: is for a drain plan"},
		"bad e2e":            {[]string{"plan", "-config", lull, "-tune", "autoscaler", "-e2e-p99-ms", "0"}, "constraints.e2e_p99_ms"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// "scalein plan -tune autoscaler -manifest FILE" writes the recommendation into the user's own
// file in place: comments and everything the plan did not change stay as they were.
func TestPlanTuneIntoManifest(t *testing.T) {
	const yours = `# our HPA (reviewed by the platform team)
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: lull-workers   # the night pool
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: lull-workers
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Pods
    pods:
      metric:
        name: vllm_num_requests_running_and_waiting
      target:
        type: AverageValue
        averageValue: "12"
`
	file := filepath.Join(t.TempDir(), "hpa.yaml")
	require.NoError(t, os.WriteFile(file, []byte(yours), 0o644))
	code, stdout, stderr := runCLI(t, "", "plan", "-config", lull, "-tune", "autoscaler", "-ttft-p99-ms", "200",
		"-max-killed", "0", "-max-runs", "8", "-parallel", "2", "-manifest", file)
	require.Equal(t, 0, code, stderr)
	var res whatif.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.NotNil(t, res.Recommended, res.Reason)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	text := string(data)
	assert.True(t, strings.HasPrefix(text, "# Scale-in Planner: scalein plan -tune"), text)
	assert.Contains(t, text, "# our HPA (reviewed by the platform team)\n")
	assert.Contains(t, text, "  name: lull-workers   # the night pool\n")
	assert.NotContains(t, text, "kind: Deployment\nmetadata", "no workload document the file did not have")
	im, err := hpa.Import(data, sim.Autoscaler{IntervalMS: 15000})
	require.NoError(t, err)
	assert.Equal(t, res.Recommended.Autoscaler.Target, im.Autoscaler.Target)
	assert.Equal(t, res.Recommended.Autoscaler.ControllerSettings().Behavior, im.Autoscaler.ControllerSettings().Behavior)

	code, _, stderr = runCLI(t, "", "plan", "-config", lull, "-remove", "1", "-manifest", file)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-manifest writes a tune plan's recommended settings into your file")
}
