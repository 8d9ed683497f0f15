package hpa_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

const sessionsBase = `{"workload": {"type": "sessions", "sessions": {}}, "fleet": {"workers": 5}}`

// importPD imports a file into base and parses the result.
func importPD(t *testing.T, base, file string) (*sim.Scenario, *hpa.Imported) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	out, im, _, err := hpa.IntoScenario([]byte(base), data, sim.ParseEnv{})
	require.NoError(t, err)
	sc, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err, "%s", out)
	require.NotNil(t, im.Pools)
	assert.NotContains(t, string(out), `"workers": 5`, "fleet.workers is removed beside disaggregation")
	return sc, im
}

func problemsText(im *hpa.Imported) string {
	var b strings.Builder
	for _, p := range im.Problems {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

func TestImportPoolsLLMDScaledObjects(t *testing.T) {
	sc, im := importPD(t, sessionsBase, "testdata/pd/llm-d-keda.yaml")
	d := sc.Disaggregation
	require.NotNil(t, d)
	assert.Equal(t, 4, d.Prefill.Workers)
	assert.Equal(t, 12, d.Decode.Workers)
	require.NotNil(t, sc.PoolAutoscalers)
	p, dec := sc.PoolAutoscalers.Prefill, sc.PoolAutoscalers.Decode
	require.NotNil(t, p)
	require.NotNil(t, dec)
	assert.Equal(t, sim.MetricRequestsWaiting, p.Metric)
	assert.Equal(t, 4.0, p.Target)
	assert.Equal(t, [2]int{2, 8}, [2]int{p.MinWorkers, p.MaxWorkers})
	assert.Equal(t, sim.MetricKVUsage, dec.Metric)
	assert.Equal(t, 0.8, dec.Target)
	assert.Equal(t, sim.SourceExternal, dec.Source)
	assert.Equal(t, sim.AggregateSum, dec.Aggregate)
	assert.Equal(t, [2]int{4, 16}, [2]int{dec.MinWorkers, dec.MaxWorkers})
	require.NotNil(t, dec.Behavior)
	require.NotNil(t, dec.Behavior.ScaleDown)
	assert.Equal(t, int64(300000), *dec.Behavior.ScaleDown.WindowMS)
	assert.Equal(t, []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 300000}}, dec.Behavior.ScaleDown.Policies)
	assert.Equal(t, []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 180000}}, dec.Behavior.ScaleUp.Policies)
	// Each pool's grace is its own Deployment's.
	assert.Equal(t, 60000.0, *p.GraceMS)
	assert.Equal(t, 300000.0, *dec.GraceMS)
	assert.Equal(t, "ms-llama-prefill", im.Pools.Prefill.Origin.Name)
	assert.Equal(t, "ms-llama-decode", im.Pools.Decode.Origin.Name)
	assert.Contains(t, im.Filled, "autoscaler.decode.target")
	assert.Contains(t, im.Filled, "disaggregation.prefill.workers")
	assert.Contains(t, problemsText(im), "fleet.workers: removed")
}

func TestImportPoolsDynamoGraph(t *testing.T) {
	sc, im := importPD(t, sessionsBase, "testdata/pd/dynamo-disagg-hpa.yaml")
	d := sc.Disaggregation
	assert.Equal(t, 2, d.Prefill.Workers, "VllmPrefillWorker replicas")
	assert.Equal(t, 6, d.Decode.Workers, "VllmDecodeWorker replicas")
	p, dec := sc.PoolAutoscalers.Prefill, sc.PoolAutoscalers.Decode
	assert.Equal(t, sim.MetricRequestsWaiting, p.Metric)
	assert.Equal(t, 3.0, p.Target)
	assert.Equal(t, sim.MetricKVUsage, dec.Metric)
	assert.Equal(t, 0.7, dec.Target)
	assert.Equal(t, 45000.0, *p.GraceMS, "the prefill service's grace")
	assert.Equal(t, 120000.0, *dec.GraceMS, "the decode service's grace")
	assert.Equal(t, 2, sc.Router.MigrationLimit, "the frontend's DYN_MIGRATION_LIMIT")
	assert.Equal(t, "VllmPrefillWorker", im.Pools.Prefill.Origin.Grace.Service)
	assert.Equal(t, "VllmDecodeWorker", im.Pools.Decode.Origin.Grace.Service)
	assert.NotContains(t, problemsText(im), "but", "no disagreement between the two services' graces: "+problemsText(im))
	assert.Equal(t, sim.PrefillDrain{Mode: sim.DrainFixed, FixedMS: 30000}, d.PrefillDrain, "Dynamo's fixed 30 s prefill drain")
	assert.Contains(t, im.Filled, "disaggregation.prefill_drain")

	// An SGLang graph does not sleep 30 s: the model's default, wait, stays.
	data, err := os.ReadFile("testdata/pd/dynamo-disagg-hpa.yaml")
	require.NoError(t, err)
	sg := strings.ReplaceAll(string(data), "vllm-runtime:0.6.1", "sglang-runtime:0.6.1")
	out, _, _, err := hpa.IntoScenario([]byte(sessionsBase), []byte(sg), sim.ParseEnv{})
	require.NoError(t, err)
	sgs, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, sim.DrainWait, sgs.Disaggregation.PrefillDrain.Mode)

	// llm-d (vLLM under its own drain) keeps the model's default, wait.
	sc, _ = importPD(t, sessionsBase, "testdata/pd/llm-d-keda.yaml")
	assert.Equal(t, sim.DrainWait, sc.Disaggregation.PrefillDrain.Mode)
}

func TestImportPoolsHPAPairRolesFromLabels(t *testing.T) {
	sc, im := importPD(t, sessionsBase, "testdata/pd/hpa-pair.yaml")
	d := sc.Disaggregation
	assert.Equal(t, 3, d.Prefill.Workers, "the prefill HPA's status.currentReplicas")
	assert.Equal(t, 9, d.Decode.Workers)
	assert.Equal(t, sim.MetricRequestsWaiting, sc.PoolAutoscalers.Prefill.Metric)
	assert.Equal(t, sim.MetricRequestsRunning, sc.PoolAutoscalers.Decode.Metric)
	assert.Equal(t, 30000.0, *sc.PoolAutoscalers.Prefill.GraceMS)
	assert.Equal(t, 240000.0, *sc.PoolAutoscalers.Decode.GraceMS)
	assert.Equal(t, "qwen-p", im.Pools.Prefill.Origin.Name)
}

// A scenario that already has pools keeps its pool fields and its link; the file's replicas
// replace the sizes.
func TestImportPoolsIntoPDScenario(t *testing.T) {
	base := `{"workload": {"type": "sessions", "sessions": {}},
	  "disaggregation": {"prefill": {"workers": 1, "max_num_seqs": 64}, "decode": {"workers": 2}, "transfer": {"latency_ms": 2, "bandwidth_gbps": 25}},
	  "autoscaler": {"decode": {"metric": "kv_usage", "target": 0.5, "interval_ms": 30000}}}`
	sc, _ := importPD(t, base, "testdata/pd/llm-d-keda.yaml")
	assert.Equal(t, 64, sc.Disaggregation.Prefill.MaxNumSeqs)
	assert.Equal(t, 25.0, sc.Disaggregation.Transfer.BandwidthGBps)
	assert.Equal(t, 4, sc.Disaggregation.Prefill.Workers)
	assert.Equal(t, 30000.0, sc.PoolAutoscalers.Decode.IntervalMS, "the scenario's decision interval stays (no manifest holds it)")
	assert.Equal(t, 0.8, sc.PoolAutoscalers.Decode.Target)
}

// One ScaledObject on the decode pool of a graph with both services: the prefill pool keeps
// its size (the graph's replicas), and the note says no autoscaler scales it.
func TestImportPoolsOneAutoscaler(t *testing.T) {
	data, err := os.ReadFile("testdata/pd/dynamo-disagg-hpa.yaml")
	require.NoError(t, err)
	i := strings.Index(string(data), "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: vllm-disagg-prefill")
	j := strings.Index(string(data), "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: vllm-disagg-decode")
	require.True(t, i > 0 && j > i)
	m := string(data[:i]) + string(data[j:])
	out, im, _, err := hpa.IntoScenario([]byte(sessionsBase), []byte(m), sim.ParseEnv{})
	require.NoError(t, err)
	sc, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 2, sc.Disaggregation.Prefill.Workers)
	assert.Nil(t, sc.PoolAutoscalers.Prefill)
	require.NotNil(t, sc.PoolAutoscalers.Decode)
	assert.Contains(t, problemsText(im), "no autoscaler scales the prefill pool")
}

// An aggregated file imported into a P/D scenario is refused with what to do.
func TestImportPoolsAggregatedFileIntoPD(t *testing.T) {
	base := `{"workload": {"type": "sessions", "sessions": {}}, "disaggregation": {"prefill": {"workers": 1}, "decode": {"workers": 2}}}`
	data, err := os.ReadFile("testdata/charts/production-stack-keda.yaml")
	require.NoError(t, err)
	_, _, _, err = hpa.IntoScenario([]byte(base), data, sim.ParseEnv{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "an autoscaler per role")
}

// -select reads one autoscaler of a P/D file as one fleet's, with its own pool's workloads only.
func TestImportPoolsSelectOne(t *testing.T) {
	data, err := os.ReadFile("testdata/pd/dynamo-disagg-hpa.yaml")
	require.NoError(t, err)
	im, err := hpa.ImportWith(data, defaults(), hpa.ImportOptions{Select: "vllm-disagg-decode"})
	require.NoError(t, err)
	assert.Nil(t, im.Pools)
	assert.Equal(t, 120000.0, *im.Autoscaler.GraceMS)
	require.NotNil(t, im.Workers)
	assert.Equal(t, 6, *im.Workers)
}

// poolSettings imports a P/D file into a scenario and returns each pool's settings as parsed.
func poolSettings(t *testing.T, file string) (string, *sim.Scenario, hpa.PoolSettings) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	out, im, _, err := hpa.IntoScenario([]byte(sessionsBase), data, sim.ParseEnv{})
	require.NoError(t, err)
	sc, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	p, d := *sc.PoolAutoscalers.Prefill, *sc.PoolAutoscalers.Decode
	return string(data), sc, hpa.PoolSettings{
		Prefill: &hpa.Settings{Autoscaler: p, MigrationLimit: sc.Router.MigrationLimit, Origin: im.Pools.Prefill.Origin, Source: "plan p2"},
		Decode:  &hpa.Settings{Autoscaler: d, MigrationLimit: sc.Router.MigrationLimit, Origin: im.Pools.Decode.Origin, Source: "plan p2"},
	}
}

// Import, change both pools, export onto the original: the diff is exactly the changed fields,
// each in its own pool's object, and the result imports back as the changed settings.
func TestExportPoolsOntoLLMD(t *testing.T) {
	orig, _, ps := poolSettings(t, "testdata/pd/llm-d-keda.yaml")
	ps.Prefill.Autoscaler.Target = 6
	ps.Prefill.Autoscaler.MaxWorkers = 10
	ps.Decode.Autoscaler.Target = 0.75
	ps.Decode.Autoscaler.MinWorkers = 3
	ps.Decode.Autoscaler.GraceMS = f64(600000)
	ex, err := hpa.ExportPoolsOnto(ps)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"+" + strings.SplitN(string(ex.Data), "\n", 2)[0],
		"-      terminationGracePeriodSeconds: 300",
		"+      terminationGracePeriodSeconds: 600",
		"-  maxReplicaCount: 8",
		"+  maxReplicaCount: 10",
		`-        threshold: "4"`,
		`+        threshold: "6"`,
		"-  minReplicaCount: 4",
		"+  minReplicaCount: 3",
		`-        threshold: "0.8"`,
		`+        threshold: "0.75"`,
	}, lineDiff(orig, string(ex.Data)))
	assert.Len(t, ex.Changed, 5)
	assert.Contains(t, string(ex.Data), "prefill: ScaledObject \"ms-llama-prefill\" spec.triggers[0].metadata.threshold: 4 → 6" /* in the header */)
	assert.Contains(t, string(ex.Data), "# a 5-minute window", "comments stay")

	// It reads back as the new settings, pool by pool.
	out, im, _, err := hpa.IntoScenario([]byte(sessionsBase), ex.Data, sim.ParseEnv{})
	require.NoError(t, err)
	back, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, ps.Prefill.Autoscaler.ControllerSettings(), back.PoolAutoscalers.Prefill.ControllerSettings())
	assert.Equal(t, ps.Decode.Autoscaler.ControllerSettings(), back.PoolAutoscalers.Decode.ControllerSettings())
	assert.Equal(t, 600000.0, *back.PoolAutoscalers.Decode.GraceMS)
	assert.Equal(t, 60000.0, *back.PoolAutoscalers.Prefill.GraceMS)
	require.NotNil(t, im.Pools)

	// Unchanged settings give the file back, after one header.
	_, _, same := poolSettings(t, "testdata/pd/llm-d-keda.yaml")
	ex, err = hpa.ExportPoolsOnto(same)
	require.NoError(t, err)
	assert.Empty(t, ex.Changed)
	assert.Equal(t, []string{"+" + strings.SplitN(string(ex.Data), "\n", 2)[0]}, lineDiff(orig, string(ex.Data)))
	assert.Contains(t, string(ex.Data), "Nothing changed")
}

// The Dynamo graph: each HPA gets its own pool's changes and each service its own grace.
func TestExportPoolsOntoDynamo(t *testing.T) {
	orig, _, ps := poolSettings(t, "testdata/pd/dynamo-disagg-hpa.yaml")
	ps.Prefill.Autoscaler.GraceMS = f64(30000)
	ps.Decode.Autoscaler.MaxWorkers = 16
	ex, err := hpa.ExportPoolsOnto(ps)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"+" + strings.SplitN(string(ex.Data), "\n", 2)[0],
		"-        terminationGracePeriodSeconds: 45",
		"+        terminationGracePeriodSeconds: 30",
		"-  maxReplicas: 12",
		"+  maxReplicas: 16",
	}, lineDiff(orig, string(ex.Data)))
}

// A pool whose autoscaler the model cannot use keeps its size without one, and the problem
// says why; when neither pool's can be used the import is refused with both reasons.
func TestImportPoolsOneUnusable(t *testing.T) {
	data, err := os.ReadFile("testdata/pd/llm-d-keda.yaml")
	require.NoError(t, err)
	bad := strings.Replace(string(data), `llm_d_ai_role="prefill"})`, `llm_d_ai_role="prefill"}) * 2`, 1)
	require.NotEqual(t, string(data), bad)
	out, im, _, err := hpa.IntoScenario([]byte(sessionsBase), []byte(bad), sim.ParseEnv{})
	require.NoError(t, err)
	sc, err := sim.Parse(out, sim.ParseEnv{})
	require.NoError(t, err)
	assert.Nil(t, sc.PoolAutoscalers.Prefill)
	require.NotNil(t, sc.PoolAutoscalers.Decode)
	assert.Equal(t, 4, sc.Disaggregation.Prefill.Workers, "the prefill Deployment's replicas")
	assert.Contains(t, problemsText(im), "the prefill pool's autoscaler cannot be used")

	both := strings.Replace(bad, "sum(vllm:kv_cache_usage_perc", "sum(vllm:gpu_utilization", 1)
	_, _, _, err = hpa.IntoScenario([]byte(sessionsBase), []byte(both), sim.ParseEnv{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the prefill pool's autoscaler")
	assert.Contains(t, err.Error(), "the decode pool's autoscaler")
}
