package hpa_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

// lineDiff is the lines only in a ("-…") and only in b ("+…"), in order (a longest common
// subsequence of lines).
func lineDiff(a, b string) []string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+x[i])
			i++
		default:
			out = append(out, "+"+y[j])
			j++
		}
	}
	return out
}

// onto imports a file, lets change alter the settings as a tune plan would, exports onto the
// file and returns the original, the export and its parts.
func onto(t *testing.T, file string, change func(a *sim.Autoscaler, migration *int)) (string, *hpa.Exported) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	base := defaults()
	im, err := hpa.Import(data, base)
	require.NoError(t, err)
	a := im.Autoscaler
	m := 0
	if im.MigrationLimit != nil {
		m = *im.MigrationLimit
	}
	change(&a, &m)
	ex, err := hpa.ExportOnto(hpa.Settings{Autoscaler: a, MigrationLimit: m, Origin: im.Origin, Source: "plan p1"})
	require.NoError(t, err)
	// What was written reads back as the settings.
	back, err := hpa.Import(ex.Data, base)
	require.NoError(t, err, "%s", ex.Data)
	assert.Equal(t, a.ControllerSettings(), back.Autoscaler.ControllerSettings(), "%s", ex.Data)
	if a.GraceMS != nil {
		require.NotNil(t, back.Autoscaler.GraceMS, "%s", ex.Data)
		assert.Equal(t, *a.GraceMS, *back.Autoscaler.GraceMS)
	}
	return string(data), ex
}

func TestExportOntoHPA(t *testing.T) {
	orig, ex := onto(t, "testdata/charts/gke-hpa-queue-size.yaml", func(a *sim.Autoscaler, _ *int) {
		a.Target = 8
		a.SetScaleDownPolicies([]sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 60000}})
	})
	assert.Equal(t, []string{
		"+# Scale-in Planner: plan p1. Changed: HorizontalPodAutoscaler \"tgi-gemma-hpa\" spec.metrics[0].pods.target.averageValue: 10 → 8; " +
			"HorizontalPodAutoscaler \"tgi-gemma-hpa\" spec.behavior.scaleDown.policies: [Percent 100 per 15 s] → [Pods 1 per 60 s]",
		`-          averageValue: "10"`,
		`+          averageValue: "8"`,
		"+      policies:",
		"+        - type: Pods",
		"+          value: 1",
		"+          periodSeconds: 60",
	}, lineDiff(orig, string(ex.Data)))
	assert.Len(t, ex.Changed, 2)
}

func TestExportOntoScaledObject(t *testing.T) {
	orig, ex := onto(t, "testdata/charts/kserve-keda-kv.yaml", func(a *sim.Autoscaler, _ *int) {
		a.Target, a.MaxWorkers = 0.6, 8
		one := 1
		a.SetScaleDown(300000, &one) // a window and a step of one worker per decision, as tune writes them
	})
	assert.Equal(t, []string{
		"+" + strings.SplitN(string(ex.Data), "\n", 2)[0],
		"-  maxReplicaCount: 5",
		"+  maxReplicaCount: 8",
		`-        threshold: "0.75"`,
		`+        threshold: "0.6"`,
		"-          stabilizationWindowSeconds: 600",
		"+          stabilizationWindowSeconds: 300",
		"-              periodSeconds: 120",
		"+              periodSeconds: 15",
	}, lineDiff(orig, string(ex.Data)))
	assert.Len(t, ex.Changed, 4)
}

// A Deployment and an HPA: the grace and the migration limit are changed in the Deployment,
// where they are; the HPA had no behavior, so the one the settings need is added.
func TestExportOntoStreamWithDeployment(t *testing.T) {
	orig, ex := onto(t, "testdata/edit/stream-deployment-hpa.yaml", func(a *sim.Autoscaler, m *int) {
		a.GraceMS = f64(120000)
		*m = 2
		a.MinWorkers = 1
		a.SetScaleDownPolicies([]sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 10, PeriodMS: 60000}})
	})
	assert.Equal(t, []string{
		"+" + strings.SplitN(string(ex.Data), "\n", 2)[0],
		"-      terminationGracePeriodSeconds: 60",
		"+      terminationGracePeriodSeconds: 120",
		`-          value: "1"`,
		`+          value: "2"`,
		"-  minReplicas: 2",
		"+  minReplicas: 1",
		"+  behavior:",
		"+    scaleDown:",
		"+      policies:",
		"+      - type: Percent",
		"+        value: 10",
		"+        periodSeconds: 60",
	}, lineDiff(orig, string(ex.Data)))
	assert.Len(t, ex.Changed, 4)
}

// Comments, quoting (single quotes, a literal block), trailing comments and a template marker
// inside a comment all stay.
func TestExportOntoCommentedFile(t *testing.T) {
	orig, ex := onto(t, "testdata/edit/commented-keda.yaml", func(a *sim.Autoscaler, _ *int) {
		a.Target, a.MaxWorkers, a.MinWorkers = 4, 10, 3
		a.SetScaleDownPolicies([]sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 120000}})
	})
	assert.Equal(t, []string{
		"+" + strings.SplitN(string(ex.Data), "\n", 2)[0],
		"-  minReplicaCount: 2",
		"-  maxReplicaCount: 12   # quota: 12 GPUs",
		"+  minReplicaCount: 3",
		"+  maxReplicaCount: 10   # quota: 12 GPUs",
		"-        threshold: '6'   # per pod",
		"+        threshold: '4'   # per pod",
		"-              value: 2        # two at a time",
		"+              value: 1        # two at a time",
	}, lineDiff(orig, string(ex.Data)))
}

// A JSON List: the values change in place and no comment is added (JSON has none).
func TestExportOntoJSON(t *testing.T) {
	orig, ex := onto(t, "testdata/charts/deployment-with-hpa-json.json", func(a *sim.Autoscaler, _ *int) {
		a.Target, a.GraceMS = 12, f64(90000)
	})
	assert.Equal(t, []string{
		`-       "spec": {"terminationGracePeriodSeconds": 45,`,
		`+       "spec": {"terminationGracePeriodSeconds": 90,`,
		`-       {"type": "Pods", "pods": {"metric": {"name": "vllm_num_requests_running_and_waiting"}, "target": {"type": "AverageValue", "averageValue": "16"}}}],`,
		`+       {"type": "Pods", "pods": {"metric": {"name": "vllm_num_requests_running_and_waiting"}, "target": {"type": "AverageValue", "averageValue": "12"}}}],`,
	}, lineDiff(orig, string(ex.Data)))
}

// The grace of a workload that is not in the file is a patch after the user's documents; a
// migration limit no workload sets is a comment; nothing else is written.
func TestExportOntoWorkloadNotInFile(t *testing.T) {
	orig, ex := onto(t, "testdata/charts/production-stack-hpa-adapter.yaml", func(a *sim.Autoscaler, m *int) {
		a.GraceMS = f64(60000)
		*m = 1
	})
	d := lineDiff(orig, string(ex.Data))
	require.NotEmpty(t, d)
	assert.Equal(t, []string{
		"+---",
		"+# A patch of your Deployment vllm-opt125m-deployment-vllm: its pods' grace (merge it: kubectl patch, kustomize)",
		"+apiVersion: apps/v1",
		"+kind: Deployment",
		"+metadata:",
		"+  name: vllm-opt125m-deployment-vllm",
		"+  namespace: default",
		"+spec:",
		"+  template:",
		"+    spec:",
		"+      terminationGracePeriodSeconds: 60",
		"+# Scale-in Planner: set DYN_MIGRATION_LIMIT=1 on your Dynamo frontend's container (no workload in this file sets it)",
	}, d[1:], "after the header")
	assert.NotContains(t, string(ex.Data), "dynamo-frontend")
}

// Every manifest of testdata that imports exports, unchanged, as itself after one header line.
func TestExportOntoUnchangedIsTheFile(t *testing.T) {
	for _, dir := range []string{"testdata/charts", "testdata/edit"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(dir + "/" + e.Name())
			require.NoError(t, err)
			im, err := hpa.Import(data, defaults())
			if err != nil {
				continue
			}
			m := 0
			if im.MigrationLimit != nil {
				m = *im.MigrationLimit
			}
			t.Run(e.Name(), func(t *testing.T) {
				ex, err := hpa.ExportOnto(hpa.Settings{Autoscaler: im.Autoscaler, MigrationLimit: m, Origin: im.Origin})
				require.NoError(t, err)
				assert.Empty(t, ex.Changed)
				if strings.HasSuffix(e.Name(), ".json") {
					assert.Equal(t, string(data), string(ex.Data))
					return
				}
				assert.Equal(t, "# Scale-in Planner. Nothing changed: these are your settings\n"+string(data), string(ex.Data))
			})
		}
	}
}

// A value held by a YAML alias cannot be edited in place: ExportOnto says so, and Export falls
// back to writing the object anew, saying why.
func TestExportOntoAliasFallsBack(t *testing.T) {
	doc := hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "  behavior:\n    scaleUp:\n      stabilizationWindowSeconds: *peak\n")
	doc = strings.Replace(doc, "maxReplicas: 8", "maxReplicas: &peak 8", 1)
	im, err := hpa.Import([]byte(doc), defaults())
	require.NoError(t, err)
	a := im.Autoscaler
	a.Behavior = a.Behavior.Clone()
	a.Behavior.ScaleUp.WindowMS = ptr(int64(60000))
	_, err = hpa.ExportOnto(hpa.Settings{Autoscaler: a, Origin: im.Origin})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stabilizationWindowSeconds is a YAML alias; edit it by hand")
	out, err := hpa.Export(hpa.Settings{Autoscaler: a, Origin: im.Origin})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "# Note: your file could not be edited in place"), string(out))
	back, err := hpa.Import(out, defaults())
	require.NoError(t, err)
	assert.Equal(t, a.ControllerSettings(), back.Autoscaler.ControllerSettings())
}

// In a JSON file a missing field is inserted as JSON (the file stays JSON and reads back).
func TestExportOntoJSONInserts(t *testing.T) {
	js := `{
  "apiVersion": "autoscaling/v2",
  "kind": "HorizontalPodAutoscaler",
  "metadata": {"name": "vllm", "namespace": "ml"},
  "spec": {
    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"},
    "maxReplicas": 6,
    "metrics": [{"type": "Pods", "pods": {"metric": {"name": "vllm:num_requests_waiting"}, "target": {"type": "AverageValue", "averageValue": "4"}}}]
  }
}
`
	file := t.TempDir() + "/hpa.json"
	require.NoError(t, os.WriteFile(file, []byte(js), 0o644))
	orig, ex := onto(t, file, func(a *sim.Autoscaler, _ *int) {
		a.MinWorkers = 2
		a.SetScaleDownPolicies([]sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 1, PeriodMS: 60000}})
	})
	assert.True(t, json.Valid(ex.Data), "still JSON: %s", ex.Data)
	// A new key goes first in its JSON object (or before the key it belongs in front of).
	assert.Equal(t, []string{
		`-    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"},`,
		`-    "maxReplicas": 6,`,
		`+    "behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm"},`,
		`+    "minReplicas": 2, "maxReplicas": 6,`,
	}, lineDiff(orig, string(ex.Data)))
}
