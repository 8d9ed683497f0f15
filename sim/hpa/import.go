package hpa

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/scalein-planner/scalein/sim"
)

// MaxManifestBytes bounds what Import reads.
const MaxManifestBytes = 1 << 20

// Kubernetes' defaults where an HPA leaves a field out (the model shares the windows and the
// tolerance).
const (
	k8sTolerance = 0.1
)

// maxTarget is the largest target the scenario accepts.
const maxTarget = 1e9

// Problem is a part of a manifest the model cannot represent, and what Import did about it.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// Imported is what a manifest gave: the autoscaler (the fields it covers set, the others as in
// the autoscaler passed to Import), the migration limit when a workload sets
// DYN_MIGRATION_LIMIT, the scenario fields it filled (each once), what it could not represent,
// and the user's objects (Origin) so that Export writes them back under their own names.
type Imported struct {
	Autoscaler     sim.Autoscaler `json:"autoscaler"`
	MigrationLimit *int           `json:"migration_limit"`
	Filled         []string       `json:"filled"`
	Problems       []Problem      `json:"problems"`
	Origin         *Origin        `json:"origin"`
	// Workers is how many replicas the operator's night starts with: the scaled workload's
	// replicas, else the HPA's status.currentReplicas (nil when the file says neither);
	// WorkersFrom names where it was read.
	Workers     *int   `json:"workers,omitempty"`
	WorkersFrom string `json:"workers_from,omitempty"`
	// Pools is set when the file scales a prefill and a decode pool (pools.go): each pool's
	// own import; Autoscaler and Origin above are then unused (Origin nil).
	Pools *Pools `json:"pools,omitempty"`
	// Scaler names the autoscaler object read (kind and name); empty for a pool no autoscaler
	// of the file scales.
	Scaler string `json:"scaler,omitempty"`
	// Autoscalers lists the stream's autoscalers in order when it holds more than one (nil
	// otherwise), the one read marked Used: a page offers them as a choice (ImportOptions.Select).
	Autoscalers []AutoscalerName `json:"autoscalers,omitempty"`
}

// AutoscalerName is one autoscaler of a stream: its kind and metadata.name, and whether it is
// the one read.
type AutoscalerName struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Used bool   `json:"used,omitempty"`
}

// Origin is the user's autoscaler object as imported and the workloads its settings came from:
// Export replaces only the fields the model holds in it.
type Origin struct {
	// Kind is HorizontalPodAutoscaler or ScaledObject; Document is the object as JSON (an
	// autoscaling/v2beta2 HPA converted to v2), without its status.
	Kind     string          `json:"kind"`
	Document json.RawMessage `json:"document"`
	// MetricIndex is the spec.metrics or spec.triggers entry used; Metric and Aggregate are
	// what it read as, so that Export keeps the name and query while they stay the same.
	MetricIndex int    `json:"metric_index"`
	Metric      string `json:"metric"`
	Aggregate   string `json:"aggregate,omitempty"`
	// Grace and Migration are the workloads terminationGracePeriodSeconds and
	// DYN_MIGRATION_LIMIT were read from (nil when none).
	Grace     *WorkloadRef `json:"grace,omitempty"`
	Migration *WorkloadRef `json:"migration,omitempty"`
	// Name and Namespace are the object's; Target is the workload it scales.
	Name      string      `json:"name,omitempty"`
	Namespace string      `json:"namespace,omitempty"`
	Target    WorkloadRef `json:"target"`
	// Manifest is the whole file as imported: Export writes the settings into it (ExportOnto),
	// keeping everything else byte for byte.
	Manifest string `json:"manifest,omitempty"`
}

// ImportOptions choose among the autoscalers of a stream.
type ImportOptions struct {
	// Select names the autoscaler to read (metadata.name) when the stream holds several;
	// empty: the first one the model can use.
	Select string
	// WholeFile keeps the whole file in the origin whatever its size (within MaxManifestBytes),
	// for a caller that stores no origin (the CLI edits the file on disk); without it, a file
	// over MaxOriginManifestBytes is not kept, as a server stores what it keeps.
	WholeFile bool
	// Prefill and Decode are the autoscalers a P/D import fills per pool (nil: the base
	// passed to ImportWith).
	Prefill, Decode *sim.Autoscaler
}

// WorkloadRef names a workload (and, for the migration limit, its container; for a
// DynamoGraphDeployment, its service).
type WorkloadRef struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	Container  string `json:"container,omitempty"`
	Service    string `json:"service,omitempty"`
}

// Import reads a stream of YAML or JSON documents (HPAs of autoscaling/v2 or v2beta2, KEDA
// ScaledObjects, Lists of them, and the Deployments, StatefulSets, LeaderWorkerSets and
// DynamoGraphDeployments that carry the workers' grace and migration limit) into autoscaler
// settings on top of base. It fails when there is no usable autoscaler or a field is outside
// what Kubernetes itself accepts; the message names the document and the field.
func Import(data []byte, base sim.Autoscaler) (*Imported, error) {
	return ImportWith(data, base, ImportOptions{})
}

// ImportWith is Import choosing the autoscaler by opt.Select. Without it, the autoscalers of
// the stream are tried in order and the first the model can use is read; the others are named
// in Problems (with the reason one could not be used).
func ImportWith(data []byte, base sim.Autoscaler, opt ImportOptions) (*Imported, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("the manifest is %d bytes; at most %d", len(data), MaxManifestBytes)
	}
	objs, err := objects(data)
	if err != nil {
		return nil, err
	}
	im := &Imported{Autoscaler: base, Filled: []string{}, Problems: []Problem{}}
	var scalers []scaler
	var loads []workload
	for _, o := range objs {
		s, w, err := im.decode(o)
		if err != nil {
			return nil, err
		}
		if s != nil {
			scalers = append(scalers, *s)
		}
		loads = append(loads, w...)
	}
	scalers = im.dropGenerated(scalers)
	setRoles(scalers, loads)
	if len(scalers) == 0 {
		msg := "no autoscaler in the manifest: import an autoscaling/v2 HorizontalPodAutoscaler or a KEDA ScaledObject (kubectl get hpa NAME -o yaml, kubectl get scaledobject NAME -o yaml)"
		if len(im.Problems) > 0 {
			msg += " (" + joinProblems(im.Problems) + ")"
		}
		return nil, errors.New(msg)
	}
	var all []AutoscalerName
	if len(scalers) > 1 {
		for _, s := range scalers {
			all = append(all, AutoscalerName{Kind: s.kind, Name: s.name})
		}
	}
	if opt.Select != "" {
		var names []string
		var picked []scaler
		for _, s := range scalers {
			names = append(names, fmt.Sprintf("%s %q", s.kind, s.name))
			if s.name == opt.Select {
				picked = append(picked, s)
			}
		}
		if len(picked) == 0 {
			return nil, fmt.Errorf("select %q: no autoscaler of that name in the manifest (it has %s)", opt.Select, strings.Join(names, ", "))
		}
		for _, s := range scalers {
			if s.name != opt.Select {
				im.problem(s.path, "another autoscaler (%s %q): not read, %q was selected", s.kind, s.name, opt.Select)
			}
		}
		scalers = picked // several of that name (an HPA and a ScaledObject): the first usable
	}
	if opt.Select == "" && isPools(scalers, loads) {
		return im.importPools(data, scalers, loads, base, opt)
	}
	chosen, used, err := im.pick(scalers, base)
	if err != nil {
		return nil, err
	}
	chosen.finish(used, data, loads, opt)
	for i := range all {
		all[i].Used = all[i].Kind == used.kind && all[i].Name == used.name
	}
	chosen.Autoscalers = all
	return chosen, nil
}

// pick reads the first autoscaler of scalers the model can use, on top of base; the problems
// of im come first in its Problems, and the scalers it passed over are named.
func (im *Imported) pick(scalers []scaler, base sim.Autoscaler) (*Imported, scaler, error) {
	var chosen *Imported
	var used scaler
	var firstErr error
	var unusable []string
	for _, s := range scalers {
		if chosen != nil {
			chosen.problem(s.path, "another autoscaler (%s %q): not read, the first the model can use (%s %q) is; choose it by its name (scalein import -select %s)", s.kind, s.name, used.kind, used.name, s.name)
			continue
		}
		try := &Imported{Autoscaler: base, Filled: []string{}, Problems: slices.Clone(im.Problems)}
		if err := s.read(try); err != nil {
			err = fmt.Errorf("%s (%s %q): %w", s.path, s.kind, s.name, err)
			firstErr = cmpErr(firstErr, err)
			unusable = append(unusable, err.Error())
			continue
		}
		chosen, used = try, s
	}
	if chosen == nil {
		if len(unusable) > 1 {
			return nil, used, fmt.Errorf("no autoscaler in the manifest the model can use: %s", strings.Join(unusable, "; "))
		}
		return nil, used, firstErr
	}
	for _, u := range unusable {
		chosen.problem(used.path, "read instead of an earlier autoscaler the model cannot use: %s", u)
	}
	return chosen, used, nil
}

// finish completes an import of the autoscaler used: its names, the whole file (opt.WholeFile,
// else up to MaxOriginManifestBytes), the workloads (those of the other role left out when it
// scales one pool) and the starting replicas.
func (im *Imported) finish(used scaler, data []byte, loads []workload, opt ImportOptions) {
	im.Scaler = fmt.Sprintf("%s %q", used.kind, used.name)
	if im.Origin != nil { // nil when the object was too large to keep (keepOrigin)
		im.Origin.Name, im.Origin.Namespace, im.Origin.Target = used.name, used.namespace, used.target
		if opt.WholeFile || len(data) <= MaxOriginManifestBytes {
			im.Origin.Manifest = string(data)
		} else {
			im.problem("", "the file is %s, above the %s a plan keeps of it; a tune plan's download writes the settings into the %s alone, not into this file",
				kib(len(data)), kib(MaxOriginManifestBytes), im.Origin.Kind)
		}
	}
	im.readWorkloads(ofRole(loads, used.role), used.target)
	if used.current > 0 {
		n := int(used.current)
		switch {
		case im.Workers == nil:
			im.Workers, im.WorkersFrom = &n, fmt.Sprintf("%s (%s %q) status.currentReplicas", used.path, used.kind, used.name)
		case *im.Workers != n:
			im.problem(used.path+" status.currentReplicas", "%d, but %s is %d; the workload's replicas are used", n, im.WorkersFrom, *im.Workers)
		}
	}
}

// scaler is an autoscaler object of the input.
type scaler struct {
	path, kind, name, namespace string
	target                      WorkloadRef
	// generatedBy names the ScaledObject that made this HPA ("" for one written by hand).
	generatedBy string
	// current is an HPA's status.currentReplicas (0: not in the file).
	current int32
	// labels are the object's; role is the pool it scales ("" when it does not say, pools.go).
	labels map[string]string
	role   string
	read   func(im *Imported) error
}

// decode reads one object strictly: an autoscaler, workloads, or a problem naming what it is.
func (im *Imported) decode(o object) (*scaler, []workload, error) {
	kind, apiVersion := o.tm.Kind, o.tm.APIVersion
	fail := func(err error) (*scaler, []workload, error) {
		if hasMarks(o.json) {
			if terr := templateError(o.doc); terr != nil {
				return nil, nil, terr
			}
		}
		return nil, nil, fmt.Errorf("%s (%s): %v", o.path, kind, err)
	}
	switch {
	case kind == "HorizontalPodAutoscaler" && (apiVersion == "autoscaling/v2" || apiVersion == "autoscaling/v2beta2"):
		var h autoscalingv2.HorizontalPodAutoscaler
		// v2beta2 (no longer in k8s.io/api) has v2's fields but tolerance, so v2's type decodes it.
		if err := strictJSON(o.json, &h); err != nil {
			return fail(err)
		}
		if err := readMarks(o, h.Name, h.Namespace, h.Spec); err != nil {
			return nil, nil, err
		}
		if apiVersion == "autoscaling/v2beta2" {
			if b := h.Spec.Behavior; b != nil && ((b.ScaleUp != nil && b.ScaleUp.Tolerance != nil) || (b.ScaleDown != nil && b.ScaleDown.Tolerance != nil)) {
				return fail(errors.New("spec.behavior tolerance is an autoscaling/v2 field (Kubernetes 1.33+), not v2beta2: write apiVersion autoscaling/v2"))
			}
			h.APIVersion = "autoscaling/v2"
		}
		s := &scaler{path: o.path, kind: kind, name: h.Name, namespace: h.Namespace,
			target: WorkloadRef{APIVersion: h.Spec.ScaleTargetRef.APIVersion, Kind: h.Spec.ScaleTargetRef.Kind, Name: h.Spec.ScaleTargetRef.Name, Namespace: h.Namespace}}
		s.current = h.Status.CurrentReplicas
		s.labels = h.Labels
		for _, ref := range h.OwnerReferences {
			if ref.Kind == "ScaledObject" {
				s.generatedBy = ref.Name
			}
		}
		if n := h.Labels["scaledobject.keda.sh/name"]; n != "" {
			s.generatedBy = n
		}
		s.read = func(im *Imported) error { return im.readHPA(&h) }
		return s, nil, nil
	case kind == "HorizontalPodAutoscaler":
		im.problem(o.path, "apiVersion %q: only autoscaling/v2 and v2beta2 HPAs are read (autoscaling/v1 scales on CPU only); write it as autoscaling/v2 with a Pods metric", apiVersion)
	case kind == "ScaledObject" && strings.HasPrefix(apiVersion, "keda.sh/"):
		var so scaledObject
		if err := strictJSON(o.json, &so); err != nil {
			return fail(err)
		}
		if err := readMarks(o, so.Name, so.Namespace, so.Spec); err != nil {
			return nil, nil, err
		}
		s := &scaler{path: o.path, kind: kind, name: so.Name, namespace: so.Namespace, labels: so.Labels}
		if ref := so.Spec.ScaleTargetRef; ref != nil {
			s.target = WorkloadRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, Namespace: so.Namespace}
			if s.target.Kind == "" {
				s.target.Kind = "Deployment" // KEDA's default
			}
		}
		s.read = func(im *Imported) error { return im.readScaledObject(&so) }
		return s, nil, nil
	case kind == "":
		im.problem(o.path, "has no kind; left out")
	default:
		w, known, err := decodeWorkload(o)
		if err != nil {
			return fail(err)
		}
		if !known {
			im.problem(o.path, "%s", notAnAutoscaler(kind, apiVersion))
		}
		return nil, w, nil
	}
	return nil, nil, nil
}

// notAnAutoscaler says what to import instead of an object of another kind.
func notAnAutoscaler(kind, apiVersion string) string {
	switch kind {
	case "PodAutoscaler":
		return fmt.Sprintf("kind PodAutoscaler (%s) is AIBrix's autoscaler, which the model does not simulate; left out. With its HPA strategy, import the HPA it creates (kubectl get hpa -o yaml)", apiVersion)
	case "InferenceService":
		return fmt.Sprintf("kind InferenceService (%s) is KServe's; left out. Import the HPA or KEDA ScaledObject KServe creates for it (kubectl get hpa,scaledobject -o yaml)", apiVersion)
	case "ScaledJob":
		return "kind ScaledJob scales Jobs, not serving workers; left out"
	}
	return fmt.Sprintf("kind %s (%s) is not used: only HorizontalPodAutoscalers, KEDA ScaledObjects, and the Deployments, StatefulSets, LeaderWorkerSets and DynamoGraphDeployments that carry the grace and DYN_MIGRATION_LIMIT are read", kind, apiVersion)
}

// dropGenerated leaves out the HPAs KEDA made from a ScaledObject that is in the input too.
func (im *Imported) dropGenerated(ss []scaler) []scaler {
	objects := map[string]bool{}
	for _, s := range ss {
		if s.kind == "ScaledObject" {
			objects[s.name] = true
		}
	}
	var out []scaler
	for _, s := range ss {
		if s.generatedBy != "" && objects[s.generatedBy] {
			im.problem(s.path, "HPA %q was generated by KEDA from ScaledObject %q, which is read instead", s.name, s.generatedBy)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (im *Imported) problem(path, format string, a ...any) {
	im.Problems = append(im.Problems, Problem{Path: path, Message: fmt.Sprintf(format, a...)})
}

// fill records a filled scenario field, once.
func (im *Imported) fill(field string) {
	for _, f := range im.Filled {
		if f == field {
			return
		}
	}
	im.Filled = append(im.Filled, field)
}

func joinProblems(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// replicas reads min and max replicas.
func (im *Imported) replicas(minR *int32, maxR int32, minPath, maxPath string) error {
	a := &im.Autoscaler
	if maxR < 1 {
		return fmt.Errorf("%s: must be at least 1 (got %d)", maxPath, maxR)
	}
	a.MinWorkers = 1 // Kubernetes' default
	if minR != nil {
		if *minR < 1 {
			return fmt.Errorf("%s: must be at least 1: the model never scales to zero (got %d)", minPath, *minR)
		}
		a.MinWorkers = int(*minR)
	}
	if a.MinWorkers > int(maxR) {
		return fmt.Errorf("%s %d is above %s %d", minPath, a.MinWorkers, maxPath, maxR)
	}
	a.MaxWorkers = int(maxR)
	im.fill("autoscaler.min_workers")
	im.fill("autoscaler.max_workers")
	return nil
}

// readHPA fills what an HPA covers.
func (im *Imported) readHPA(h *autoscalingv2.HorizontalPodAutoscaler) error {
	s := h.Spec
	if err := im.replicas(s.MinReplicas, s.MaxReplicas, "spec.minReplicas", "spec.maxReplicas"); err != nil {
		return err
	}
	used, err := im.readMetrics(s.Metrics)
	if err != nil {
		return err
	}
	if err := im.readBehavior(s.Behavior, "spec.behavior"); err != nil {
		return err
	}
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	im.trimMeta(&h.ObjectMeta)
	doc, err := json.Marshal(h)
	if err != nil {
		return err
	}
	im.keepOrigin(&Origin{Kind: "HorizontalPodAutoscaler", Document: doc, MetricIndex: used, Metric: im.Autoscaler.Metric, Aggregate: im.Autoscaler.Aggregate})
	return nil
}

// readBehavior takes a behavior whole (docs/model.md#autoscaler); no behavior stays no behavior (the legacy
// path). The cluster's tolerance is Kubernetes' default.
func (im *Imported) readBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, path string) error {
	a := &im.Autoscaler
	a.ScaleDownWindowMS, a.ScaleUpWindowMS = nil, nil
	a.MaxRemovePerTick, a.MaxAddPerTick = sim.PerTick{}, sim.PerTick{}
	a.Behavior = nil
	if b != nil {
		up, err := im.rules(b.ScaleUp, path+".scaleUp")
		if err != nil {
			return err
		}
		down, err := im.rules(b.ScaleDown, path+".scaleDown")
		if err != nil {
			return err
		}
		a.Behavior = &sim.Behavior{ScaleUp: up, ScaleDown: down}
	}
	im.fill("autoscaler.behavior")
	a.Tolerance = k8sTolerance
	im.fill("autoscaler.tolerance")
	return nil
}

// readMetrics takes the target from the first metric the model can use (a Pods or External
// metric with an AverageValue target) and names every other metric. It returns the index used.
func (im *Imported) readMetrics(ms []autoscalingv2.MetricSpec) (int, error) {
	if len(ms) == 0 {
		return 0, errors.New("spec.metrics: none, so Kubernetes scales on CPU (80 % utilisation), which the model cannot represent; add a Pods metric with an averageValue target (" + knownNames() + ")")
	}
	used := -1
	var firstErr error
	for i, m := range ms {
		path := fmt.Sprintf("spec.metrics[%d]", i)
		var id autoscalingv2.MetricIdentifier
		var target autoscalingv2.MetricTarget
		source := sim.SourcePods
		switch {
		case m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil:
			id, target, path = m.Pods.Metric, m.Pods.Target, path+".pods"
		case m.Type == autoscalingv2.ExternalMetricSourceType && m.External != nil:
			id, target, path, source = m.External.Metric, m.External.Target, path+".external", sim.SourceExternal
		default:
			what := string(m.Type)
			if m.Resource != nil {
				what += " (" + string(m.Resource.Name) + ")"
			}
			if m.ContainerResource != nil {
				what += " (" + string(m.ContainerResource.Name) + ")"
			}
			im.problem(path, "a %s metric: the model scales on one Pods or External metric of vLLM (requests or KV-cache usage), not on CPU, memory or object metrics; left out", what)
			continue
		}
		if used >= 0 {
			im.problem(path, "another metric (%s): the model scales on one metric; only spec.metrics[%d] is used", id.Name, used)
			continue
		}
		metric, err := metricOfName(id.Name)
		if err != nil && strings.HasPrefix(id.Name, "s") && strings.Contains(id.Name, "-prometheus") {
			err = fmt.Errorf("%q is a metric KEDA generated for a ScaledObject's Prometheus trigger; the query is in the ScaledObject: import it (kubectl get scaledobject -o yaml) instead of this HPA", id.Name)
		}
		if err != nil {
			im.problem(path+".metric.name", "%v; left out", err)
			firstErr = cmpErr(firstErr, fmt.Errorf("%s.metric.name: %w", path, err))
			continue
		}
		if target.Type == autoscalingv2.ValueMetricType && source == sim.SourceExternal {
			err := fmt.Errorf("%s.target.type: Value compares the metric's whole value with the target and scales the current replicas by their ratio (ceil(current × value / target)); the model's external source is AverageValue (ceil(value / target)): write type AverageValue with averageValue = the per-worker value", path)
			im.problem(path+".target.type", "%v; left out", err)
			firstErr = cmpErr(firstErr, err)
			continue
		}
		if target.Type != autoscalingv2.AverageValueMetricType || target.AverageValue == nil {
			err := fmt.Errorf("%s.target: type %s: the model's target is an averageValue per pod", path, target.Type)
			im.problem(path+".target", "type %s: the model's target is an averageValue per pod; left out", target.Type)
			firstErr = cmpErr(firstErr, err)
			continue
		}
		v, err := im.readTarget(target.AverageValue.AsApproximateFloat64(), target.AverageValue.String(), metric, path+".target.averageValue")
		if err != nil {
			return 0, err
		}
		a := &im.Autoscaler
		a.Metric, a.Target, a.Source, a.Aggregate = metric, v, source, ""
		if source == sim.SourceExternal {
			a.Aggregate = sim.AggregateSum
			im.problem(path, "an External metric's name does not say how it aggregates the workers: read as the sum over workers (aggregate sum); import the KEDA ScaledObject or adapter rule with the query to read it")
		}
		if id.Selector != nil {
			im.problem(path+".metric.selector", "the model reads one fleet; the selector is kept on export but not simulated")
		}
		used = i
	}
	if used < 0 {
		if firstErr != nil {
			return 0, firstErr
		}
		return 0, fmt.Errorf("spec.metrics: no Pods or External metric with an averageValue target the model can use (%s)", joinProblems(im.Problems))
	}
	im.fill("autoscaler.metric")
	im.fill("autoscaler.source")
	im.fill("autoscaler.target")
	return used, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// readTarget checks a target against what the model reads: above 0, at most maxTarget, a
// fraction for kv_usage, in milli-units (rounded with a note).
func (im *Imported) readTarget(v float64, text, metric, path string) (float64, error) {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0, fmt.Errorf("%s: must be above 0 (got %s)", path, text)
	case math.IsInf(v, 0) || v > maxTarget:
		return 0, fmt.Errorf("%s: %s is too large: the model reads targets up to %g", path, text, float64(maxTarget))
	case metric == sim.MetricKVUsage && v > 1:
		return 0, fmt.Errorf("%s: %s looks like a percentage: the KV-cache usage target is a fraction, %s; write %s", path, text, fracOf(v), fracOf(v))
	}
	milli := math.Round(v * 1000)
	if milli < 1 {
		return 0, fmt.Errorf("%s: %s is below 0.001 (1m), the smallest target the controller reads (it reads targets in milli-units)", path, text)
	}
	r := milli / 1000
	if math.Abs(r-v) > 1e-12*math.Max(1, v) {
		im.problem(path, "%s rounded to %s: the controller reads targets in milli-units", text, strconv.FormatFloat(r, 'f', -1, 64))
	}
	return r, nil
}

func fracOf(percent float64) string { return strconv.FormatFloat(percent/100, 'f', -1, 64) }

// rules reads one direction of a behavior, in ms, keeping what is unset unset (Kubernetes'
// defaults are filled by the controller). Values Kubernetes itself refuses are errors.
func (im *Imported) rules(r *autoscalingv2.HPAScalingRules, path string) (*sim.ScalingRules, error) {
	if r == nil {
		return nil, nil
	}
	out := &sim.ScalingRules{}
	if w := r.StabilizationWindowSeconds; w != nil {
		if *w < 0 || *w > sim.MaxBehaviorWindowMS/1000 {
			return nil, fmt.Errorf("%s.stabilizationWindowSeconds: Kubernetes requires 0 to 3600 (got %d)", path, *w)
		}
		ms := int64(*w) * 1000
		out.WindowMS = &ms
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
			return nil, fmt.Errorf("%s.selectPolicy: %q is not Max, Min or Disabled", path, *sp)
		}
	}
	if len(r.Policies) > sim.MaxPolicies {
		return nil, fmt.Errorf("%s.policies: %d policies; Kubernetes allows at most %d", path, len(r.Policies), sim.MaxPolicies)
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
			return nil, fmt.Errorf("%s.type: %q is not Pods or Percent", pp, p.Type)
		}
		if p.Value < 1 {
			return nil, fmt.Errorf("%s.value: Kubernetes requires at least 1 (got %d); to stop scaling in this direction write selectPolicy: Disabled", pp, p.Value)
		}
		if p.PeriodSeconds < 1 || p.PeriodSeconds > sim.MaxPolicyPeriodMS/1000 {
			return nil, fmt.Errorf("%s.periodSeconds: Kubernetes requires 1 to 1800 (got %d)", pp, p.PeriodSeconds)
		}
		out.Policies = append(out.Policies, sim.ScalingPolicy{Type: typ, Value: int(p.Value), PeriodMS: int64(p.PeriodSeconds) * 1000})
	}
	if r.Tolerance != nil {
		v := r.Tolerance.AsApproximateFloat64()
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e6 {
			return nil, fmt.Errorf("%s.tolerance: must be 0 or more and not too large (got %s)", path, r.Tolerance.String())
		}
		out.Tolerance = &v
	}
	return out, nil
}

// readScaledObject fills what a KEDA ScaledObject covers: its one Prometheus trigger (the
// query's outer aggregation and series), threshold, replica bounds and the behavior of
// advanced.horizontalPodAutoscalerConfig. KEDA's own features the model has no counterpart
// for are named.
func (im *Imported) readScaledObject(so *scaledObject) error {
	s := so.Spec
	if s.ScaleTargetRef == nil || s.ScaleTargetRef.Name == "" {
		return errors.New("spec.scaleTargetRef.name: required (the workload KEDA scales)")
	}
	if s.MinReplicaCount != nil && *s.MinReplicaCount == 0 {
		im.problem("spec.minReplicaCount", "0 (scale to zero on activation): the model never scales to zero; read as 1")
		one := int32(1)
		s.MinReplicaCount = &one
	}
	maxR := int32(100) // KEDA's default maxReplicaCount
	if s.MaxReplicaCount != nil {
		maxR = *s.MaxReplicaCount
	} else {
		im.problem("spec.maxReplicaCount", "not set: KEDA's default 100 is used")
	}
	if err := im.replicas(s.MinReplicaCount, maxR, "spec.minReplicaCount", "spec.maxReplicaCount"); err != nil {
		return err
	}
	for _, f := range []struct {
		v    *int32
		path string
		what string
	}{{s.CooldownPeriod, "spec.cooldownPeriod", "only applies to scaling to and from zero"},
		{s.PollingInterval, "spec.pollingInterval", "is how often KEDA checks activation; the HPA's sync period (interval_ms) decides the scaling"},
		{s.InitialCooldownPeriod, "spec.initialCooldownPeriod", "only applies to scaling to zero"},
		{s.IdleReplicaCount, "spec.idleReplicaCount", "is a replica count when idle, which the model has not"}} {
		if f.v != nil {
			im.problem(f.path, "%d %s; not simulated", *f.v, f.what)
		}
	}
	if s.Fallback != nil {
		im.problem("spec.fallback", "replicas when the metric fails: the model's metrics never fail; not simulated")
	}
	if len(s.Triggers) == 0 {
		return errors.New("spec.triggers: none; add a prometheus trigger on a vLLM series (" + knownNames() + ")")
	}
	if len(s.Triggers) > maxTriggers {
		return fmt.Errorf("spec.triggers: %d triggers; at most %d are read (the model scales on one metric); keep the prometheus trigger on a vLLM series", len(s.Triggers), maxTriggers)
	}
	used := -1
	var firstErr error
	for i, t := range s.Triggers {
		path := fmt.Sprintf("spec.triggers[%d]", i)
		if used >= 0 {
			im.problem(path, "another trigger (%s): the model scales on one metric; only spec.triggers[%d] is used", t.Type, used)
			continue
		}
		if err := im.readTrigger(t, path); err != nil {
			im.problem(path, "%v; left out", err)
			firstErr = cmpErr(firstErr, fmt.Errorf("%s: %w", path, err))
			continue
		}
		used = i
	}
	if used < 0 {
		return firstErr
	}
	if adv := s.Advanced; adv != nil {
		if adv.ScalingModifiers != nil {
			im.problem("spec.advanced.scalingModifiers", "a formula over triggers is not simulated; the trigger's own value is used")
		}
		var b *autoscalingv2.HorizontalPodAutoscalerBehavior
		if adv.HorizontalPodAutoscalerConfig != nil {
			b = adv.HorizontalPodAutoscalerConfig.Behavior
		}
		if err := im.readBehavior(b, "spec.advanced.horizontalPodAutoscalerConfig.behavior"); err != nil {
			return err
		}
	} else if err := im.readBehavior(nil, ""); err != nil {
		return err
	}
	so.Status = nil
	im.trimMeta(&so.ObjectMeta)
	doc, err := json.Marshal(so)
	if err != nil {
		return err
	}
	im.keepOrigin(&Origin{Kind: "ScaledObject", Document: doc, MetricIndex: used, Metric: im.Autoscaler.Metric, Aggregate: im.Autoscaler.Aggregate})
	return nil
}

// readTrigger reads a prometheus trigger into an external source.
func (im *Imported) readTrigger(t kedaTrigger, path string) error {
	if t.Type != "prometheus" {
		return fmt.Errorf("a %s trigger: the model reads a prometheus trigger on a vLLM series", t.Type)
	}
	switch t.MetricType {
	case "", autoscalingv2.AverageValueMetricType:
	case autoscalingv2.ValueMetricType:
		return errors.New("metricType Value: the HPA compares the query's whole value with the threshold and scales the current replicas by their ratio (ceil(current × value / threshold)), which the model cannot represent; use AverageValue (the default: ceil(value / threshold))")
	default:
		return fmt.Errorf("metricType %s: a prometheus trigger's target is AverageValue", t.MetricType)
	}
	q, err := readQuery(t.Metadata["query"])
	if err != nil {
		return fmt.Errorf("metadata.query: %w", err)
	}
	thr, err := strconv.ParseFloat(strings.TrimSpace(t.Metadata["threshold"]), 64)
	if err != nil {
		return fmt.Errorf("metadata.threshold: %q is not a number; the per-worker target is required", t.Metadata["threshold"])
	}
	v, err := im.readTarget(thr, t.Metadata["threshold"], q.metric, "metadata.threshold")
	if err != nil {
		return err
	}
	for _, n := range q.notes {
		im.problem(path+".metadata.query", "%s", n)
	}
	if at := t.Metadata["activationThreshold"]; at != "" {
		im.problem(path+".metadata.activationThreshold", "%s only applies to scaling to and from zero; not simulated", at)
	}
	a := &im.Autoscaler
	a.Metric, a.Target, a.Source, a.Aggregate = q.metric, v, sim.SourceExternal, q.aggregate
	im.fill("autoscaler.metric")
	im.fill("autoscaler.source")
	im.fill("autoscaler.aggregate")
	im.fill("autoscaler.target")
	return nil
}

// quantity is v as a Kubernetes quantity.
func quantity(v float64) (resource.Quantity, error) {
	return resource.ParseQuantity(strconv.FormatFloat(v, 'f', -1, 64))
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
