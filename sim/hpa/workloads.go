package hpa

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workload is a pod template of the input: its grace and its DYN_MIGRATION_LIMIT values.
type workload struct {
	path  string
	ref   WorkloadRef
	grace *int64
	// worker is set for a DynamoGraphDeployment service of componentType worker.
	worker bool
	env    []migrationEnv
	// replicas is the workload's spec.replicas (a Dynamo service's replicas), nil when unset.
	replicas *int32
	// role is "prefill" or "decode" when the workload says so (pools.go: a llm-d.ai/role
	// label, a Dynamo service's subComponentType, or its name), else "".
	role string
	// sglang is set for a Dynamo service whose main container runs SGLang.
	sglang bool
}

type migrationEnv struct{ container, value string }

// The LeaderWorkerSet (leaderworkerset.x-k8s.io/v1), a faithful copy of the CRD's spec with
// the pod templates as the real core/v1 type; the fields Import does not read stay raw.
type leaderWorkerSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas             *int32 `json:"replicas,omitempty"`
		LeaderWorkerTemplate struct {
			LeaderTemplate       *corev1.PodTemplateSpec `json:"leaderTemplate,omitempty"`
			WorkerTemplate       corev1.PodTemplateSpec  `json:"workerTemplate"`
			Size                 *int32                  `json:"size,omitempty"`
			RestartPolicy        string                  `json:"restartPolicy,omitempty"`
			SubGroupPolicy       map[string]any          `json:"subGroupPolicy,omitempty"`
			VolumeClaimTemplates []any                   `json:"volumeClaimTemplates,omitempty"`
		} `json:"leaderWorkerTemplate"`
		RolloutStrategy map[string]any `json:"rolloutStrategy,omitempty"`
		StartupPolicy   string         `json:"startupPolicy,omitempty"`
		NetworkConfig   map[string]any `json:"networkConfig,omitempty"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

// The DynamoGraphDeployment (nvidia.com/v1alpha1): only the fields Import reads. Its CRD
// changes with every Dynamo release, so it is decoded leniently (other fields are ignored).
type dynamoGraphDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Envs     []corev1.EnvVar `json:"envs,omitempty"`
		Services map[string]*struct {
			ComponentType    string          `json:"componentType,omitempty"`
			SubComponentType string          `json:"subComponentType,omitempty"`
			Replicas         *int32          `json:"replicas,omitempty"`
			Envs             []corev1.EnvVar `json:"envs,omitempty"`
			ExtraPodSpec     *struct {
				TerminationGracePeriodSeconds *int64            `json:"terminationGracePeriodSeconds,omitempty"`
				MainContainer                 *corev1.Container `json:"mainContainer,omitempty"`
			} `json:"extraPodSpec,omitempty"`
		} `json:"services"`
	} `json:"spec"`
}

// decodeWorkload reads a Deployment, StatefulSet, LeaderWorkerSet or DynamoGraphDeployment;
// known is false for any other kind.
func decodeWorkload(o object) (ws []workload, known bool, err error) {
	ref := WorkloadRef{APIVersion: o.tm.APIVersion, Kind: o.tm.Kind}
	pod := func(meta metav1.ObjectMeta, spec corev1.PodSpec) workload {
		r := ref
		r.Name, r.Namespace = meta.Name, meta.Namespace
		w := workload{path: fmt.Sprintf("%s (%s %q)", o.path, o.tm.Kind, meta.Name), ref: r, grace: spec.TerminationGracePeriodSeconds,
			role: roleOfLabels(meta.Labels)}
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			for _, e := range c.Env {
				if e.Name == MigrationLimitEnv {
					w.env = append(w.env, migrationEnv{container: c.Name, value: e.Value})
				}
			}
		}
		return w
	}
	switch {
	case o.tm.Kind == "Deployment" && o.tm.APIVersion == "apps/v1":
		var d appsv1.Deployment
		if err := strictJSON(o.json, &d); err != nil {
			return nil, true, err
		}
		w := pod(d.ObjectMeta, d.Spec.Template.Spec)
		w.replicas = d.Spec.Replicas
		w.role = cmp.Or(w.role, roleOfLabels(d.Spec.Template.Labels), roleOfName(d.Name))
		return []workload{w}, true, nil
	case o.tm.Kind == "StatefulSet" && o.tm.APIVersion == "apps/v1":
		var d appsv1.StatefulSet
		if err := strictJSON(o.json, &d); err != nil {
			return nil, true, err
		}
		w := pod(d.ObjectMeta, d.Spec.Template.Spec)
		w.replicas = d.Spec.Replicas
		w.role = cmp.Or(w.role, roleOfLabels(d.Spec.Template.Labels), roleOfName(d.Name))
		return []workload{w}, true, nil
	case o.tm.Kind == "LeaderWorkerSet" && strings.HasPrefix(o.tm.APIVersion, "leaderworkerset.x-k8s.io/"):
		var l leaderWorkerSet
		if err := strictJSON(o.json, &l); err != nil {
			return nil, true, err
		}
		// The worker template's grace; the leader's env counts too.
		w := pod(l.ObjectMeta, l.Spec.LeaderWorkerTemplate.WorkerTemplate.Spec)
		w.replicas = l.Spec.Replicas
		w.role = cmp.Or(w.role, roleOfLabels(l.Spec.LeaderWorkerTemplate.WorkerTemplate.Labels), roleOfName(l.Name))
		if lt := l.Spec.LeaderWorkerTemplate.LeaderTemplate; lt != nil {
			w.env = append(w.env, pod(l.ObjectMeta, lt.Spec).env...)
		}
		return []workload{w}, true, nil
	case o.tm.Kind == "DynamoGraphDeployment":
		var d dynamoGraphDeployment
		if err := jsonLenient(o.json, &d); err != nil {
			return nil, true, err
		}
		names := make([]string, 0, len(d.Spec.Services))
		for n := range d.Spec.Services {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			s := d.Spec.Services[n]
			if s == nil {
				continue
			}
			r := ref
			r.Name, r.Namespace, r.Service = d.Name, d.Namespace, n
			w := workload{path: fmt.Sprintf("%s (DynamoGraphDeployment %q) spec.services.%s", o.path, d.Name, n), ref: r,
				worker: strings.EqualFold(s.ComponentType, "worker"), replicas: s.Replicas, role: roleOfService(s.SubComponentType, n)}
			for _, e := range slices.Concat(d.Spec.Envs, s.Envs) {
				if e.Name == MigrationLimitEnv {
					w.env = append(w.env, migrationEnv{value: e.Value})
				}
			}
			if x := s.ExtraPodSpec; x != nil {
				w.grace = x.TerminationGracePeriodSeconds
				if c := x.MainContainer; c != nil {
					w.sglang = strings.Contains(strings.ToLower(strings.Join(slices.Concat([]string{c.Image}, c.Command, c.Args), " ")), "sglang")
					for _, e := range c.Env {
						if e.Name == MigrationLimitEnv {
							w.env = append(w.env, migrationEnv{container: c.Name, value: e.Value})
						}
					}
				}
			}
			ws = append(ws, w)
		}
		return ws, true, nil
	}
	return nil, false, nil
}

// readWorkloads takes the grace from the autoscaler's target (or a Dynamo worker service) and
// the migration limit from any container; disagreeing workloads are named and the first wins.
func (im *Imported) readWorkloads(ws []workload, target WorkloadRef) {
	var grace, limit *workload
	var limitValue int
	for i := range ws {
		w := &ws[i]
		isTarget := scales(target, w.ref)
		dynamoWorker := w.worker && w.ref.Name == target.Name && w.ref.Kind == target.Kind
		if w.replicas != nil && (isTarget || dynamoWorker) && im.Workers == nil {
			n := int(*w.replicas)
			im.Workers, im.WorkersFrom = &n, w.path+" replicas"
		}
		if w.grace != nil && (isTarget || w.worker) {
			switch {
			case *w.grace < 0:
				im.problem(w.path+" terminationGracePeriodSeconds", "must be 0 or more (got %d); left out", *w.grace)
			case grace == nil:
				grace = w
				g := float64(*w.grace) * 1000
				im.Autoscaler.GraceMS = &g
				im.fill("autoscaler.grace_ms")
			case *grace.grace != *w.grace:
				im.problem(w.path+" terminationGracePeriodSeconds", "%d s, but %s has %d s; the first is used", *w.grace, grace.path, *grace.grace)
			}
		}
		for _, e := range w.env {
			n, err := strconv.Atoi(strings.TrimSpace(e.value))
			if err != nil || n < 0 {
				im.problem(w.path+" env "+MigrationLimitEnv, "%q is not a whole number of 0 or more; left out", e.value)
				continue
			}
			switch {
			case limit == nil:
				limit, limitValue = w, n
				im.MigrationLimit = &n
				im.fill("router.migration_limit")
				if im.Origin != nil {
					r := w.ref
					r.Container = e.container
					im.Origin.Migration = &r
				}
			case n != limitValue:
				im.problem(w.path+" env "+MigrationLimitEnv, "%d, but %s sets %d; the first is used", n, limit.path, limitValue)
			}
		}
	}
	if grace != nil && im.Origin != nil {
		r := grace.ref
		im.Origin.Grace = &r
	}
}
