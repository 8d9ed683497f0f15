package form

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// formDefaults holds the text of every field's default, read from the simulator's own default
// scenario (sim.DefaultScenario, with sim.DefaultTrace for the trace options) so that the form
// can never run other values than the ones it shows. Fields the simulator has no default for
// (the trace limit, the trace itself, the scripted requests) are absent. Computed once; never
// written after.
var formDefaults = simDefaults()

func simDefaults() map[string]string {
	sc := sim.DefaultScenario()
	trace := sim.DefaultTrace()
	sc.Workload.Trace = &trace // not a valid workload, only a source of the trace's defaults
	tree := scenarioTree(sc)
	defaults := map[string]string{}
	singleFields(func(fs fieldSpec) {
		if v, ok := lookup(tree, fs.Path); ok {
			defaults[fs.Path] = fieldText(fs, v)
		}
	})
	autoscalerDefaults(defaults)
	poolAutoscalerDefaults(defaults)
	poolDefaults(defaults)
	// The default scenario needs a workload type, but the simulator requires one: it has no
	// default, and the form starts with sessions (workloadTypeField.Start).
	delete(defaults, workloadTypeField.Path)
	// No start time by default: times read from the start.
	delete(defaults, StartsAtPath)
	return defaults
}

// defaultText is the text of a field's default, "" when it has none.
func defaultText(fs fieldSpec) string {
	return formDefaults[fs.Path]
}

// scenarioTree is a scenario's canonical JSON as a tree whose numbers keep their JSON text.
func scenarioTree(sc *sim.Scenario) map[string]any {
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(sc.CanonicalJSON()))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return map[string]any{}
	}
	return tree
}

// lookup finds the value at a dotted path of a JSON tree.
func lookup(tree map[string]any, path string) (any, bool) {
	var cur any = tree
	for p := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// jsonText is a JSON scalar as a field shows it: strings without quotes, numbers as written.
func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
