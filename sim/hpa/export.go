package hpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
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
// limit, the user's objects when the settings were imported (Origin), else the names to give
// them, and where the settings came from.
type Settings struct {
	Autoscaler     sim.Autoscaler
	MigrationLimit int
	// Origin is Imported.Origin: Export then writes the same kind of object under the user's
	// names, with only the fields the model holds replaced.
	Origin *Origin
	// Workers, Namespace and Frontend name the objects when there is no Origin (Workers and
	// Frontend default to the placeholders above).
	Workers, Namespace, Frontend string
	// Kind is "hpa" (default) or "keda" (a ScaledObject) when there is no Origin.
	Kind string
	// Source is written as the first comment, e.g. "plan abc…, candidate …, run xyz…".
	Source string
}

// Export writes the settings as YAML documents: the autoscaler (the imported HPA or KEDA
// ScaledObject with its fields replaced, or a new HPA), a patch of the workload that holds the
// grace, and a patch of the one that holds DYN_MIGRATION_LIMIT. Comments say where they came
// from and what no manifest can hold.
func Export(s Settings) ([]byte, error) {
	if s.Origin != nil && s.Origin.Manifest != "" {
		out, err := ExportOnto(s)
		if err == nil {
			return out.Data, nil
		}
		// A file the editor cannot write into (a YAML alias where a value changes, YAML the
		// node parser refuses) still gets the settings: the object as imported, written anew,
		// saying why.
		o := *s.Origin
		o.Manifest = ""
		s.Origin = &o
		data, err2 := Export(s)
		if err2 != nil {
			return nil, err
		}
		return append([]byte("# Note: your file could not be edited in place ("+oneLine(err.Error())+"): these are your objects written anew\n"), data...), nil
	}
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
	kind := "HorizontalPodAutoscaler"
	switch {
	case s.Origin != nil:
		kind = s.Origin.Kind
	case s.Kind == "keda":
		kind = "ScaledObject"
	case s.Kind != "" && s.Kind != "hpa":
		return nil, fmt.Errorf("hpa: kind %q: hpa or keda", s.Kind)
	}
	var notes []string
	var scaler any
	var target WorkloadRef
	var err error
	if kind == "ScaledObject" {
		scaler, target, notes, err = exportScaledObject(s)
	} else {
		scaler, target, notes, err = exportHPA(s)
	}
	if err != nil {
		return nil, err
	}

	graceRef := target
	if s.Origin != nil && s.Origin.Grace != nil {
		graceRef = *s.Origin.Grace
	}
	var grace any
	if a.GraceMS == nil {
		notes = append(notes, "grace_ms is null (drains are never forced): Kubernetes has no unlimited grace, so terminationGracePeriodSeconds is left out (its default is 30 s); set one long enough for your longest request")
	} else {
		secs := int64(math.Ceil(*a.GraceMS / 1000))
		if float64(secs)*1000 != *a.GraceMS {
			notes = append(notes, fmt.Sprintf("grace_ms %v is not whole seconds: terminationGracePeriodSeconds is %d", *a.GraceMS, secs))
		}
		grace = secs
	}
	migRef := WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: s.Frontend, Namespace: s.Namespace, Container: DefaultFrontendContainer}
	if s.Origin != nil && s.Origin.Migration != nil {
		migRef = *s.Origin.Migration
	}
	docs := []any{scaler, workloadPatch(graceRef, grace, nil),
		workloadPatch(migRef, nil, &corev1.EnvVar{Name: MigrationLimitEnv, Value: strconv.Itoa(s.MigrationLimit)})}

	notes = append(notes, notInManifests(a)...)
	var b bytes.Buffer
	b.WriteString("# Autoscaler settings from the Scale-in Planner")
	if s.Source != "" {
		b.WriteString(": " + oneLine(s.Source))
	}
	b.WriteString("\n# The workloads are patches: merge them into yours (kubectl patch, kustomize).\n")
	for _, n := range notes {
		b.WriteString("# Note: " + oneLine(n) + "\n")
	}
	for i, doc := range docs {
		out, err := manifestYAML(doc)
		if err != nil {
			return nil, fmt.Errorf("hpa: encode document %d: %w", i+1, err)
		}
		b.WriteString("---\n")
		b.Write(out)
	}
	return b.Bytes(), nil
}

// exportBehavior is the autoscaler's effective behavior as the API writes it (nil for the
// legacy path), with its notes.
func exportBehavior(a sim.Autoscaler) (*autoscalingv2.HorizontalPodAutoscalerBehavior, []string) {
	var notes []string
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
		if r.Tolerance != a.Tolerance || a.Tolerance != k8sTolerance {
			if tq, err := quantity(r.Tolerance); err == nil {
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
	b := a.ControllerSettings().Behavior
	if b == nil {
		return nil, nil
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(b.Down, "scale-down"), ScaleUp: rules(b.Up, "scale-up")}, notes
}

// exportHPA builds the HorizontalPodAutoscaler: the imported one with the model's fields
// replaced, or a new one.
func exportHPA(s Settings) (*autoscalingv2.HorizontalPodAutoscaler, WorkloadRef, []string, error) {
	a := s.Autoscaler
	target, err := quantity(a.Target)
	if err != nil {
		return nil, WorkloadRef{}, nil, fmt.Errorf("hpa: target %v is not a Kubernetes quantity: %w", a.Target, err)
	}
	behavior, notes := exportBehavior(a)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Workers, Namespace: s.Namespace},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: s.Workers},
		},
	}
	index := 0
	keep := false
	if o := s.Origin; o != nil {
		h = &autoscalingv2.HorizontalPodAutoscaler{}
		if err := json.Unmarshal(o.Document, h); err != nil {
			return nil, WorkloadRef{}, nil, fmt.Errorf("hpa: the imported HPA: %w", err)
		}
		index, keep = o.MetricIndex, o.Metric == a.Metric && o.Aggregate == a.Aggregate && o.MetricIndex < len(h.Spec.Metrics)
	}
	minReplicas := int32(a.MinWorkers)
	h.Spec.MinReplicas, h.Spec.MaxReplicas, h.Spec.Behavior = &minReplicas, int32(a.MaxWorkers), behavior
	mt := autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &target}
	switch {
	case keep && h.Spec.Metrics[index].Pods != nil:
		h.Spec.Metrics[index].Pods.Target = mt
	case keep && h.Spec.Metrics[index].External != nil:
		h.Spec.Metrics[index].External.Target = mt
	default:
		id := autoscalingv2.MetricIdentifier{Name: exportNames[a.Metric]}
		m := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: id, Target: mt}}
		if a.Source == sim.SourceExternal {
			m = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: id, Target: mt}}
			notes = append(notes, fmt.Sprintf("the External metric %s must be the %s over the workers of %s (your adapter's rule)", id.Name, a.Aggregate, a.Metric))
		}
		if index < len(h.Spec.Metrics) {
			h.Spec.Metrics[index] = m
		} else {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{m}
		}
	}
	r := h.Spec.ScaleTargetRef
	return h, WorkloadRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, Namespace: h.Namespace}, notes, nil
}

// exportScaledObject builds the KEDA ScaledObject: the imported one with the model's fields
// replaced, or a new one with a Prometheus trigger.
func exportScaledObject(s Settings) (*scaledObject, WorkloadRef, []string, error) {
	a := s.Autoscaler
	behavior, notes := exportBehavior(a)
	so := &scaledObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: "keda.sh/v1alpha1", Kind: "ScaledObject"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Workers, Namespace: s.Namespace},
		Spec: scaledObjectSpec{ScaleTargetRef: &kedaScaleTarget{Name: s.Workers},
			Triggers: []kedaTrigger{{Type: "prometheus", Metadata: map[string]string{"serverAddress": "http://prometheus.monitoring:9090"}}}},
	}
	if s.Origin == nil {
		notes = append(notes, "serverAddress http://prometheus.monitoring:9090 is a placeholder: write your Prometheus' address")
	}
	index, keep := 0, false
	if o := s.Origin; o != nil {
		so = &scaledObject{}
		if err := json.Unmarshal(o.Document, so); err != nil {
			return nil, WorkloadRef{}, nil, fmt.Errorf("hpa: the imported ScaledObject: %w", err)
		}
		index, keep = o.MetricIndex, o.Metric == a.Metric && o.Aggregate == a.Aggregate
	}
	if index >= len(so.Spec.Triggers) || so.Spec.ScaleTargetRef == nil {
		return nil, WorkloadRef{}, nil, errors.New("hpa: the imported ScaledObject has no such trigger")
	}
	minR, maxR := int32(a.MinWorkers), int32(a.MaxWorkers)
	so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount = &minR, &maxR
	t := &so.Spec.Triggers[index]
	if t.Metadata == nil {
		t.Metadata = map[string]string{}
	}
	t.Metadata["threshold"] = strconv.FormatFloat(a.Target, 'f', -1, 64)
	if !keep {
		agg := a.Aggregate
		if a.Source != sim.SourceExternal {
			agg = sim.AggregateSum
			notes = append(notes, "source pods is written as a KEDA trigger on the sum over workers with an AverageValue threshold, which is the same per-worker average")
		}
		t.Metadata["query"] = exportQuery(a.Metric, agg)
		if a.Metric == sim.MetricOfferedRate {
			notes = append(notes, "offered_rate is the workload's request rate: point the query at your gateway's request counter or your load forecast")
		}
	}
	if behavior != nil {
		if so.Spec.Advanced == nil {
			so.Spec.Advanced = &kedaAdvanced{}
		}
		if so.Spec.Advanced.HorizontalPodAutoscalerConfig == nil {
			so.Spec.Advanced.HorizontalPodAutoscalerConfig = &kedaHPAConfig{}
		}
		so.Spec.Advanced.HorizontalPodAutoscalerConfig.Behavior = behavior
	} else if adv := so.Spec.Advanced; adv != nil && adv.HorizontalPodAutoscalerConfig != nil {
		adv.HorizontalPodAutoscalerConfig.Behavior = nil
	}
	ref := so.Spec.ScaleTargetRef
	kind, api := ref.Kind, ref.APIVersion
	if kind == "" {
		kind, api = "Deployment", "apps/v1"
	}
	return so, WorkloadRef{APIVersion: api, Kind: kind, Name: ref.Name, Namespace: so.Namespace}, notes, nil
}

// workloadPatch is a patch of a workload's pod template setting the grace (when grace is not
// nil) or a container's environment variable, written on the workload's own kind.
func workloadPatch(ref WorkloadRef, grace any, env *corev1.EnvVar) map[string]any {
	if ref.APIVersion == "" {
		ref.APIVersion = "apps/v1"
	}
	if ref.Kind == "" {
		ref.Kind = "Deployment"
	}
	podSpec := map[string]any{}
	if grace != nil {
		podSpec["terminationGracePeriodSeconds"] = grace
	}
	container := ref.Container
	if container == "" {
		container = DefaultWorkerContainer
	}
	if env != nil {
		podSpec["containers"] = []any{map[string]any{"name": container, "env": []any{map[string]any{"name": env.Name, "value": env.Value}}}}
	}
	var spec map[string]any
	switch ref.Kind {
	case "LeaderWorkerSet":
		spec = map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": map[string]any{"spec": podSpec}}}
	case "DynamoGraphDeployment":
		svc := map[string]any{}
		if grace != nil {
			svc["extraPodSpec"] = map[string]any{"terminationGracePeriodSeconds": grace}
		}
		if env != nil {
			svc["envs"] = []any{map[string]any{"name": env.Name, "value": env.Value}}
		}
		spec = map[string]any{"services": map[string]any{ref.Service: svc}}
	default:
		spec = map[string]any{"template": map[string]any{"spec": podSpec}}
	}
	meta := map[string]any{"name": ref.Name}
	if ref.Namespace != "" {
		meta["namespace"] = ref.Namespace
	}
	return map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "metadata": meta, "spec": spec}
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
