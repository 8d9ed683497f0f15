package form

import (
	"encoding/json"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// Default is the form of a fresh page: every field at the simulator's default, a sessions
// workload, and the built-in trace and example requests ready in the other workload types.
func Default() *Form {
	f := &Form{values: map[string]string{}}
	singleFields(func(fs fieldSpec) {
		if fs.Start != "" {
			f.values[fs.Path] = fs.Start
		} else {
			f.values[fs.Path] = defaultText(fs)
		}
	})
	return f
}

// FromScenario fills the form from a complete scenario (a preset, a stored run), over the
// defaults so that the fields of the other workload types stay sensible.
func FromScenario(sc *sim.Scenario) *Form {
	f := Default()
	if sc.Autoscaler != nil {
		// The model-3 shorthand is shown as the behavior it stands for, where a behavior
		// holds it exactly (shorthandAsBehavior): the same controller, in model 4's terms.
		c := *sc
		c.Autoscaler = shorthandAsBehavior(sc.Autoscaler)
		sc = &c
	}
	canonical := sc.CanonicalJSON()
	tree := scenarioTree(sc)
	singleFields(func(fs fieldSpec) {
		switch fs.Kind {
		case kindJSON:
			if raw, ok := rawAt(canonical, fs.Path); ok {
				f.values[fs.Path] = onePerLine(raw)
			}
			return
		case kindTraceSource:
			for _, member := range []string{"name", "sha256"} {
				if v, ok := lookup(tree, "workload.trace."+member); ok {
					f.values[fs.Path] = member + ":" + jsonText(v)
				}
			}
			return
		}
		if v, ok := lookup(tree, fs.Path); ok {
			f.values[fs.Path] = fieldText(fs, v)
		}
	})
	if _, ok := tree["disaggregation"]; ok {
		f.values[PoolsModePath] = PoolsPD
		if !poolsHoldable(sc) {
			// The fields cannot hold it: the whole scenario goes to the JSON box, which wins.
			f.values[RawJSONField] = string(canonical)
		}
	}
	if _, ok := tree["autoscaler"]; ok {
		f.values[ScaleInModePath] = ModeAutoscaler
	}
	f.behaviorPrefill(sc.Autoscaler)
	f.poolAutoscalersPrefill(sc.PoolAutoscalers)
	actions, _ := tree["scale_in"].([]any)
	for _, a := range actions {
		obj, _ := a.(map[string]any)
		row := map[string]string{}
		for _, fs := range scheduleFields {
			if v, ok := obj[fs.Path]; ok {
				row[fs.Path] = fieldText(fs, v)
			}
		}
		f.rows = append(f.rows, row)
	}
	if sc.PoolAutoscalers != nil && f.values[RawJSONField] == "" && !poolAutoscalersHeld(f, sc) {
		// A pool's autoscaler has more than its fields hold: the JSON box holds the scenario whole.
		f.values[RawJSONField] = string(canonical)
	}
	return f
}

// fieldText is a JSON value as its field shows it.
func fieldText(fs fieldSpec, v any) string {
	switch fs.Kind {
	case kindNullableInt, kindNullableFloat:
		if v == nil {
			return "none"
		}
	case kindStages:
		return stagesText(v)
	case kindIDList:
		list, _ := v.([]any)
		ids := make([]string, len(list))
		for i, id := range list {
			ids[i] = jsonText(id)
		}
		return strings.Join(ids, ", ")
	}
	return jsonText(v)
}

// rawAt finds the JSON text at a dotted path of a document, members in the document's order.
func rawAt(doc []byte, path string) (json.RawMessage, bool) {
	cur := json.RawMessage(doc)
	for p := range strings.SplitSeq(path, ".") {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		next, ok := obj[p]
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// onePerLine writes a JSON list with one element per line (a scripted request per line reads
// like the examples); anything else stays as it is.
func onePerLine(raw json.RawMessage) string {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
		return string(raw)
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, e := range elems {
		b.WriteString("  ")
		b.Write(e)
		if i < len(elems)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]")
	return b.String()
}
