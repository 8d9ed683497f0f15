package hpa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// Metric names Export writes and Import recognises (by these substrings) for the model's two
// metrics. They are the names a Prometheus Adapter (or KEDA) rule would give vLLM's series;
// rename them to the ones your adapter serves.
const (
	// MetricRequests is vLLM's vllm:num_requests_running + vllm:num_requests_waiting per pod.
	MetricRequests = "vllm_num_requests_running_and_waiting"
	// MetricKVUsage is vLLM's vllm:kv_cache_usage_perc (a fraction, 0 to 1) per pod.
	MetricKVUsage = "vllm_kv_cache_usage_perc"
)

// Default names of the workloads the manifests refer to.
const (
	DefaultWorkers           = "llm-workers"
	DefaultWorkerContainer   = "worker"
	DefaultFrontend          = "dynamo-frontend"
	DefaultFrontendContainer = "frontend"
)

// MigrationLimitEnv is the Dynamo frontend's environment variable for router.migration_limit.
const MigrationLimitEnv = "DYN_MIGRATION_LIMIT"

// Settings are what Export writes: the autoscaler (complete, as Parse fills it), the migration
// limit, the names of the workloads and where the settings came from.
type Settings struct {
	Autoscaler     sim.Autoscaler
	MigrationLimit int
	// Workers and Frontend name the worker and frontend Deployments (defaults above).
	Workers, Frontend string
	// Source is written as the first comment, e.g. "plan abc…, candidate …, run xyz…".
	Source string
}

// Export writes the settings as three YAML documents: the HorizontalPodAutoscaler of the
// worker Deployment, a patch of that Deployment with terminationGracePeriodSeconds, and a
// patch of the Dynamo frontend with DYN_MIGRATION_LIMIT. Comments say where they came from and
// what no manifest can hold.
func Export(s Settings) ([]byte, error) {
	a := s.Autoscaler
	if s.Workers == "" {
		s.Workers = DefaultWorkers
	}
	if s.Frontend == "" {
		s.Frontend = DefaultFrontend
	}
	if a.Target <= 0 || a.MinWorkers < 1 || a.MaxWorkers < a.MinWorkers || a.IntervalMS <= 0 {
		return nil, fmt.Errorf("hpa: the autoscaler is incomplete (target %v, min_workers %d, max_workers %d, interval_ms %v); pass one Parse filled", a.Target, a.MinWorkers, a.MaxWorkers, a.IntervalMS)
	}
	var notes []string
	period := int32(math.Ceil(a.IntervalMS / 1000))
	if float64(period)*1000 != a.IntervalMS {
		notes = append(notes, fmt.Sprintf("interval_ms %v is not whole seconds: the policies use periodSeconds %d", a.IntervalMS, period))
	}
	hpa, hpaNotes, err := exportHPA(s, period)
	if err != nil {
		return nil, err
	}
	notes = append(notes, hpaNotes...)

	grace := corev1.PodSpec{Containers: []corev1.Container{{Name: DefaultWorkerContainer}}}
	if a.GraceMS == nil {
		notes = append(notes, "grace_ms is null (drains are never forced): Kubernetes has no unlimited grace, so terminationGracePeriodSeconds is left out (its default is 30 s); set one long enough for your longest request")
	} else {
		secs := int64(math.Ceil(*a.GraceMS / 1000))
		if float64(secs)*1000 != *a.GraceMS {
			notes = append(notes, fmt.Sprintf("grace_ms %v is not whole seconds: terminationGracePeriodSeconds is %d", *a.GraceMS, secs))
		}
		grace.TerminationGracePeriodSeconds = &secs
	}
	workers := deployment(s.Workers, grace)
	frontend := deployment(s.Frontend, corev1.PodSpec{Containers: []corev1.Container{{Name: DefaultFrontendContainer,
		Env: []corev1.EnvVar{{Name: MigrationLimitEnv, Value: strconv.Itoa(s.MigrationLimit)}}}}})

	notes = append(notes, notInManifests(a)...)
	var b bytes.Buffer
	b.WriteString("# Autoscaler settings from the Scale-in Planner")
	if s.Source != "" {
		b.WriteString(": " + oneLine(s.Source))
	}
	b.WriteString("\n# The two Deployments are patches: merge them into yours (kubectl patch, kustomize).\n")
	for _, n := range notes {
		b.WriteString("# Note: " + oneLine(n) + "\n")
	}
	for i, doc := range []any{hpa, workers, frontend} {
		out, err := manifestYAML(doc)
		if err != nil {
			return nil, fmt.Errorf("hpa: encode document %d: %w", i+1, err)
		}
		b.WriteString("---\n")
		b.Write(out)
	}
	return b.Bytes(), nil
}

// exportHPA builds the HorizontalPodAutoscaler.
func exportHPA(s Settings, period int32) (*autoscalingv2.HorizontalPodAutoscaler, []string, error) {
	a := s.Autoscaler
	var notes []string
	target, err := resource.ParseQuantity(strconv.FormatFloat(a.Target, 'f', -1, 64))
	if err != nil {
		return nil, nil, fmt.Errorf("hpa: target %v is not a Kubernetes quantity: %w", a.Target, err)
	}
	name := MetricRequests
	if a.Metric == sim.MetricKVUsage {
		name = MetricKVUsage
	}
	seconds := func(ns int64, what string) int32 {
		w := int32(math.Ceil(float64(ns) / 1e9))
		if int64(w)*1_000_000_000 != ns {
			notes = append(notes, fmt.Sprintf("the %s %s is not whole seconds: written as %d s", what, formatMS(float64(ns)/1e6), w))
		}
		return w
	}
	rules := func(r podautoscaler.Rules, what string) *autoscalingv2.HPAScalingRules {
		w := seconds(r.WindowNS, what+" window")
		sel := map[podautoscaler.Select]autoscalingv2.ScalingPolicySelect{podautoscaler.SelectMax: autoscalingv2.MaxChangePolicySelect,
			podautoscaler.SelectMin: autoscalingv2.MinChangePolicySelect, podautoscaler.SelectDisabled: autoscalingv2.DisabledPolicySelect}[r.Select]
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &w, SelectPolicy: &sel}
		if r.Tolerance != a.Tolerance || a.Tolerance != 0.1 {
			if tq, err := resource.ParseQuantity(strconv.FormatFloat(r.Tolerance, 'f', -1, 64)); err == nil {
				out.Tolerance = &tq
			}
		}
		for _, p := range r.Policies {
			typ := autoscalingv2.PodsScalingPolicy
			if p.Type == podautoscaler.PolicyPercent {
				typ = autoscalingv2.PercentScalingPolicy
			}
			out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy{Type: typ, Value: int32(p.Value), PeriodSeconds: seconds(p.PeriodNS, what+" policy period")})
		}
		return out
	}
	var behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
	if b := a.ControllerSettings().Behavior; b != nil {
		behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(b.Down, "scale-down"), ScaleUp: rules(b.Up, "scale-up")}
	}
	minReplicas := int32(a.MinWorkers)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Workers},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: s.Workers},
			MinReplicas:    &minReplicas,
			MaxReplicas:    int32(a.MaxWorkers),
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: name},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &target},
			}}},
			Behavior: behavior,
		},
	}
	return h, notes, nil
}

func deployment(name string, pod corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: pod}},
	}
}

// notInManifests names the settings no manifest holds.
func notInManifests(a sim.Autoscaler) []string {
	out := []string{"tolerance is an HPA field from Kubernetes 1.33 (feature gate HPAConfigurableTolerance); an older cluster uses its --horizontal-pod-autoscaler-tolerance (default 0.1) instead",
		fmt.Sprintf("decisions every %s: that is the controller's --horizontal-pod-autoscaler-sync-period (cluster-wide, default 15 s), not a manifest field", formatMS(a.IntervalMS))}
	if a.MetricDelayMS > 0 {
		out = append(out, fmt.Sprintf("metric_delay_ms %v is your scrape and adapter lag, not a setting", a.MetricDelayMS))
	}
	out = append(out, fmt.Sprintf("startup %s is how long a new pod takes to serve (image pull, model load), not a setting", formatMS(a.StartupMS)))
	switch a.Select {
	case sim.SelectHighestID:
		out = append(out, "select highest_id: the newest pods go first, as a ReplicaSet picks them by default")
	default:
		out = append(out, fmt.Sprintf("select %s: Kubernetes picks the pods to delete itself; keep the controller.kubernetes.io/pod-deletion-cost annotation up to date from the load to get this choice", a.Select))
	}
	if a.ReuseDraining {
		out = append(out, "reuse_draining: Kubernetes never returns a terminating pod to service; this setting has no manifest")
	}
	return out
}

func formatMS(ms float64) string {
	if ms != 0 && math.Abs(ms) < 1000 {
		return strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', -1, 64) + " s"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// manifestYAML writes an API object as YAML without its status and without the null and empty
// values the API types write for unset fields ("selector: null" would clear the selector of the
// Deployment a patch is merged into; "creationTimestamp: null" is noise).
func manifestYAML(obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	pruned, _ := prune(m).(map[string]any)
	out, err := json.Marshal(pruned)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(out)
}

// prune drops nulls and empty objects, recursively; it returns nil when nothing is left.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p := prune(e); p == nil {
				delete(x, k)
			} else {
				x[k] = p
			}
		}
		if len(x) == 0 {
			return nil
		}
		return x
	case []any:
		for i, e := range x {
			if p := prune(e); p != nil {
				x[i] = p
			} else {
				x[i] = map[string]any{}
			}
		}
		return x
	}
	return v
}
