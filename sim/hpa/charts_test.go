package hpa_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

func i64(v int64) *int64      { return &v }
func f64(v float64) *float64  { return &v }
func intp(v int) *int         { return &v }
func windows(ms int64) *int64 { return i64(ms) }
func policy(typ string, value int, periodMS int64) sim.ScalingPolicy {
	return sim.ScalingPolicy{Type: typ, Value: value, PeriodMS: periodMS}
}

// Each manifest of testdata/charts (written in the styles of public LLM-serving charts) imports
// to the model-4 fields below, or is refused with the message below.
func TestChartManifests(t *testing.T) {
	type want struct {
		metric, source, aggregate string
		target                    float64
		minW, maxW                int
		behavior                  *sim.Behavior
		graceMS                   *float64
		migration                 *int
		problems                  []string // paths of the problems, in order
		originKind, originName    string
	}
	tests := []struct {
		file string
		want want
		err  []string // substrings of the error instead
	}{
		{file: "production-stack-keda.yaml", want: want{metric: sim.MetricRequestsWaiting, source: sim.SourceExternal, aggregate: sim.AggregateSum,
			target: 5, minW: 1, maxW: 6, problems: []string{"spec.cooldownPeriod", "spec.pollingInterval"}, originKind: "ScaledObject", originName: "vllm-llama3-8b-scaledobject"}},
		{file: "production-stack-hpa-adapter.yaml", want: want{metric: sim.MetricRequestsWaiting, source: sim.SourcePods,
			target: 1, minW: 1, maxW: 4, originKind: "HorizontalPodAutoscaler", originName: "vllm-opt125m-hpa"}},
		{file: "kserve-keda-kv.yaml", want: want{metric: sim.MetricKVUsage, source: sim.SourceExternal, aggregate: sim.AggregateAvg,
			target: 0.75, minW: 1, maxW: 5,
			behavior:   &sim.Behavior{ScaleDown: &sim.ScalingRules{WindowMS: windows(600000), Policies: []sim.ScalingPolicy{policy(sim.PolicyTypePods, 1, 120000)}}},
			originKind: "ScaledObject", originName: "huggingface-llama3-predictor"}},
		{file: "llm-d-decode-keda.yaml", want: want{metric: sim.MetricRequestsPerWorker, source: sim.SourceExternal, aggregate: sim.AggregateSum,
			target: 24, minW: 2, maxW: 16, graceMS: f64(120000),
			behavior: &sim.Behavior{
				ScaleUp: &sim.ScalingRules{WindowMS: windows(0), Select: sim.SelectPolicyMax,
					Policies: []sim.ScalingPolicy{policy(sim.PolicyTypePercent, 100, 30000), policy(sim.PolicyTypePods, 4, 30000)}},
				ScaleDown: &sim.ScalingRules{WindowMS: windows(300000), Select: sim.SelectPolicyMin,
					Policies: []sim.ScalingPolicy{policy(sim.PolicyTypePercent, 10, 60000)}}},
			originKind: "ScaledObject", originName: "ms-llama-decode"}},
		{file: "dynamo-graph-keda.yaml", want: want{metric: sim.MetricKVUsage, source: sim.SourceExternal, aggregate: sim.AggregateMax,
			target: 0.8, minW: 1, maxW: 8, graceMS: f64(90000), migration: intp(3), originKind: "ScaledObject", originName: "vllm-agg-decode"}},
		{file: "gke-hpa-kv-cache.yaml", want: want{metric: sim.MetricKVUsage, source: sim.SourcePods,
			target: 0.8, minW: 1, maxW: 5, originKind: "HorizontalPodAutoscaler", originName: "vllm-gemma-hpa"}},
		{file: "gke-hpa-queue-size.yaml", want: want{metric: sim.MetricRequestsWaiting, source: sim.SourcePods,
			target: 10, minW: 1, maxW: 3, behavior: &sim.Behavior{ScaleDown: &sim.ScalingRules{WindowMS: windows(120000)}},
			originKind: "HorizontalPodAutoscaler", originName: "tgi-gemma-hpa"}},
		{file: "kubectl-list-v2beta2.yaml", want: want{metric: sim.MetricRequestsRunning, source: sim.SourcePods,
			target: 12.5, minW: 2, maxW: 10, graceMS: f64(600000), originKind: "HorizontalPodAutoscaler", originName: "vllm-mistral"}},
		{file: "deployment-with-hpa-json.json", want: want{metric: sim.MetricRequestsPerWorker, source: sim.SourcePods,
			target: 16, minW: 2, maxW: 12, graceMS: f64(45000),
			behavior: &sim.Behavior{
				ScaleUp:   &sim.ScalingRules{WindowMS: windows(30000), Policies: []sim.ScalingPolicy{policy(sim.PolicyTypePods, 2, 60000)}},
				ScaleDown: &sim.ScalingRules{Select: sim.SelectPolicyDisabled}},
			problems: []string{"spec.metrics[0]"}, originKind: "HorizontalPodAutoscaler", originName: "vllm-phi3"}},
		{file: "aibrix-kv-percent.yaml", err: []string{"spec.metrics[0].pods.target.averageValue", "70 looks like a percentage", "write 0.7"}},
		{file: "helm-template-unrendered.yaml", err: []string{"Helm/Terraform template", "helm template", "kubectl get hpa NAME -o yaml"}},
		{file: "keda-generated-hpa.yaml", err: []string{`"s0-prometheus" is a metric KEDA generated`, "kubectl get scaledobject -o yaml"}},
		{file: "kserve-inferenceservice.yaml", err: []string{"no autoscaler in the manifest", "kind InferenceService", "KEDA ScaledObject KServe creates"}},
		{file: "nim-hpa-cpu.yaml", err: []string{"spec.metrics", "a Resource (cpu) metric", "Pods or External metric"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/charts/" + tc.file)
			require.NoError(t, err)
			im, err := hpa.Import(data, sim.Autoscaler{IntervalMS: 15000, Target: 32, MinWorkers: 1, MaxWorkers: 4})
			if tc.err != nil {
				require.Error(t, err)
				for _, w := range tc.err {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			a, w := im.Autoscaler, tc.want
			assert.Equal(t, w.metric, a.Metric, "metric")
			assert.Equal(t, w.source, a.Source, "source")
			assert.Equal(t, w.aggregate, a.Aggregate, "aggregate")
			assert.Equal(t, w.target, a.Target, "target")
			assert.Equal(t, w.minW, a.MinWorkers, "min_workers")
			assert.Equal(t, w.maxW, a.MaxWorkers, "max_workers")
			assert.Equal(t, w.behavior, a.Behavior, "behavior")
			assert.Equal(t, 0.1, a.Tolerance, "tolerance: Kubernetes' default")
			assert.Equal(t, w.graceMS, a.GraceMS, "grace_ms")
			assert.Equal(t, w.migration, im.MigrationLimit, "migration limit")
			var paths []string
			for _, p := range im.Problems {
				paths = append(paths, p.Path)
			}
			assert.Equal(t, w.problems, paths, "problems %v", im.Problems)
			require.NotNil(t, im.Origin)
			assert.Equal(t, w.originKind, im.Origin.Kind)
			assert.Contains(t, string(im.Origin.Document), `"name":"`+w.originName+`"`)

			// Export writes the same kind back under the user's names, and it reads back as the same
			// controller.
			full := a
			full.IntervalMS = 15000
			out, err := hpa.Export(hpa.Settings{Autoscaler: full, Origin: im.Origin})
			require.NoError(t, err)
			back, err := hpa.Import(out, sim.Autoscaler{IntervalMS: 15000, Target: 32, MinWorkers: 1, MaxWorkers: 4})
			require.NoError(t, err, "%s", out)
			assert.Equal(t, a.Metric, back.Autoscaler.Metric)
			assert.Equal(t, a.Target, back.Autoscaler.Target)
			// the same controller: Export writes Kubernetes' defaults of a behavior out
			got := back.Autoscaler
			assert.Equal(t, full.ControllerSettings(), got.ControllerSettings())
			assert.Equal(t, w.originKind, back.Origin.Kind)
		})
	}
}
