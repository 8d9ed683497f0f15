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
)

const (
	chartsDir = "../../sim/hpa/testdata/charts/"
	loadDir   = "../../sim/load/testdata/"
)

// scalein import prints the scenario with the manifest's autoscaler; problems go to stderr.
func TestImportCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "import", "-manifest", chartsDir+"production-stack-keda.yaml", "-config", loadDir+"scenario.json")
	require.Equal(t, 0, code, stderr)
	s, err := sim.Parse([]byte(stdout), sim.ParseEnv{})
	require.NoError(t, err, stdout)
	require.NotNil(t, s.Autoscaler)
	assert.Equal(t, sim.MetricRequestsWaiting, s.Autoscaler.Metric)
	assert.Equal(t, sim.SourceExternal, s.Autoscaler.Source)
	assert.Equal(t, 5.0, s.Autoscaler.Target)
	assert.Equal(t, 6, s.Autoscaler.MaxWorkers)
	assert.Equal(t, "night", s.Name, "the base scenario is kept")
	assert.Contains(t, stdout, "12345678901234567", "the seed keeps its digits")
	assert.Contains(t, stderr, "spec.cooldownPeriod: 360 only applies to scaling to and from zero")

	// Without -config the sessions workload at its defaults; with -load the stages too.
	code, stdout, stderr = runCLI(t, "", "import", "-manifest", chartsDir+"dynamo-graph-keda.yaml", "-load", loadDir+"night_1m.json")
	require.Equal(t, 0, code, stderr)
	s, err = sim.Parse([]byte(stdout), sim.ParseEnv{})
	require.NoError(t, err, stdout)
	assert.Equal(t, 3, s.Router.MigrationLimit)
	assert.Len(t, s.Workload.Sessions.RateStages, 5)
	assert.Equal(t, 2.0, s.Workload.Sessions.RateStages[0].RatePerS, "6 requests/s over 3 turns")
	assert.Contains(t, stderr, "divided by 3 turns per session")
}

func TestImportCommandRefuses(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"import"}, 2, []string{"-manifest FILE", "-load FILE"}},
		{[]string{"import", "-manifest", chartsDir + "nim-hpa-cpu.yaml"}, 2, []string{"nim-hpa-cpu.yaml", "a Resource (cpu) metric"}},
		{[]string{"import", "-manifest", chartsDir + "aibrix-kv-percent.yaml"}, 2, []string{"70 looks like a percentage", "write 0.7"}},
		{[]string{"import", "-manifest", chartsDir + "helm-template-unrendered.yaml"}, 2, []string{"helm template"}},
		{[]string{"import", "-manifest", "no-such.yaml"}, 1, []string{"-manifest", "no-such.yaml"}},
		{[]string{"import", "-manifest", chartsDir + "gke-hpa-kv-cache.yaml", "-load", loadDir + "vector.json"}, 2, []string{"vector.json", "instant query"}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.args[len(tc.args)-1]), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			assert.Empty(t, stdout)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w)
			}
		})
	}
}

// scalein export writes the scenario's autoscaler into the user's own object, and refuses to
// replace a file without -force.
func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	original := chartsDir + "llm-d-decode-keda.yaml"
	code, scenario, stderr := runCLI(t, "", "import", "-manifest", original, "-config", loadDir+"scenario.json")
	require.Equal(t, 0, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(scenario), &doc))
	doc["autoscaler"].(map[string]any)["target"] = 20
	b, _ := json.Marshal(doc)
	config := filepath.Join(dir, "scenario.json")
	require.NoError(t, os.WriteFile(config, b, 0o644))

	out := filepath.Join(dir, "out.yaml")
	code, stdout, stderr := runCLI(t, "", "export", "-config", config, "-manifest", original, "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "kind: ScaledObject")
	assert.Contains(t, string(data), "name: ms-llama-decode")
	assert.Contains(t, string(data), "kind: LeaderWorkerSet", "the grace goes back to the workload it came from")
	// The user's file, with the one changed value changed and one header comment.
	orig, err := os.ReadFile(original)
	require.NoError(t, err)
	body := strings.SplitN(string(data), "\n", 2)
	require.Len(t, body, 2)
	assert.True(t, strings.HasPrefix(body[0], "# Scale-in Planner: scalein export of scenario"), body[0])
	assert.Equal(t, strings.Replace(string(orig), `threshold: "24"`, `threshold: "20"`, 1), body[1])
	assert.Contains(t, stderr, `changed ScaledObject "ms-llama-decode" spec.triggers[0].metadata.threshold: 24 → 20`)
	im, err := hpa.Import(data, sim.Autoscaler{IntervalMS: 15000})
	require.NoError(t, err)
	assert.Equal(t, 20.0, im.Autoscaler.Target)
	assert.Equal(t, sim.MetricRequestsPerWorker, im.Autoscaler.Metric)

	code, _, stderr = runCLI(t, "", "export", "-config", config, "-manifest", original, "-o", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "the file exists and is not replaced")
	assert.Contains(t, stderr, "-force")
	code, _, stderr = runCLI(t, "", "export", "-config", config, "-o", out, "-force", "-kind", "keda", "-name", "vllm", "-namespace", "ml")
	require.Equal(t, 0, code, stderr)
	data, _ = os.ReadFile(out)
	assert.Contains(t, string(data), "namespace: ml")

	// To stdout; a scenario without an autoscaler is refused.
	code, stdout, stderr = runCLI(t, "", "export", "-config", config)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "kind: HorizontalPodAutoscaler")
	code, _, stderr = runCLI(t, "", "export", "-config", loadDir+"scenario.json")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "has no autoscaler")
	assert.Contains(t, stderr, "scalein import -manifest")
	code, _, stderr = runCLI(t, "", "export", "-config", config, "-kind", "vpa")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `-kind "vpa": hpa or keda`)
}

// scalein load prints the stages alone, or the scenario with them.
func TestLoadCommand(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "load", "-prometheus", loadDir+"night_1m.json", "-turns", "2", "-tolerance", "0.05")
	require.Equal(t, 0, code, stderr)
	var c struct {
		Stages []sim.RateStage `json:"rate_stages"`
		StepMS float64         `json:"step_ms"`
		Turns  int             `json:"turns"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &c))
	assert.Equal(t, []sim.RateStage{{DurationMS: 180000, RatePerS: 3}, {DurationMS: 120000, RatePerS: 1.5}, {DurationMS: 60000, RatePerS: 4.65}}, c.Stages)
	assert.Equal(t, 60000.0, c.StepMS)
	assert.Contains(t, stderr, "6 steps of 1m0s make 3 stages")

	code, stdout, stderr = runCLI(t, "", "load", "-prometheus", loadDir+"night_1m.json", "-config", loadDir+"scenario.json", "-reading", "sessions")
	require.Equal(t, 0, code, stderr)
	s, err := sim.Parse([]byte(stdout), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 6.0, s.Workload.Sessions.RateStages[0].RatePerS)
	assert.Contains(t, stderr, "workload.sessions.count 10 →")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load"}, "-prometheus FILE is required"},
		{[]string{"load", "-prometheus", loadDir + "gap.json"}, "2 steps of 1m0s have no sample"},
		{[]string{"load", "-prometheus", loadDir + "two_series.json"}, "wrap the query in sum(…)"},
		{[]string{"load", "-prometheus", loadDir + "night_1m.json", "-reading", "tokens"}, `reading "tokens"`},
		{[]string{"load", "-prometheus", loadDir + "night_1m.json", "-config", loadDir + "scenario.json", "-turns", "2"}, "-turns is the scenario's"},
	} {
		code, stdout, stderr := runCLI(t, "", tc.args...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tc.want)
	}
}

// scalein import -select reads the named autoscaler of a stream that holds several.
func TestImportSelect(t *testing.T) {
	a, err := os.ReadFile(chartsDir + "gke-hpa-queue-size.yaml")
	require.NoError(t, err)
	b, err := os.ReadFile(chartsDir + "production-stack-keda.yaml")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "two.yaml")
	require.NoError(t, os.WriteFile(file, append(append(a, "---\n"...), b...), 0o644))

	code, stdout, stderr := runCLI(t, "", "import", "-manifest", file)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, `another autoscaler (ScaledObject "vllm-llama3-8b-scaledobject"): not read`)
	assert.Contains(t, stderr, "-select vllm-llama3-8b-scaledobject")
	assert.Contains(t, stdout, `"source": "pods"`)

	code, stdout, stderr = runCLI(t, "", "import", "-manifest", file, "-select", "vllm-llama3-8b-scaledobject")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"source": "external"`)
	assert.Contains(t, stderr, `another autoscaler (HorizontalPodAutoscaler "tgi-gemma-hpa"): not read, "vllm-llama3-8b-scaledobject" was selected`)

	code, _, stderr = runCLI(t, "", "import", "-manifest", file, "-select", "nope")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `select "nope": no autoscaler of that name`)
}

// scalein load -replicas sets the replicas running at the start (fleet.workers).
func TestLoadReplicas(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "load", "-prometheus", loadDir+"night_1m.json", "-config", loadDir+"scenario.json", "-replicas", "3")
	require.Equal(t, 0, code, stderr)
	s, err := sim.Parse([]byte(stdout), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 3, s.Fleet.Workers)
	assert.NotEmpty(t, s.Workload.Sessions.RateStages)

	code, _, stderr = runCLI(t, "", "load", "-prometheus", loadDir+"night_1m.json", "-replicas", "3")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-replicas sets the scenario's fleet.workers: use it with -config")
	code, _, stderr = runCLI(t, "", "load", "-prometheus", loadDir+"night_1m.json", "-config", loadDir+"scenario.json", "-replicas", "-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "replicas -1: at least 1")
}

// A P/D file: import gives the pools and an autoscaler per pool; export writes each pool's
// settings back into its own object of the file, and without -manifest one HPA per pool.
func TestImportExportPools(t *testing.T) {
	const file = "../../sim/hpa/testdata/pd/llm-d-keda.yaml"
	code, stdout, stderr := runCLI(t, "", "import", "-manifest", file)
	require.Equal(t, 0, code, stderr)
	s, err := sim.Parse([]byte(stdout), sim.ParseEnv{})
	require.NoError(t, err, stdout)
	require.NotNil(t, s.Disaggregation)
	assert.Equal(t, 4, s.Disaggregation.Prefill.Workers)
	assert.Equal(t, 12, s.Disaggregation.Decode.Workers)
	require.NotNil(t, s.PoolAutoscalers.Decode)
	assert.Equal(t, 0.8, s.PoolAutoscalers.Decode.Target)

	changed := strings.Replace(stdout, `"target": 0.8`, `"target": 0.7`, 1)
	require.NotEqual(t, stdout, changed)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pd.json")
	require.NoError(t, os.WriteFile(cfg, []byte(changed), 0o600))
	code, out, stderr := runCLI(t, "", "export", "-config", cfg, "-manifest", file)
	require.Equal(t, 0, code, stderr)
	orig, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(string(orig), `threshold: "0.8"`, `threshold: "0.7"`, 1), strings.SplitN(out, "\n", 2)[1], "only the decode threshold changed")
	assert.Contains(t, stderr, `changed decode: ScaledObject "ms-llama-decode" spec.triggers[0].metadata.threshold: 0.8 → 0.7`)

	code, out, stderr = runCLI(t, "", "export", "-config", cfg)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "name: llm-workers-prefill")
	assert.Contains(t, out, "name: llm-workers-decode")
	assert.Equal(t, 1, strings.Count(out, "name: "+hpa.DefaultFrontend), "the shared frontend's patch is written once:\n%s", out)

	code, _, stderr = runCLI(t, "", "export", "-config", cfg, "-manifest", chartsDir+"production-stack-keda.yaml")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "an autoscaler per role")
}

// scalein plan on pools: -role names the pool a drain plan drains and a tune plan tunes; with
// -manifest the tuned pool's settings go into its own object of the file.
func TestPlanPoolsCommand(t *testing.T) {
	const file = "../../sim/hpa/testdata/pd/llm-d-keda.yaml"
	code, scenario, stderr := runCLI(t, "", "import", "-manifest", file, "-config", "../../sim/whatif/testdata/pd-small.json")
	require.Equal(t, 0, code, stderr)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pd.json")
	require.NoError(t, os.WriteFile(cfg, []byte(scenario), 0o600))

	code, _, stderr = runCLI(t, "", "plan", "-config", cfg, "-remove", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `name the pool to drain, "prefill" or "decode"`)

	code, out, stderr := runCLI(t, "", "plan", "-config", cfg, "-remove", "1", "-role", "prefill", "-search", `{"max_runs": 6, "bisect_grace": false}`)
	require.Equal(t, 0, code, stderr)
	var res struct {
		Candidates []struct {
			Label   string              `json:"label"`
			ScaleIn []sim.ScaleInAction `json:"scale_in"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.NotEmpty(t, res.Candidates)
	for _, c := range res.Candidates {
		assert.True(t, strings.HasPrefix(c.Label, "prefill pool: "), c.Label)
		assert.Equal(t, sim.RolePrefill, c.ScaleIn[0].Role)
	}

	mine := filepath.Join(dir, "mine.yaml")
	orig, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mine, orig, 0o600))
	code, _, stderr = runCLI(t, "", "plan", "-config", cfg, "-tune", "autoscaler", "-role", "decode", "-manifest", mine,
		"-search", `{"max_runs": 4, "targets": [0.5], "scale_down_windows_ms": [300000], "refine_top": 1}`)
	require.Equal(t, 0, code, stderr)
	after, err := os.ReadFile(mine)
	require.NoError(t, err)
	// Only the decode pool's object (and the header) may change; the prefill ScaledObject stays.
	i := strings.Index(string(orig), "name: ms-llama-prefill\n  namespace: llm-d\nspec:\n  scaleTargetRef")
	j := strings.Index(string(orig), "---\napiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata:\n  name: ms-llama-decode")
	require.True(t, i > 0 && j > i)
	assert.Contains(t, string(after), string(orig[i:j]), "the prefill pool's ScaledObject is untouched")
	assert.Contains(t, string(after), "# Scale-in Planner: scalein plan -tune")
}
