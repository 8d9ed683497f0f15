package hpa

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// HeaderPrefix starts the one comment Export adds to the user's file; a file that starts with
// it gets its header replaced, so exporting onto an export gives the same bytes.
const HeaderPrefix = "# Scale-in Planner"

// k8sGraceS is Kubernetes' terminationGracePeriodSeconds when a pod spec leaves it out.
const k8sGraceS = 30

// Exported is the user's file with the settings written into it.
type Exported struct {
	Data []byte
	// Changed names each field written, as "path: old → new"; empty when the settings are
	// the file's own.
	Changed []string
	// Notes are what the file cannot hold (the decision interval, a grace of null, …).
	Notes []string
}

// ExportOnto writes the settings into the user's own file (s.Origin.Manifest): the same
// documents in the same order, with their comments, key order and quoting; only the fields
// whose value differs from what the file says are changed (a missing field is added with the
// file's indentation; Kubernetes' defaults are never written out), workloads are touched only
// when the grace or the migration limit changed, and one header comment is added (none in a
// JSON file, which has no comments). It compares the settings with what Import reads from the
// file, so an unchanged scenario gives the file back as it was.
func ExportOnto(s Settings) (*Exported, error) {
	o := s.Origin
	if o == nil || o.Manifest == "" {
		return nil, fmt.Errorf("hpa: no imported file to write into")
	}
	a := s.Autoscaler
	if a.Target <= 0 || a.MinWorkers < 1 || a.MaxWorkers < a.MinWorkers || a.IntervalMS <= 0 {
		return nil, fmt.Errorf("hpa: the autoscaler is incomplete (target %v, min_workers %d, max_workers %d, interval_ms %v); pass one Parse filled", a.Target, a.MinWorkers, a.MaxWorkers, a.IntervalMS)
	}
	src := []byte(o.Manifest)
	// What the file says: Import on top of the new settings, with Kubernetes' grace where the
	// file sets none.
	base := a
	g := float64(k8sGraceS * 1000)
	base.GraceMS = &g
	old, err := ImportWith(src, base, ImportOptions{Select: o.Name})
	if err != nil {
		return nil, fmt.Errorf("hpa: the imported file no longer reads: %w", err)
	}
	f, err := parseYAMLFile(src)
	if err != nil {
		return nil, fmt.Errorf("hpa: the imported file: %w", err)
	}
	e := &ontoEdit{f: f, s: s, old: old}
	objs := f.objects()
	var scaler *yobj
	for i := range objs {
		if objs[i].kind == old.Origin.Kind && objs[i].name == old.Origin.Name && objs[i].namespace == old.Origin.Namespace {
			scaler = &objs[i]
			break
		}
	}
	if scaler == nil {
		return nil, fmt.Errorf("hpa: %s %q is not in the imported file", old.Origin.Kind, old.Origin.Name)
	}
	e.where = fmt.Sprintf("%s %q", scaler.kind, scaler.name)
	if scaler.kind == "ScaledObject" {
		err = e.scaledObject(scaler.node)
	} else {
		err = e.hpa(scaler.node)
	}
	if err == nil {
		err = e.grace(objs)
	}
	if err == nil {
		e.migration(objs)
	}
	if err != nil {
		return nil, fmt.Errorf("hpa: writing into %s: %w", e.where, err)
	}
	out, err := f.result()
	if err != nil {
		return nil, fmt.Errorf("hpa: %w", err)
	}
	out = append(out, e.tail...)
	if !isJSON(src) {
		out = withHeader(out, header(s.Source, e.changed))
	}
	e.notes = append(e.notes, notInManifests(a)...)
	return &Exported{Data: out, Changed: e.changed, Notes: e.notes}, nil
}

// isJSON reports whether the file is JSON (its first character is { or [).
func isJSON(src []byte) bool {
	t := bytes.TrimLeft(src, " \t\r\n\ufeff")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

func header(source string, changed []string) string {
	h := HeaderPrefix
	if source != "" {
		h += ": " + oneLine(source)
	}
	if len(changed) == 0 {
		return h + ". Nothing changed: these are your settings"
	}
	return h + ". Changed: " + oneLine(strings.Join(changed, "; "))
}

// withHeader puts the header comment first, replacing one an earlier export wrote.
func withHeader(out []byte, h string) []byte {
	if bytes.HasPrefix(out, []byte(HeaderPrefix)) {
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		} else {
			out = nil
		}
	}
	return append([]byte(h+"\n"), out...)
}

// ontoEdit collects the edits of one export.
type ontoEdit struct {
	f       *yamlFile
	s       Settings
	old     *Imported
	where   string
	changed []string
	notes   []string
	tail    []byte
	leaves  []leaf // values to write below spec (put, apply)
	count   int    // values put so far
}

func (e *ontoEdit) change(path string, from, to any) {
	e.changed = append(e.changed, fmt.Sprintf("%s %s: %v → %v", e.where, path, from, to))
}

// hpa writes into a HorizontalPodAutoscaler.
func (e *ontoEdit) hpa(n *yaml.Node) error {
	a, oa := e.s.Autoscaler, e.old.Autoscaler
	spec := at(n, "spec")
	if spec == nil {
		return fmt.Errorf("no spec")
	}
	if a.MinWorkers != oa.MinWorkers {
		e.change("spec.minReplicas", oa.MinWorkers, a.MinWorkers)
		e.put([]string{"minReplicas"}, num(a.MinWorkers), "maxReplicas")
	}
	if a.MaxWorkers != oa.MaxWorkers {
		e.change("spec.maxReplicas", oa.MaxWorkers, a.MaxWorkers)
		e.put([]string{"maxReplicas"}, num(a.MaxWorkers), "")
	}
	idx := e.old.Origin.MetricIndex
	metrics := at(spec, "metrics")
	item := at(metrics, idx)
	if item == nil {
		return fmt.Errorf("spec.metrics[%d] is not in the file", idx)
	}
	sourceKey := "pods"
	if oa.Source == sim.SourceExternal {
		sourceKey = "external"
	}
	switch {
	case a.Source != oa.Source:
		id := kv{"metric", []kv{{"name", str(exportNames[a.Metric])}}}
		target := kv{"target", []kv{{"type", str("AverageValue")}, {"averageValue", str(strconv.FormatFloat(a.Target, 'f', -1, 64))}}}
		tree := []kv{{"type", str("Pods")}, {"pods", []kv{id, target}}}
		if a.Source == sim.SourceExternal {
			tree = []kv{{"type", str("External")}, {"external", []kv{id, target}}}
			e.notes = append(e.notes, fmt.Sprintf("the External metric %s must be the %s over the workers of %s (your adapter's rule)", exportNames[a.Metric], a.Aggregate, a.Metric))
		}
		e.change(fmt.Sprintf("spec.metrics[%d]", idx), oa.Source+" "+oa.Metric, a.Source+" "+a.Metric)
		e.f.replaceItem(metrics, item, tree)
		return e.behavior(spec, []string{"behavior"}, "spec.behavior")
	case a.Metric != oa.Metric || a.Aggregate != oa.Aggregate:
		name := exportNames[a.Metric]
		e.change(fmt.Sprintf("spec.metrics[%d].%s.metric.name", idx, sourceKey), at(item, sourceKey, "metric", "name").Value, name)
		if err := e.f.set(at(item, sourceKey), []string{"metric", "name"}, str(name), ""); err != nil {
			return err
		}
	}
	if milli(a.Target) != milli(oa.Target) {
		path := []string{sourceKey, "target", "averageValue"}
		cur := at(item, sourceKey, "target", "averageValue")
		v := quantityText(a.Target, cur)
		e.change(fmt.Sprintf("spec.metrics[%d].%s", idx, strings.Join(path, ".")), formatNum(oa.Target), v)
		// A quantity reads from a number or a string: a number stays plain where it was.
		if err := e.f.set(item, path, scal{v: v, str: strings.HasSuffix(v, "m")}, ""); err != nil {
			return err
		}
	}
	return e.behavior(spec, []string{"behavior"}, "spec.behavior")
}

// scaledObject writes into a KEDA ScaledObject.
func (e *ontoEdit) scaledObject(n *yaml.Node) error {
	a, oa := e.s.Autoscaler, e.old.Autoscaler
	spec := at(n, "spec")
	if spec == nil {
		return fmt.Errorf("no spec")
	}
	if a.MinWorkers != oa.MinWorkers {
		e.change("spec.minReplicaCount", oa.MinWorkers, a.MinWorkers)
		e.put([]string{"minReplicaCount"}, num(a.MinWorkers), "maxReplicaCount")
	}
	if a.MaxWorkers != oa.MaxWorkers {
		e.change("spec.maxReplicaCount", oa.MaxWorkers, a.MaxWorkers)
		e.put([]string{"maxReplicaCount"}, num(a.MaxWorkers), "triggers")
	}
	idx := e.old.Origin.MetricIndex
	trig := at(spec, "triggers", idx)
	if trig == nil {
		return fmt.Errorf("spec.triggers[%d] is not in the file", idx)
	}
	agg := a.Aggregate
	if a.Source != sim.SourceExternal {
		agg = sim.AggregateSum
	}
	if a.Metric != oa.Metric || agg != oa.Aggregate {
		q := exportQuery(a.Metric, agg)
		e.change(fmt.Sprintf("spec.triggers[%d].metadata.query", idx), at(trig, "metadata", "query").Value, q)
		if err := e.f.set(trig, []string{"metadata", "query"}, str(q), ""); err != nil {
			return err
		}
		if a.Source != sim.SourceExternal {
			e.notes = append(e.notes, "source pods is written as a KEDA trigger on the sum over workers with an AverageValue threshold, which is the same per-worker average")
		}
	}
	if milli(a.Target) != milli(oa.Target) {
		v := strconv.FormatFloat(a.Target, 'f', -1, 64)
		e.change(fmt.Sprintf("spec.triggers[%d].metadata.threshold", idx), formatNum(oa.Target), v)
		if err := e.f.set(trig, []string{"metadata", "threshold"}, str(v), ""); err != nil {
			return err
		}
	}
	return e.behavior(spec, []string{"advanced", "horizontalPodAutoscalerConfig", "behavior"}, "spec.advanced.horizontalPodAutoscalerConfig.behavior")
}

// behavior writes what differs between the file's behavior and the settings', direction by
// direction and field by field, as the controller reads them (Kubernetes' defaults filled in):
// a field equal to what the file means is left as written, or left out.
func (e *ontoEdit) behavior(spec *yaml.Node, path []string, name string) error {
	a, oa := e.s.Autoscaler, e.old.Autoscaler
	nb, ob := a.ControllerSettings().Behavior, oa.ControllerSettings().Behavior
	if nb == nil {
		if ob != nil {
			e.notes = append(e.notes, name+": the settings take the legacy path (no behavior), but the file has a behavior; it is left as written: delete it to match")
		}
		if a.Tolerance != oa.Tolerance {
			e.notes = append(e.notes, fmt.Sprintf("tolerance %v: without a behavior it is the cluster's --horizontal-pod-autoscaler-tolerance, not a manifest field", a.Tolerance))
		}
		return e.apply(spec)
	}
	fromLegacy := ob == nil
	if fromLegacy {
		d := oa
		d.Behavior, d.ScaleDownWindowMS, d.ScaleUpWindowMS, d.MaxRemovePerTick, d.MaxAddPerTick = &sim.Behavior{}, nil, nil, sim.PerTick{}, sim.PerTick{}
		ob = d.ControllerSettings().Behavior
	}
	before := e.count
	dirs := []struct {
		key      string
		new, old podautoscaler.Rules
	}{{"scaleUp", nb.Up, ob.Up}, {"scaleDown", nb.Down, ob.Down}}
	for _, d := range dirs {
		if err := e.rules(spec, append(slices.Clone(path), d.key), name+"."+d.key, d.new, d.old, a.Tolerance); err != nil {
			return err
		}
	}
	if fromLegacy && e.count == before {
		// Kubernetes' defaults exactly: an empty behavior still leaves the legacy path.
		e.change(name, "absent", "{}")
		e.put(path, []kv{}, "")
	} else if fromLegacy {
		e.notes = append(e.notes, name+" added: the file had none, so the controller took the legacy path; the settings are a behavior")
	}
	return e.apply(spec)
}

// put records a value to write below the object's spec; apply writes them all at once, so
// the fields of a new mapping make one entry.
func (e *ontoEdit) put(path []string, v any, before string) {
	e.leaves = append(e.leaves, leaf{path, v, before})
	e.count++
}

func (e *ontoEdit) apply(spec *yaml.Node) error {
	if len(e.leaves) == 0 {
		return nil
	}
	err := e.f.setAll(spec, e.leaves, false)
	e.leaves = nil
	return err
}

// rules writes one direction's differences.
func (e *ontoEdit) rules(spec *yaml.Node, path []string, name string, nr, or podautoscaler.Rules, tolerance float64) error {
	if nr.WindowNS != or.WindowNS {
		w := int64(math.Ceil(float64(nr.WindowNS) / 1e9))
		if w*1_000_000_000 != nr.WindowNS {
			e.notes = append(e.notes, fmt.Sprintf("%s window %s is not whole seconds: written as %d s", name, formatMS(float64(nr.WindowNS)/1e6), w))
		}
		e.change(name+".stabilizationWindowSeconds", or.WindowNS/1_000_000_000, w)
		e.put(append(slices.Clone(path), "stabilizationWindowSeconds"), num(w), "")
	}
	if nr.Select != or.Select {
		v := selectNames[nr.Select]
		e.change(name+".selectPolicy", selectNames[or.Select], v)
		e.put(append(slices.Clone(path), "selectPolicy"), str(v), "")
	}
	if nr.Tolerance != or.Tolerance {
		v := strconv.FormatFloat(nr.Tolerance, 'f', -1, 64)
		e.change(name+".tolerance", strconv.FormatFloat(or.Tolerance, 'f', -1, 64), v)
		e.put(append(slices.Clone(path), "tolerance"), scal{v: v}, "")
	}
	if !slices.Equal(nr.Policies, or.Policies) {
		return e.policies(spec, path, name, nr.Policies, or.Policies)
	}
	return nil
}

var selectNames = map[podautoscaler.Select]string{podautoscaler.SelectMax: "Max", podautoscaler.SelectMin: "Min", podautoscaler.SelectDisabled: "Disabled"}

func policyTypeName(t podautoscaler.PolicyType) string {
	if t == podautoscaler.PolicyPercent {
		return "Percent"
	}
	return "Pods"
}

func policySeconds(p podautoscaler.Policy) int64 { return int64(math.Ceil(float64(p.PeriodNS) / 1e9)) }

// policies writes a direction's policies: value by value when the file lists as many policies
// of the same types, else the whole list.
func (e *ontoEdit) policies(spec *yaml.Node, path []string, name string, np, op []podautoscaler.Policy) error {
	list := at(spec, toAny(append(slices.Clone(path), "policies"))...)
	sameShape := list != nil && list.Kind == yaml.SequenceNode && len(list.Content) == len(np) && len(np) == len(op)
	for i := 0; sameShape && i < len(np); i++ {
		sameShape = np[i].Type == op[i].Type
	}
	if sameShape {
		for i, p := range np {
			item := list.Content[i]
			if p.Value != op[i].Value {
				e.change(fmt.Sprintf("%s.policies[%d].value", name, i), op[i].Value, p.Value)
				if err := e.f.set(item, []string{"value"}, num(p.Value), ""); err != nil {
					return err
				}
			}
			if p.PeriodNS != op[i].PeriodNS {
				e.change(fmt.Sprintf("%s.policies[%d].periodSeconds", name, i), policySeconds(op[i]), policySeconds(p))
				if err := e.f.set(item, []string{"periodSeconds"}, num(policySeconds(p)), ""); err != nil {
					return err
				}
			}
		}
		return nil
	}
	items := make([]any, len(np))
	var words []string
	for i, p := range np {
		if s := policySeconds(p); s*1_000_000_000 != p.PeriodNS {
			e.notes = append(e.notes, fmt.Sprintf("%s policy period %s is not whole seconds: written as %d s", name, formatMS(float64(p.PeriodNS)/1e6), s))
		}
		items[i] = []kv{{"type", str(policyTypeName(p.Type))}, {"value", num(p.Value)}, {"periodSeconds", num(policySeconds(p))}}
		words = append(words, fmt.Sprintf("%s %d per %d s", policyTypeName(p.Type), p.Value, policySeconds(p)))
	}
	var was []string
	for _, p := range op {
		was = append(was, fmt.Sprintf("%s %d per %d s", policyTypeName(p.Type), p.Value, policySeconds(p)))
	}
	e.change(name+".policies", "["+strings.Join(was, ", ")+"]", "["+strings.Join(words, ", ")+"]")
	e.put(append(slices.Clone(path), "policies"), items, "")
	return nil
}

func toAny(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

// grace writes terminationGracePeriodSeconds into the workload it was read from (or the
// scaled workload, when the file has it), or, when the file has neither, appends a patch of the
// scaled workload — only when the grace changed (an absent grace is Kubernetes' 30 s).
func (e *ontoEdit) grace(objs []yobj) error {
	ng, og := e.s.Autoscaler.GraceMS, e.old.Autoscaler.GraceMS
	if ng == nil {
		if og != nil {
			e.notes = append(e.notes, fmt.Sprintf("grace_ms is null (drains are never forced): Kubernetes has no unlimited grace, so terminationGracePeriodSeconds stays %s", formatMS(*og)))
		}
		return nil
	}
	secs := int64(math.Ceil(*ng / 1000))
	if float64(secs)*1000 != *ng {
		e.notes = append(e.notes, fmt.Sprintf("grace_ms %v is not whole seconds: terminationGracePeriodSeconds is %d", *ng, secs))
	}
	if og != nil && int64(math.Ceil(*og/1000)) == secs {
		return nil
	}
	oldS := int64(k8sGraceS)
	if og != nil {
		oldS = int64(math.Ceil(*og / 1000))
	}
	ref := e.old.Origin.Grace
	if ref == nil {
		ref = &e.old.Origin.Target
	}
	for _, o := range objs {
		if o.kind != ref.Kind || o.name != ref.Name || (ref.Namespace != "" && o.namespace != "" && o.namespace != ref.Namespace) {
			continue
		}
		path := podSpecPath(o.kind, ref.Service)
		if path == nil {
			break
		}
		where := fmt.Sprintf("%s %q", o.kind, o.name)
		e.changed = append(e.changed, fmt.Sprintf("%s %s.terminationGracePeriodSeconds: %d → %d", where, strings.Join(path, "."), oldS, secs))
		if err := e.f.set(o.node, append(path, "terminationGracePeriodSeconds"), num(secs), ""); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		return nil
	}
	// The workload is not in the file: a patch of it, after the user's documents.
	patch, err := manifestYAML(workloadPatch(*ref, secs, nil))
	if err != nil {
		return err
	}
	e.changed = append(e.changed, fmt.Sprintf("%s %q terminationGracePeriodSeconds: %d → %d (a patch after your documents)", ref.Kind, ref.Name, oldS, secs))
	var b bytes.Buffer
	if len(e.f.src) > 0 && e.f.src[len(e.f.src)-1] != '\n' {
		b.WriteByte('\n')
	}
	if isJSON(e.f.src) {
		e.notes = append(e.notes, fmt.Sprintf("terminationGracePeriodSeconds %d: %s %q is not in this JSON file; set it in its pod template", secs, ref.Kind, ref.Name))
		return nil
	}
	fmt.Fprintf(&b, "---\n# A patch of your %s %s: its pods' grace (merge it: kubectl patch, kustomize)\n", ref.Kind, ref.Name)
	b.Write(patch)
	e.tail = append(e.tail, b.Bytes()...)
	return nil
}

// podSpecPath is where a workload kind keeps the workers' pod spec.
func podSpecPath(kind, service string) []string {
	switch kind {
	case "Deployment", "StatefulSet":
		return []string{"spec", "template", "spec"}
	case "LeaderWorkerSet":
		return []string{"spec", "leaderWorkerTemplate", "workerTemplate", "spec"}
	case "DynamoGraphDeployment":
		if service == "" {
			return nil
		}
		return []string{"spec", "services", service, "extraPodSpec"}
	}
	return nil
}

// migration writes DYN_MIGRATION_LIMIT where the file sets it, when it changed; a file that
// sets it nowhere gets a comment naming the value (the frontend is not in the file).
func (e *ontoEdit) migration(objs []yobj) {
	n := e.s.MigrationLimit
	old := 0
	if e.old.MigrationLimit != nil {
		old = *e.old.MigrationLimit
	}
	if n == old {
		return
	}
	ref := e.old.Origin.Migration
	if ref != nil {
		for _, o := range objs {
			if o.kind != ref.Kind || o.name != ref.Name {
				continue
			}
			done := false
			e.walkEnv(o.node, func(val *yaml.Node, inFlow bool, indent int) {
				_ = e.f.setScalar(val, str(strconv.Itoa(n)), inFlow, indent)
				done = true
			})
			if done {
				e.changed = append(e.changed, fmt.Sprintf("%s %q env %s: %d → %d", o.kind, o.name, MigrationLimitEnv, old, n))
				return
			}
		}
	}
	e.changed = append(e.changed, fmt.Sprintf("%s: %d → %d (no workload in the file sets it: set it on your Dynamo frontend)", MigrationLimitEnv, old, n))
	e.notes = append(e.notes, fmt.Sprintf("set %s=%d on your Dynamo frontend's container: no workload in the file sets it", MigrationLimitEnv, n))
	if !isJSON(e.f.src) {
		var b bytes.Buffer
		if len(e.f.src) > 0 && e.f.src[len(e.f.src)-1] != '\n' && len(e.tail) == 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: set %s=%d on your Dynamo frontend's container (no workload in this file sets it)\n", HeaderPrefix, MigrationLimitEnv, n)
		e.tail = append(e.tail, b.Bytes()...)
	}
}

// walkEnv calls fn with the value node of every env entry named DYN_MIGRATION_LIMIT below n.
func (e *ontoEdit) walkEnv(n *yaml.Node, fn func(val *yaml.Node, inFlow bool, indent int)) {
	var walk func(n *yaml.Node, inFlow bool)
	walk = func(n *yaml.Node, inFlow bool) {
		if n == nil {
			return
		}
		inFlow = inFlow || flow(n)
		if n.Kind == yaml.MappingNode {
			if k, v := get(n, "name"); k != nil && v.Value == MigrationLimitEnv {
				if vk, vv := get(n, "value"); vk != nil && vv.Kind == yaml.ScalarNode {
					fn(vv, inFlow, vk.Column-1)
					return
				}
			}
		}
		for _, c := range n.Content {
			walk(c, inFlow)
		}
	}
	walk(n, false)
}

func milli(v float64) int64 { return int64(math.Round(v * 1000)) }

func formatNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// quantityText writes a target as a Kubernetes quantity, in milli-units ("12500m") when the
// file wrote it so.
func quantityText(v float64, cur *yaml.Node) string {
	if cur != nil && strings.HasSuffix(strings.TrimSpace(cur.Value), "m") {
		return strconv.FormatInt(milli(v), 10) + "m"
	}
	return formatNum(v)
}
