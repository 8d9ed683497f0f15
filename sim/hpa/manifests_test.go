package hpa_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

// hpaOn is an HPA of Deployment vllm on one Pods metric.
func hpaOn(apiVersion, metric, target, behavior string) string {
	return `apiVersion: ` + apiVersion + `
kind: HorizontalPodAutoscaler
metadata:
  name: vllm-hpa
  namespace: serving
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: vllm
  minReplicas: 2
  maxReplicas: 8
  metrics:
  - type: Pods
    pods:
      metric:
        name: ` + metric + `
      target:
        type: AverageValue
        averageValue: "` + target + `"
` + behavior
}

const keda = `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: vllm-scaledobject
  namespace: default
spec:
  scaleTargetRef:
    name: vllm-deployment
  minReplicaCount: 1
  maxReplicaCount: 4
  pollingInterval: 15
  cooldownPeriod: 360
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus-operated.monitoring.svc:9090
      metricName: vllm:num_requests_waiting
      query: sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)
      threshold: "5"
  advanced:
    horizontalPodAutoscalerConfig:
      behavior:
        scaleDown:
          stabilizationWindowSeconds: 120
          policies:
          - type: Percent
            value: 50
            periodSeconds: 30
`

const kedaHPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: keda-hpa-vllm-scaledobject
  labels:
    scaledobject.keda.sh/name: vllm-scaledobject
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: vllm-deployment
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: External
    external:
      metric:
        name: s0-prometheus
        selector:
          matchLabels:
            scaledobject.keda.sh/name: vllm-scaledobject
      target:
        type: AverageValue
        averageValue: "5"
`

func deploymentWith(kind, name string, grace int, limit string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: %s
metadata:
  name: %s
spec:
  template:
    spec:
      terminationGracePeriodSeconds: %d
      containers:
      - name: main
        image: vllm/vllm-openai
        env:
        - name: DYN_MIGRATION_LIMIT
          value: "%s"
`, kind, name, grace, limit)
}

func TestImportMetricNamesMapExactly(t *testing.T) {
	cases := map[string]struct {
		name, metric string
	}{
		"waiting":          {"vllm:num_requests_waiting", sim.MetricRequestsWaiting},
		"waiting adapter":  {"vllm_num_requests_waiting", sim.MetricRequestsWaiting},
		"running":          {"vllm:num_requests_running", sim.MetricRequestsRunning},
		"gpu cache":        {"vllm:gpu_cache_usage_perc", sim.MetricKVUsage},
		"kv cache":         {"vllm:kv_cache_usage_perc", sim.MetricKVUsage},
		"running+waiting":  {hpa.MetricRequests, sim.MetricRequestsPerWorker},
		"selector in name": {`vllm_num_requests_waiting{model_name="llama"}`, sim.MetricRequestsWaiting},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			target := "3"
			if tc.metric == sim.MetricKVUsage {
				target = "0.7"
			}
			im, err := hpa.Import([]byte(hpaOn("autoscaling/v2", tc.name, target, "")), defaults())
			require.NoError(t, err)
			assert.Equal(t, tc.metric, im.Autoscaler.Metric)
			assert.Equal(t, sim.SourcePods, im.Autoscaler.Source)
		})
	}
	// Substrings are not names.
	_, err := hpa.Import([]byte(hpaOn("autoscaling/v2", "vllm:num_requests_swapped", "3", "")), defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"vllm:num_requests_swapped" is not a metric the model knows; it knows`)
	assert.Contains(t, err.Error(), "vllm:num_requests_waiting")
}

func TestImportManifests(t *testing.T) {
	cases := map[string]struct {
		doc      string
		check    func(t *testing.T, im *hpa.Imported)
		problems []string // substrings, one per problem
	}{
		"v2beta2": {doc: hpaOn("autoscaling/v2beta2", "vllm:num_requests_waiting", "10", ""), check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, 10.0, im.Autoscaler.Target)
			assert.Nil(t, im.Autoscaler.Behavior, "no behavior stays no behavior")
		}},
		"kind List with JSON": {doc: `{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[` +
			`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"a"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"w"},"maxReplicas":5,` +
			`"metrics":[{"type":"Pods","pods":{"metric":{"name":"vllm:kv_cache_usage_perc"},"target":{"type":"AverageValue","averageValue":"700m"}}}]}}]}`,
			check: func(t *testing.T, im *hpa.Imported) {
				assert.Equal(t, sim.MetricKVUsage, im.Autoscaler.Metric)
				assert.Equal(t, 0.7, im.Autoscaler.Target)
				assert.Equal(t, 5, im.Autoscaler.MaxWorkers)
			}},
		"HorizontalPodAutoscalerList": {doc: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscalerList\nitems:\n- " +
			strings.ReplaceAll(hpaOn("autoscaling/v2", "vllm:num_requests_running", "4", ""), "\n", "\n  "),
			check: func(t *testing.T, im *hpa.Imported) { assert.Equal(t, sim.MetricRequestsRunning, im.Autoscaler.Metric) }},
		"KEDA": {doc: keda + "---\n" + deploymentWith("Deployment", "vllm-deployment", 90, "2"), check: func(t *testing.T, im *hpa.Imported) {
			a := im.Autoscaler
			assert.Equal(t, sim.SourceExternal, a.Source)
			assert.Equal(t, sim.AggregateSum, a.Aggregate)
			assert.Equal(t, sim.MetricRequestsWaiting, a.Metric)
			assert.Equal(t, 5.0, a.Target)
			assert.Equal(t, 4, a.MaxWorkers)
			require.NotNil(t, a.Behavior)
			assert.Equal(t, []sim.ScalingPolicy{{Type: "percent", Value: 50, PeriodMS: 30000}}, a.Behavior.ScaleDown.Policies)
			assert.Equal(t, ptr(90000.0), a.GraceMS)
			assert.Equal(t, ptr(2), im.MigrationLimit)
			assert.Equal(t, "ScaledObject", im.Origin.Kind)
		}, problems: []string{"spec.cooldownPeriod: 360", "spec.pollingInterval: 15"}},
		"KEDA avg by": {doc: strings.Replace(strings.Replace(keda, `sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)`, `avg by (model_name) (vllm:gpu_cache_usage_perc)`, 1), `threshold: "5"`, `threshold: "0.5"`, 1), check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, sim.AggregateAvg, im.Autoscaler.Aggregate)
			assert.Equal(t, 0.5, im.Autoscaler.Target)
		}, problems: []string{"spec.cooldownPeriod", "spec.pollingInterval", "avg by/without (model_name)"}},
		"KEDA running plus waiting": {doc: strings.Replace(keda, `sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)`, `max(vllm:num_requests_running + vllm:num_requests_waiting)`, 1), check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, sim.MetricRequestsPerWorker, im.Autoscaler.Metric)
			assert.Equal(t, sim.AggregateMax, im.Autoscaler.Aggregate)
		}, problems: []string{"spec.cooldownPeriod", "spec.pollingInterval"}},
		"KEDA bare series": {doc: strings.Replace(keda, `sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)`, `vllm:num_requests_waiting`, 1), check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, sim.AggregateSum, im.Autoscaler.Aggregate)
		}, problems: []string{"spec.cooldownPeriod", "spec.pollingInterval", "KEDA refuses it once there are several pods"}},
		"KEDA and the HPA it made": {doc: keda + "---\n" + kedaHPA, check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, "ScaledObject", im.Origin.Kind)
		}, problems: []string{"generated by KEDA from ScaledObject \"vllm-scaledobject\"", "spec.cooldownPeriod", "spec.pollingInterval"}},
		"rounding": {doc: hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "2.0004", ""), check: func(t *testing.T, im *hpa.Imported) {
			assert.Equal(t, 2.0, im.Autoscaler.Target)
		}, problems: []string{"2000400u rounded to 2: the controller reads targets in milli-units"}},
		"conflicting deployments": {doc: hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "") + "---\n" + deploymentWith("Deployment", "vllm", 60, "1") +
			"---\n" + deploymentWith("Deployment", "other", 60, "3") + "---\n" + deploymentWith("Deployment", "third", 60, "1"),
			check: func(t *testing.T, im *hpa.Imported) {
				assert.Equal(t, ptr(1), im.MigrationLimit)
				assert.Equal(t, ptr(60000.0), im.Autoscaler.GraceMS)
				assert.Equal(t, []string{"autoscaler.min_workers", "autoscaler.max_workers", "autoscaler.metric", "autoscaler.source", "autoscaler.target",
					"autoscaler.behavior", "autoscaler.tolerance", "autoscaler.grace_ms", "router.migration_limit"}, im.Filled)
			}, problems: []string{`document 3 (Deployment "other") env DYN_MIGRATION_LIMIT: 3, but document 2 (Deployment "vllm") sets 1; the first is used`}},
		"StatefulSet grace": {doc: hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "") + "---\n" + strings.Replace(deploymentWith("StatefulSet", "vllm", 120, "0"), "kind: StatefulSet", "kind: StatefulSet", 1),
			check: func(t *testing.T, im *hpa.Imported) {
				assert.Equal(t, ptr(30000.0), im.Autoscaler.GraceMS, "the HPA targets a Deployment, not the StatefulSet")
			}},
		"AIBrix": {doc: hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "") + "---\napiVersion: autoscaling.aibrix.ai/v1alpha1\nkind: PodAutoscaler\nmetadata:\n  name: x\n",
			problems: []string{"kind PodAutoscaler (autoscaling.aibrix.ai/v1alpha1) is AIBrix's autoscaler"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			im, err := hpa.Import([]byte(tc.doc), defaults())
			require.NoError(t, err)
			if tc.check != nil {
				tc.check(t, im)
			}
			require.Len(t, im.Problems, len(tc.problems), "%v", im.Problems)
			for i, p := range tc.problems {
				assert.Contains(t, im.Problems[i].String(), p)
			}
		})
	}
}

func TestImportRefuses(t *testing.T) {
	policy := func(value, period int) string {
		return fmt.Sprintf("  behavior:\n    scaleDown:\n      policies:\n      - type: Pods\n        value: %d\n        periodSeconds: %d\n", value, period)
	}
	cases := map[string]struct{ doc, want string }{
		"value -1":   {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", policy(-1, 15)), `document 1 (HorizontalPodAutoscaler "vllm-hpa"): spec.behavior.scaleDown.policies[0].value: Kubernetes requires at least 1 (got -1)`},
		"period 0":   {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", policy(1, 0)), "spec.behavior.scaleDown.policies[0].periodSeconds: Kubernetes requires 1 to 1800 (got 0)"},
		"period big": {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", policy(1, 1801)), "(got 1801)"},
		"window -1": {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "  behavior:\n    scaleUp:\n      stabilizationWindowSeconds: -1\n"),
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Kubernetes requires 0 to 3600 (got -1)"},
		"too large":  {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "1e1000", ""), "spec.metrics[0].pods.target.averageValue: "},
		"too small":  {hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "1e-300", ""), "is below 0.001 (1m)"},
		"KV percent": {hpaOn("autoscaling/v2", "vllm:kv_cache_usage_perc", "70", ""), "70 looks like a percentage: the KV-cache usage target is a fraction, 0.7"},
		"KEDA KV percent": {strings.Replace(strings.Replace(keda, "vllm:num_requests_waiting{", "vllm:kv_cache_usage_perc{", 1), `threshold: "5"`, `threshold: "70"`, 1),
			"looks like a percentage: the KV-cache usage target is a fraction, 0.7"},
		"KEDA Value": {strings.Replace(keda, "  - type: prometheus\n", "  - type: prometheus\n    metricType: Value\n", 1), "metricType Value: the HPA compares the query's whole value"},
		"KEDA latency": {strings.Replace(keda, `sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)`, `histogram_quantile(0.99, sum(rate(vllm:time_to_first_token_seconds_bucket[1m])) by (le))`, 1),
			"is not sum, avg or max of a vLLM series the model knows"},
		"KEDA typo":         {strings.Replace(keda, "maxReplicaCount", "maxReplicas", 1), `unknown field "maxReplicas"`},
		"KEDA HPA alone":    {kedaHPA, "a metric KEDA generated for a ScaledObject's Prometheus trigger; the query is in the ScaledObject"},
		"Helm":              {"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: {{ include \"vllm.fullname\" . }}\n", "line 4: this is a Helm/Terraform template"},
		"Terraform":         {"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: ${var.name}\n", "line 4: this is a Helm/Terraform template"},
		"v2beta2 tolerance": {hpaOn("autoscaling/v2beta2", "vllm:num_requests_waiting", "3", "  behavior:\n    scaleUp:\n      tolerance: 0.05\n"), "tolerance is an autoscaling/v2 field"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := hpa.Import([]byte(tc.doc), defaults())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// An imported HPA or ScaledObject with unchanged settings comes back as the user's file, byte
// for byte after one header comment; export → import → export gives the same bytes and the
// same controller.
func TestExportKeepsTheUsersObjects(t *testing.T) {
	behavior := "  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 60\n      selectPolicy: Min\n      tolerance: 0.05\n      policies:\n      - type: Percent\n        value: 10\n        periodSeconds: 60\n      - type: Pods\n        value: 2\n        periodSeconds: 30\n"
	cases := map[string]string{
		"HPA":  hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "10", behavior) + "---\n" + deploymentWith("Deployment", "vllm", 90, "2"),
		"KEDA": keda + "---\n" + deploymentWith("StatefulSet", "vllm-deployment", 90, "2"),
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			im, err := hpa.Import([]byte(doc), defaults())
			require.NoError(t, err)
			out, err := hpa.Export(hpa.Settings{Autoscaler: im.Autoscaler, MigrationLimit: *im.MigrationLimit, Origin: im.Origin, Source: "plan p1"})
			require.NoError(t, err)
			assert.Equal(t, "# Scale-in Planner: plan p1. Nothing changed: these are your settings\n"+doc, string(out))
			im2, err := hpa.Import(out, defaults())
			require.NoError(t, err, string(out))
			assert.Equal(t, im.Autoscaler.ControllerSettings(), im2.Autoscaler.ControllerSettings())
			assert.Equal(t, im.Autoscaler.GraceMS, im2.Autoscaler.GraceMS)
			assert.Equal(t, im.MigrationLimit, im2.MigrationLimit)
			out2, err := hpa.Export(hpa.Settings{Autoscaler: im2.Autoscaler, MigrationLimit: *im2.MigrationLimit, Origin: im2.Origin, Source: "plan p1"})
			require.NoError(t, err)
			assert.Equal(t, string(out), string(out2), "the header is replaced, not repeated")
		})
	}
}

// A changed metric replaces the name and query; the rest of the object stays.
func TestExportChangedMetric(t *testing.T) {
	im, err := hpa.Import([]byte(keda), defaults())
	require.NoError(t, err)
	a := im.Autoscaler
	a.Metric, a.Aggregate, a.Target = sim.MetricKVUsage, sim.AggregateAvg, 0.8
	out, err := hpa.Export(hpa.Settings{Autoscaler: a, Origin: im.Origin})
	require.NoError(t, err)
	assert.Contains(t, string(out), "query: avg(vllm:kv_cache_usage_perc)")
	assert.Contains(t, string(out), `threshold: "0.8"`)
	assert.Contains(t, string(out), "serverAddress: http://prometheus-operated.monitoring.svc:9090")
}

func TestExportNewScaledObject(t *testing.T) {
	a := defaults()
	a.Source, a.Aggregate = sim.SourceExternal, sim.AggregateMax
	out, err := hpa.Export(hpa.Settings{Autoscaler: a, Kind: "keda", Workers: "my-vllm", Namespace: "llm"})
	require.NoError(t, err)
	assert.Contains(t, string(out), "query: max(vllm:num_requests_running + vllm:num_requests_waiting)")
	im, err := hpa.Import(out, defaults())
	require.NoError(t, err)
	assert.Equal(t, a.ControllerSettings(), im.Autoscaler.ControllerSettings())
}

// A stream with a CPU HPA first and a usable ScaledObject after it reads the ScaledObject and
// names the HPA; two usable autoscalers read the first and name the second with -select; select
// chooses another; an unknown name lists those there are.
func TestImportSeveralAutoscalers(t *testing.T) {
	cpu, err := os.ReadFile("testdata/charts/nim-hpa-cpu.yaml")
	require.NoError(t, err)
	stream := string(cpu) + "---\n" + keda
	im, err := hpa.Import([]byte(stream), defaults())
	require.NoError(t, err)
	assert.Equal(t, "ScaledObject", im.Origin.Kind)
	assert.Equal(t, "vllm-scaledobject", im.Origin.Name)
	assert.Equal(t, 5.0, im.Autoscaler.Target)
	var msgs []string
	for _, p := range im.Problems {
		msgs = append(msgs, p.String())
	}
	assert.Contains(t, strings.Join(msgs, "\n"), `read instead of an earlier autoscaler the model cannot use: document 1 (HorizontalPodAutoscaler "nim-llm"): spec.metrics`)

	two := hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", "") + "---\n" + keda
	im, err = hpa.Import([]byte(two), defaults())
	require.NoError(t, err)
	assert.Equal(t, "vllm-hpa", im.Origin.Name)
	assert.Equal(t, 3.0, im.Autoscaler.Target)
	assert.Equal(t, []hpa.AutoscalerName{{Kind: "HorizontalPodAutoscaler", Name: "vllm-hpa", Used: true},
		{Kind: "ScaledObject", Name: "vllm-scaledobject"}}, im.Autoscalers)
	msgs = nil
	for _, p := range im.Problems {
		msgs = append(msgs, p.String())
	}
	assert.Contains(t, msgs, `document 2: another autoscaler (ScaledObject "vllm-scaledobject"): not read, the first the model can use (HorizontalPodAutoscaler "vllm-hpa") is; choose it by its name (scalein import -select vllm-scaledobject)`)

	im, err = hpa.ImportWith([]byte(two), defaults(), hpa.ImportOptions{Select: "vllm-scaledobject"})
	require.NoError(t, err)
	assert.Equal(t, "ScaledObject", im.Origin.Kind)
	assert.Equal(t, 5.0, im.Autoscaler.Target)
	assert.Equal(t, []hpa.AutoscalerName{{Kind: "HorizontalPodAutoscaler", Name: "vllm-hpa"},
		{Kind: "ScaledObject", Name: "vllm-scaledobject", Used: true}}, im.Autoscalers)

	_, err = hpa.ImportWith([]byte(two), defaults(), hpa.ImportOptions{Select: "nope"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `select "nope": no autoscaler of that name in the manifest (it has HorizontalPodAutoscaler "vllm-hpa", ScaledObject "vllm-scaledobject")`)

	// Neither usable: both reasons.
	_, err = hpa.Import([]byte(string(cpu)+"---\n"+kedaHPA), defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no autoscaler in the manifest the model can use")
	assert.Contains(t, err.Error(), "nim-llm")
	assert.Contains(t, err.Error(), "s0-prometheus")
}

// Template markers refuse a file only where they are read: in a comment or a field Import does
// not read they do not; in the autoscaler's fields they do, naming the line.
func TestTemplateMarkersOnlyWhereRead(t *testing.T) {
	commented := "# rendered from {{ .Values.autoscaling }} by helm template\n" +
		strings.Replace(hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", ""), "  namespace: serving\n",
			"  namespace: serving  # was ${NAMESPACE}\n  annotations:\n    rendered-from: \"{{ .Release.Name }}\"\n", 1)
	im, err := hpa.Import([]byte(commented), defaults())
	require.NoError(t, err)
	assert.Equal(t, 3.0, im.Autoscaler.Target)

	read := strings.Replace(hpaOn("autoscaling/v2", "vllm:num_requests_waiting", "3", ""), `averageValue: "3"`, `averageValue: "{{ .Values.target }}"`, 1)
	_, err = hpa.Import([]byte("# a comment\n"+read), defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 21: this is a Helm/Terraform template ("{{ .Values.target }}\"")`)

	keda := strings.Replace(keda, `threshold: "5"`, `threshold: "${THRESHOLD}"`, 1)
	_, err = hpa.Import([]byte(keda), defaults())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Helm/Terraform template")
}

// An HPA and a ScaledObject of one name: -select takes the first of them the model can use, and
// an export onto the file writes into that one.
func TestSelectSameNameTakesTheUsableOne(t *testing.T) {
	cpu := strings.Replace(cpuHPA, "name: vllm\n", "name: vllm-scaledobject\n", 1)
	onlyCPU := cpu[:strings.Index(cpu, "  - type: Pods")]
	stream := onlyCPU + "---\n" + keda
	im, err := hpa.ImportWith([]byte(stream), defaults(), hpa.ImportOptions{Select: "vllm-scaledobject"})
	require.NoError(t, err)
	assert.Equal(t, "ScaledObject", im.Origin.Kind)
	a := im.Autoscaler
	a.Target = 7
	ex, err := hpa.ExportOnto(hpa.Settings{Autoscaler: a, Origin: im.Origin})
	require.NoError(t, err)
	assert.Contains(t, string(ex.Data), `threshold: "7"`)
	assert.Equal(t, strings.Count(stream, "\n")+1, strings.Count(string(ex.Data), "\n"))
}
