package form

import (
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// An autoscaler per pool in the form (docs/model.md#model-5): with prefill + decode pools and
// the autoscaler chosen as the scale-in, each pool has an optional model-4 autoscaler, written
// as autoscaler.prefill and autoscaler.decode. The form holds its common fields (metric,
// source, aggregate, target, tolerance, bounds, interval, drain choice, grace, cold start) and
// a behavior of one policy per direction with its windows; an autoscaler with anything else
// (a metric delay, a pending phase, several policies, a per-direction tolerance or select…)
// goes to the Scenario JSON box whole (FromScenario checks that the fields give it back).

// The two choices of a pool's autoscaler mode.
const (
	PoolAutoscalerNone = "none"
	PoolAutoscalerSet  = "set"
)

// poolAutoscalerRoles are the pools in page order.
var poolAutoscalerRoles = []string{sim.RolePrefill, sim.RoleDecode}

// PoolAutoscalerPath is the mode field of a pool's autoscaler, named after its object
// (autoscaler.prefill) so that a problem with the object as a whole lands on it.
func PoolAutoscalerPath(role string) string { return "autoscaler." + role }

// poolBehaviorPath is the mode field of a pool autoscaler's behavior.
func poolBehaviorPath(role string) string { return PoolAutoscalerPath(role) + ".behavior" }

// poolPolicyPath is a field of a direction's one policy (…behavior.scale_down.policies[0].value).
func poolPolicyPath(role, dir, field string) string {
	return poolBehaviorPath(role) + "." + dir + ".policies[0]." + field
}

// poolAutoscalerCommon are the aggregated autoscaler's fields a pool's autoscaler repeats.
var poolAutoscalerCommon = []string{"interval_ms", "metric", "source", "aggregate", "target", "tolerance",
	"min_workers", "max_workers", "select", "grace_ms", "startup_ms"}

// poolAutoscalerGroup is the fieldset of one pool's autoscaler.
func poolAutoscalerGroup(role string) fieldGroup {
	name := map[string]string{sim.RolePrefill: "Prefill", sim.RoleDecode: "Decode"}[role]
	g := fieldGroup{Legend: name + " autoscaler",
		Note: "Used only with prefill + decode pools and the autoscaler chosen as the scale-in: the " + role +
			" pool's own HPA (autoscaler." + role + ", the model-4 autoscaler above, for this pool's workers). None keeps the pool at its size. An empty max is the pool's workers; a behavior here has at most one policy per direction, anything more goes in the Scenario JSON box."}
	g.Fields = append(g.Fields, fieldSpec{Path: PoolAutoscalerPath(role), Label: "Autoscaler", Kind: kindSelect, Start: PoolAutoscalerNone,
		Help: "An HPA (or KEDA ScaledObject) for this pool alone, as llm-d ships one per role.",
		Options: [][2]string{
			{PoolAutoscalerNone, "None (the pool keeps its size)"},
			{PoolAutoscalerSet, "An autoscaler for this pool (the fields below)"},
		}})
	byKey := map[string]fieldSpec{}
	for _, fs := range autoscalerGroup.Fields {
		byKey[strings.TrimPrefix(fs.Path, "autoscaler.")] = fs
	}
	for _, key := range poolAutoscalerCommon {
		fs := byKey[key]
		fs.Path = PoolAutoscalerPath(role) + "." + key
		if key == "metric" && role == sim.RolePrefill {
			fs.Options = append(append([][2]string{}, fs.Options...),
				[2]string{sim.MetricHandoffsHeld, "handoffs_held (handoffs a prefill worker holds for a decode worker)"})
		}
		if key == "max_workers" {
			fs.Help = "maxReplicas; empty = the pool's workers."
		}
		g.Fields = append(g.Fields, fs)
	}
	bm := behaviorModeField
	bm.Path = poolBehaviorPath(role)
	g.Fields = append(g.Fields, bm)
	for _, dir := range directions {
		verb := map[string]string{dirUp: "up", dirDown: "down"}[dir]
		label := directionLabel(dir)
		g.Fields = append(g.Fields,
			fieldSpec{Path: poolBehaviorPath(role) + "." + dir + ".window_ms", Label: label + " window", Unit: "ms", Kind: kindInt,
				Help: "stabilizationWindowSeconds (in ms) of the scale-" + verb + " rules; empty = Kubernetes' default."},
			fieldSpec{Path: poolPolicyPath(role, dir, "type"), Label: label + " policy", Kind: kindSelect,
				Help:    "One policy of the scale-" + verb + " rules; — = none (Kubernetes' default policies).",
				Options: policyFields[0].Options},
			fieldSpec{Path: poolPolicyPath(role, dir, "value"), Label: label + " policy value", Unit: "workers or %", Kind: kindInt,
				Help: "Workers (pods) or percent of the pool per period."},
			fieldSpec{Path: poolPolicyPath(role, dir, "period_ms"), Label: label + " policy period", Unit: "ms", Kind: kindInt,
				Help: "periodSeconds (in ms)."},
		)
	}
	return g
}

// poolAutoscalerFields calls fn for the fields of both pools' autoscalers, in page order.
func poolAutoscalerFields(fn func(fieldSpec)) {
	for _, role := range poolAutoscalerRoles {
		for _, fs := range poolAutoscalerGroup(role).Fields {
			fn(fs)
		}
	}
}

// poolAutoscalerDefaults gives a pool autoscaler's fields the aggregated autoscaler's defaults
// (called after autoscalerDefaults).
func poolAutoscalerDefaults(defaults map[string]string) {
	for _, role := range poolAutoscalerRoles {
		for _, key := range poolAutoscalerCommon {
			if v, ok := defaults["autoscaler."+key]; ok {
				defaults[PoolAutoscalerPath(role)+"."+key] = v
			}
		}
	}
}

// poolAutoscalersJSON writes autoscaler.prefill and autoscaler.decode, those the form sets; with
// neither, the autoscaler is {} (both pools keep their sizes), which sim.Parse accepts.
func (f *Form) poolAutoscalersJSON(root map[string]any, put func(fs fieldSpec, name, text string, into map[string]any, key string)) {
	a := map[string]any{}
	for _, role := range poolAutoscalerRoles {
		if strings.TrimSpace(f.values[PoolAutoscalerPath(role)]) != PoolAutoscalerSet {
			continue
		}
		obj := map[string]any{}
		prefix := PoolAutoscalerPath(role) + "."
		g := poolAutoscalerGroup(role)
		for _, fs := range g.Fields {
			key, ok := strings.CutPrefix(fs.Path, prefix)
			if !ok || strings.Contains(key, ".") || key == "behavior" {
				continue
			}
			if key == "aggregate" && strings.TrimSpace(f.values[prefix+"source"]) != sim.SourceExternal {
				continue // refused with a pods source; the choice stays in the form
			}
			put(fs, fs.Path, f.values[fs.Path], obj, key)
		}
		if strings.TrimSpace(f.values[poolBehaviorPath(role)]) == BehaviorSet {
			b := map[string]any{}
			for _, dir := range directions {
				r := map[string]any{}
				for _, fs := range g.Fields {
					if fs.Path == poolBehaviorPath(role)+"."+dir+".window_ms" {
						put(fs, fs.Path, f.values[fs.Path], r, "window_ms")
					}
				}
				p := map[string]any{}
				empty := true
				for _, pf := range policyFields {
					name := poolPolicyPath(role, dir, pf.Path)
					if strings.TrimSpace(f.values[name]) != "" {
						empty = false
					}
					put(pf, name, f.values[name], p, pf.Path)
				}
				if !empty {
					r["policies"] = []any{p}
				}
				if len(r) > 0 {
					b[dir] = r
				}
			}
			obj["behavior"] = b
		}
		a[role] = obj
	}
	root["autoscaler"] = a
}

// poolAutoscalersPrefill sets each pool autoscaler's mode, behavior mode and policy fields
// from a scenario (its other fields are prefilled by path like every other field).
func (f *Form) poolAutoscalersPrefill(pa *sim.PoolAutoscalers) {
	for _, role := range poolAutoscalerRoles {
		f.values[PoolAutoscalerPath(role)] = PoolAutoscalerNone
		f.values[poolBehaviorPath(role)] = BehaviorNone
		var a *sim.Autoscaler
		if pa != nil {
			a = map[string]*sim.Autoscaler{sim.RolePrefill: pa.Prefill, sim.RoleDecode: pa.Decode}[role]
		}
		if a == nil {
			continue
		}
		f.values[PoolAutoscalerPath(role)] = PoolAutoscalerSet
		if a.Behavior == nil {
			continue
		}
		f.values[poolBehaviorPath(role)] = BehaviorSet
		for _, dir := range directions {
			r := a.Behavior.ScaleUp
			if dir == dirDown {
				r = a.Behavior.ScaleDown
			}
			if r == nil || len(r.Policies) == 0 {
				continue
			}
			p := r.Policies[0]
			f.values[poolPolicyPath(role, dir, "type")] = p.Type
			f.values[poolPolicyPath(role, dir, "value")] = strconv.Itoa(p.Value)
			f.values[poolPolicyPath(role, dir, "period_ms")] = strconv.FormatInt(p.PeriodMS, 10)
		}
	}
}

// poolAutoscalersHeld reports whether the form's fields give back the scenario's pool
// autoscalers: the form f, prefilled from sc, builds the same scenario.
func poolAutoscalersHeld(f *Form, sc *sim.Scenario) bool {
	again, err := Scenario(f, sim.ParseEnv{})
	return err == nil && again.ID() == sc.ID()
}

// poolAutoscalerField is the field of g at path.
func poolAutoscalerField(g fieldGroup, path string) fieldSpec {
	for _, fs := range g.Fields {
		if fs.Path == path {
			return fs
		}
	}
	return fieldSpec{Path: path, Label: path}
}
