package hpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/scalein-planner/scalein/sim"
)

// MaxManifestBytes bounds what Import reads.
const MaxManifestBytes = 1 << 20

// Kubernetes' defaults where an HPA leaves a field out (the model shares the windows and the
// tolerance).
const (
	k8sTolerance = 0.1
)

// Problem is a part of a manifest the model cannot represent, and what Import did about it.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// Imported is what a manifest gave: the autoscaler (the fields it covers set, the others as in
// the autoscaler passed to Import), the migration limit when a Deployment sets
// DYN_MIGRATION_LIMIT, the scenario fields it filled, and what it could not represent.
type Imported struct {
	Autoscaler     sim.Autoscaler `json:"autoscaler"`
	MigrationLimit *int           `json:"migration_limit"`
	Filled         []string       `json:"filled"`
	Problems       []Problem      `json:"problems"`
}

// Import reads YAML documents (an autoscaling/v2 HorizontalPodAutoscaler, and optionally the
// Deployments of Export) into autoscaler settings on top of base, whose interval_ms says which
// policy period is "one decision". It fails only when there is no usable HPA: bad YAML, a field
// the API does not have, no autoscaling/v2 HPA, no Pods metric, no maxReplicas.
func Import(data []byte, base sim.Autoscaler) (*Imported, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("the manifest is %d bytes; at most %d", len(data), MaxManifestBytes)
	}
	im := &Imported{Autoscaler: base, Filled: []string{}, Problems: []Problem{}}
	var hpas []*autoscalingv2.HorizontalPodAutoscaler
	var deployments []*appsv1.Deployment
	for i, doc := range splitDocuments(data) {
		path := fmt.Sprintf("document %d", i+1)
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: not YAML a manifest can be read from: %v", path, err)
		}
		switch {
		case tm.Kind == "HorizontalPodAutoscaler" && tm.APIVersion == "autoscaling/v2":
			var h autoscalingv2.HorizontalPodAutoscaler
			if err := yaml.UnmarshalStrict(doc, &h); err != nil {
				return nil, fmt.Errorf("%s (HorizontalPodAutoscaler): %v", path, err)
			}
			hpas = append(hpas, &h)
		case tm.Kind == "HorizontalPodAutoscaler":
			im.problem(path, "apiVersion %q: only autoscaling/v2 HPAs are read (autoscaling/v1 scales on CPU only); convert it with kubectl convert or write it as autoscaling/v2", tm.APIVersion)
		case tm.Kind == "Deployment" && tm.APIVersion == "apps/v1":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(doc, &d); err != nil {
				return nil, fmt.Errorf("%s (Deployment): %v", path, err)
			}
			deployments = append(deployments, &d)
		case tm.Kind == "":
			im.problem(path, "has no kind; left out")
		default:
			im.problem(path, "kind %s (%s) is not used: only a HorizontalPodAutoscaler and Deployments are read", tm.Kind, tm.APIVersion)
		}
	}
	if len(hpas) == 0 {
		msg := "no autoscaling/v2 HorizontalPodAutoscaler in the manifest"
		if len(im.Problems) > 0 {
			msg += " (" + joinProblems(im.Problems) + ")"
		}
		return nil, errors.New(msg)
	}
	for i := range hpas[1:] {
		im.problem(fmt.Sprintf("document with HPA %q", hpas[i+1].Name), "a second HPA: only the first (%q) is read", hpas[0].Name)
	}
	h := hpas[0]
	if err := im.readHPA(h); err != nil {
		return nil, err
	}
	im.readDeployments(deployments, h.Spec.ScaleTargetRef.Name)
	return im, nil
}

func (im *Imported) problem(path, format string, a ...any) {
	im.Problems = append(im.Problems, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
}

func (im *Imported) fill(field string) { im.Filled = append(im.Filled, field) }

func joinProblems(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// splitDocuments splits YAML at "---" lines and drops documents that hold only comments.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	flush := func() {
		for line := range bytes.Lines(cur) {
			t := bytes.TrimSpace(line)
			if len(t) > 0 && t[0] != '#' {
				docs = append(docs, cur)
				break
			}
		}
		cur = nil
	}
	for line := range bytes.Lines(data) {
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush()
			continue
		}
		cur = append(cur, line...)
	}
	flush()
	return docs
}

// readHPA fills what the HPA covers.
func (im *Imported) readHPA(h *autoscalingv2.HorizontalPodAutoscaler) error {
	a := &im.Autoscaler
	s := h.Spec
	if s.MaxReplicas < 1 {
		return fmt.Errorf("spec.maxReplicas: must be at least 1 (got %d)", s.MaxReplicas)
	}
	a.MinWorkers = 1 // Kubernetes' default
	if s.MinReplicas != nil {
		if *s.MinReplicas < 1 {
			return fmt.Errorf("spec.minReplicas: must be at least 1: the model never scales to zero (got %d)", *s.MinReplicas)
		}
		a.MinWorkers = int(*s.MinReplicas)
	}
	if a.MinWorkers > int(s.MaxReplicas) {
		return fmt.Errorf("spec.minReplicas %d is above spec.maxReplicas %d", a.MinWorkers, s.MaxReplicas)
	}
	a.MaxWorkers = int(s.MaxReplicas)
	im.fill("autoscaler.min_workers")
	im.fill("autoscaler.max_workers")
	if err := im.readMetrics(s.Metrics); err != nil {
		return err
	}
	// A behavior is taken whole (SPEC §3.16); no behavior stays no behavior (the legacy path).
	a.ScaleDownWindowMS, a.ScaleUpWindowMS = nil, nil
	a.MaxRemovePerTick, a.MaxAddPerTick = sim.PerTick{}, sim.PerTick{}
	a.Behavior = nil
	if s.Behavior != nil {
		a.Behavior = &sim.Behavior{
			ScaleUp:   im.rules(s.Behavior.ScaleUp, "spec.behavior.scaleUp"),
			ScaleDown: im.rules(s.Behavior.ScaleDown, "spec.behavior.scaleDown"),
		}
	}
	im.fill("autoscaler.behavior")
	a.Tolerance = k8sTolerance
	im.fill("autoscaler.tolerance")
	return nil
}

// readMetrics takes the target from the first Pods metric and names every other metric.
func (im *Imported) readMetrics(ms []autoscalingv2.MetricSpec) error {
	if len(ms) == 0 {
		return errors.New("spec.metrics: none, so Kubernetes scales on CPU (80 % utilisation), which the model cannot represent; add a Pods metric with an averageValue target (requests per worker or KV-cache usage)")
	}
	used := -1
	for i, m := range ms {
		path := fmt.Sprintf("spec.metrics[%d]", i)
		switch {
		case m.Type != autoscalingv2.PodsMetricSourceType || m.Pods == nil:
			what := string(m.Type)
			if m.Resource != nil {
				what += " (" + string(m.Resource.Name) + ")"
			}
			if m.ContainerResource != nil {
				what += " (" + string(m.ContainerResource.Name) + ")"
			}
			im.problem(path, "a %s metric: the model scales on one Pods metric (requests per worker or KV-cache usage), not on CPU, memory or object metrics; left out", what)
		case used >= 0:
			im.problem(path, "a second Pods metric (%s): the model scales on one metric; only spec.metrics[%d] is used", m.Pods.Metric.Name, used)
		case m.Pods.Target.Type != autoscalingv2.AverageValueMetricType || m.Pods.Target.AverageValue == nil:
			im.problem(path, "target type %s: the model's target is an averageValue per pod; left out", m.Pods.Target.Type)
		default:
			used = i
		}
	}
	if used < 0 {
		return fmt.Errorf("spec.metrics: no Pods metric with an averageValue target the model can use (%s)", joinProblems(im.Problems))
	}
	p := ms[used].Pods
	path := fmt.Sprintf("spec.metrics[%d].pods", used)
	a := &im.Autoscaler
	name := strings.ToLower(p.Metric.Name)
	switch {
	case strings.Contains(name, "kv_cache_usage") || strings.Contains(name, "gpu_cache_usage"):
		a.Metric = sim.MetricKVUsage
	case strings.Contains(name, "num_requests"):
		a.Metric = sim.MetricRequestsPerWorker
	default:
		a.Metric = sim.MetricRequestsPerWorker
		im.problem(path+".metric.name", "%q is not a metric the model knows (%s or %s); taken as requests per worker", p.Metric.Name, MetricRequests, MetricKVUsage)
	}
	if p.Metric.Selector != nil {
		im.problem(path+".metric.selector", "the model has no metric selector; left out")
	}
	v := p.Target.AverageValue.AsApproximateFloat64()
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s.target.averageValue: must be above 0 (got %s)", path, p.Target.AverageValue.String())
	}
	a.Target = v
	im.fill("autoscaler.metric")
	im.fill("autoscaler.target")
	return nil
}

// rules reads one direction of a behavior, in ms, keeping what is unset unset (Kubernetes'
// defaults are filled by the controller).
func (im *Imported) rules(r *autoscalingv2.HPAScalingRules, path string) *sim.ScalingRules {
	if r == nil {
		return nil
	}
	out := &sim.ScalingRules{}
	if w := r.StabilizationWindowSeconds; w != nil {
		if *w < 0 || *w > sim.MaxBehaviorWindowMS/1000 {
			im.problem(path+".stabilizationWindowSeconds", "must be in [0, 3600] as Kubernetes requires (got %d); left out", *w)
		} else {
			ms := int64(*w) * 1000
			out.WindowMS = &ms
		}
	}
	if sp := r.SelectPolicy; sp != nil {
		switch *sp {
		case autoscalingv2.MaxChangePolicySelect:
			out.Select = sim.SelectPolicyMax
		case autoscalingv2.MinChangePolicySelect:
			out.Select = sim.SelectPolicyMin
		case autoscalingv2.DisabledPolicySelect:
			out.Select = sim.SelectPolicyDisabled
		default:
			im.problem(path+".selectPolicy", "%q is not Max, Min or Disabled; left out", *sp)
		}
	}
	for i, p := range r.Policies {
		pp := fmt.Sprintf("%s.policies[%d]", path, i)
		var typ string
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			typ = sim.PolicyTypePods
		case autoscalingv2.PercentScalingPolicy:
			typ = sim.PolicyTypePercent
		default:
			im.problem(pp, "policy type %q is not one Kubernetes knows (Pods or Percent); left out", p.Type)
			continue
		}
		if p.Value < 1 || p.PeriodSeconds < 1 || p.PeriodSeconds > sim.MaxPolicyPeriodMS/1000 {
			im.problem(pp, "Kubernetes requires value ≥ 1 and periodSeconds in [1, 1800] (got value %d, periodSeconds %d); left out", p.Value, p.PeriodSeconds)
			continue
		}
		out.Policies = append(out.Policies, sim.ScalingPolicy{Type: typ, Value: int(p.Value), PeriodMS: int64(p.PeriodSeconds) * 1000})
	}
	if len(out.Policies) > sim.MaxPolicies {
		im.problem(path+".policies", "%d policies: Kubernetes allows at most %d; the first %d are used", len(out.Policies), sim.MaxPolicies, sim.MaxPolicies)
		out.Policies = out.Policies[:sim.MaxPolicies]
	}
	if r.Tolerance != nil {
		v := r.Tolerance.AsApproximateFloat64()
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			im.problem(path+".tolerance", "must be ≥ 0 (got %s); left out", r.Tolerance.String())
		} else {
			out.Tolerance = &v
		}
	}
	return out
}

// readDeployments takes the grace from the HPA's target Deployment and the migration limit from
// any container's DYN_MIGRATION_LIMIT.
func (im *Imported) readDeployments(ds []*appsv1.Deployment, target string) {
	for _, d := range ds {
		path := fmt.Sprintf("Deployment %q", d.Name)
		pod := d.Spec.Template.Spec
		if d.Name == target && pod.TerminationGracePeriodSeconds != nil {
			g := float64(*pod.TerminationGracePeriodSeconds) * 1000
			im.Autoscaler.GraceMS = &g
			im.fill("autoscaler.grace_ms")
		}
		for _, c := range pod.Containers {
			for _, e := range c.Env {
				if e.Name != MigrationLimitEnv {
					continue
				}
				n, err := strconv.Atoi(e.Value)
				if err != nil || n < 0 {
					im.problem(path+" env "+MigrationLimitEnv, "%q is not a whole number of 0 or more; left out", e.Value)
					continue
				}
				im.MigrationLimit = &n
				im.fill("router.migration_limit")
			}
		}
	}
}

// MarshalJSON keeps Filled and Problems lists (never null) for the API.
func (im Imported) MarshalJSON() ([]byte, error) {
	type plain Imported
	if im.Filled == nil {
		im.Filled = []string{}
	}
	if im.Problems == nil {
		im.Problems = []Problem{}
	}
	return json.Marshal(plain(im))
}
