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

func ptr[T any](v T) *T { return &v }

// defaults is an autoscaler with docs/model.md#model-3's defaults on a 16-worker fleet.
func defaults() sim.Autoscaler {
	return sim.Autoscaler{IntervalMS: 15000, Metric: sim.MetricRequestsPerWorker, Target: 32, Tolerance: 0.1,
		MinWorkers: 1, MaxWorkers: 16, DownscaleWindowMS: 300000, Source: sim.SourcePods, Select: sim.SelectHighestID, GraceMS: ptr(30000.0), StartupMS: 120000}
}

func TestExportImportRoundTrip(t *testing.T) {
	cases := map[string]struct {
		a         sim.Autoscaler
		migration int
	}{
		"defaults": {defaults(), 0},
		"tuned": {func() sim.Autoscaler {
			a := defaults()
			a.Target, a.ScaleDownWindowMS, a.ScaleUpWindowMS, a.Tolerance = 6, ptr(60000.0), ptr(15000.0), 0.05
			a.MinWorkers, a.MaxWorkers, a.MaxRemovePerTick, a.MaxAddPerTick, a.GraceMS = 2, 24, sim.PerTickOf(2), sim.PerTickOf(4), ptr(45000.0)
			return a
		}(), 3},
		"kv usage": {func() sim.Autoscaler {
			a := defaults()
			a.Metric, a.Target, a.Tolerance, a.MaxRemovePerTick = sim.MetricKVUsage, 0.525, 0, sim.PerTickOf(1)
			return a
		}(), 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := hpa.Export(hpa.Settings{Autoscaler: tc.a, MigrationLimit: tc.migration, Source: "plan p1, run r1"})
			require.NoError(t, err)
			text := string(out)
			assert.True(t, strings.HasPrefix(text, "# Autoscaler settings from the Scale-in Planner: plan p1, run r1\n"), text)
			assert.Contains(t, text, "kind: HorizontalPodAutoscaler")
			assert.Contains(t, text, "type: Pods")
			if tc.a.UsesShorthand() {
				assert.Contains(t, text, "stabilizationWindowSeconds:")
			} else {
				assert.NotContains(t, text, "behavior:", "no behavior stays no behavior")
			}
			assert.Contains(t, text, "terminationGracePeriodSeconds:")
			assert.Contains(t, text, "name: DYN_MIGRATION_LIMIT")
			assert.NotContains(t, text, "creationTimestamp")

			// Import starts from a different autoscaler: every field the manifests hold comes back.
			start := defaults()
			start.Target, start.MinWorkers, start.MaxWorkers, start.GraceMS, start.Tolerance = 1, 3, 3, nil, 0.5
			im, err := hpa.Import(out, start)
			require.NoError(t, err)
			assert.Empty(t, im.Problems)
			// The same controller: the model-3 shorthand comes back as the behavior it stands for.
			want, got := tc.a.ControllerSettings(), im.Autoscaler.ControllerSettings()
			if want.Behavior != nil {
				want.Tolerance, got.Tolerance = 0, 0 // per direction inside the behavior
			}
			assert.Equal(t, want, got)
			assert.Equal(t, tc.a.Metric, im.Autoscaler.Metric)
			assert.Equal(t, tc.a.GraceMS, im.Autoscaler.GraceMS)
			require.NotNil(t, im.MigrationLimit)
			assert.Equal(t, tc.migration, *im.MigrationLimit)
			assert.ElementsMatch(t, []string{"autoscaler.min_workers", "autoscaler.max_workers", "autoscaler.metric", "autoscaler.source", "autoscaler.target",
				"autoscaler.behavior", "autoscaler.tolerance", "autoscaler.grace_ms", "router.migration_limit"}, im.Filled)
		})
	}
}

func TestExportNoGraceIsNamed(t *testing.T) {
	a := defaults()
	a.GraceMS = nil
	a.Select = sim.SelectLeastLoaded
	out, err := hpa.Export(hpa.Settings{Autoscaler: a})
	require.NoError(t, err)
	assert.Contains(t, string(out), "# Note: grace_ms is null")
	assert.Contains(t, string(out), "pod-deletion-cost")
	assert.NotContains(t, string(out), "terminationGracePeriodSeconds:")
	im, err := hpa.Import(out, defaults())
	require.NoError(t, err)
	assert.Equal(t, ptr(30000.0), im.Autoscaler.GraceMS, "no grace in the manifest: the form's grace stays")
	assert.NotContains(t, im.Filled, "autoscaler.grace_ms")
}

// A hand-written HPA on CPU with a Pods metric beside it and a Percent scale-down policy.
const cpuHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: vllm
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: vllm
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 70
  - type: Pods
    pods:
      metric:
        name: vllm_num_requests_running_and_waiting
      target:
        type: AverageValue
        averageValue: "8"
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 120
      policies:
      - type: Percent
        value: 10
        periodSeconds: 60
      - type: Pods
        value: 2
        periodSeconds: 15
`

func TestImportNamesWhatItCannotRepresent(t *testing.T) {
	im, err := hpa.Import([]byte(cpuHPA), defaults())
	require.NoError(t, err)
	assert.Equal(t, 8.0, im.Autoscaler.Target)
	assert.Equal(t, 2, im.Autoscaler.MinWorkers)
	assert.Equal(t, 10, im.Autoscaler.MaxWorkers)
	// Model 4 takes the behavior whole: both policies, and no scale-up rules (Kubernetes'
	// defaults, filled by the controller).
	b := im.Autoscaler.Behavior
	require.NotNil(t, b)
	assert.Equal(t, ptr(int64(120000)), b.ScaleDown.WindowMS)
	assert.Equal(t, []sim.ScalingPolicy{{Type: "percent", Value: 10, PeriodMS: 60000}, {Type: "pods", Value: 2, PeriodMS: 15000}}, b.ScaleDown.Policies)
	assert.Nil(t, b.ScaleUp)
	assert.Nil(t, im.MigrationLimit)
	paths := map[string]string{}
	for _, p := range im.Problems {
		paths[p.Path] = p.Message
	}
	assert.Contains(t, paths["spec.metrics[0]"], "a Resource (cpu) metric: the model scales on one Pods or External metric")
	assert.Len(t, im.Problems, 1, "%v", im.Problems)
}

func TestImportErrors(t *testing.T) {
	onlyCPU := strings.Replace(cpuHPA, "  - type: Pods\n    pods:\n      metric:\n        name: vllm_num_requests_running_and_waiting\n      target:\n        type: AverageValue\n        averageValue: \"8\"\n", "", 1)
	require.NotEqual(t, cpuHPA, onlyCPU)
	cases := map[string]struct{ doc, want string }{
		"CPU only":      {onlyCPU, "document 1 (HorizontalPodAutoscaler \"vllm\"): spec.metrics: no Pods or External metric with an averageValue target the model can use (spec.metrics[0]: a Resource (cpu) metric"},
		"no metrics":    {strings.Split(cpuHPA, "  metrics:")[0], "spec.metrics: none, so Kubernetes scales on CPU"},
		"unknown field": {strings.Replace(cpuHPA, "minReplicas: 2", "minReplica: 2", 1), `unknown field "minReplica"`},
		"v1":            {"apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nspec:\n  maxReplicas: 3\n", "only autoscaling/v2 and v2beta2 HPAs are read"},
		"not YAML":      {"{: [", "document 1: not YAML"},
		"nothing":       {"# just a comment\n", "no autoscaler in the manifest"},
		"min above max": {strings.Replace(cpuHPA, "minReplicas: 2", "minReplicas: 20", 1), "spec.minReplicas 20 is above spec.maxReplicas 10"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := hpa.Import([]byte(tc.doc), defaults())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzImport(f *testing.F) {
	f.Add([]byte(cpuHPA))
	out, err := hpa.Export(hpa.Settings{Autoscaler: defaults(), MigrationLimit: 1})
	require.NoError(f, err)
	f.Add(out)
	for _, file := range []string{"testdata/pd/llm-d-keda.yaml", "testdata/pd/dynamo-disagg-hpa.yaml", "testdata/pd/hpa-pair.yaml"} {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := hpa.Import(data, defaults())
		if err != nil {
			return
		}
		check := []sim.Autoscaler{im.Autoscaler}
		if im.Pools != nil {
			for _, p := range []*hpa.Imported{im.Pools.Prefill, im.Pools.Decode} {
				if p.Origin != nil {
					check = append(check, p.Autoscaler)
				}
			}
		}
		for _, a := range check {
			if a.MinWorkers < 1 || a.MaxWorkers < a.MinWorkers || !(a.Target > 0) {
				t.Fatalf("imported an autoscaler outside the model's bounds: %+v", a)
			}
		}
	})
}
