package form

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// ScenarioInputs lists a scenario's inputs as the form asks for them: one group per group of
// the form's field table (fields.go), each field under its form label, then the scale-in
// section as the form's choice has it (the scripted schedule, or the autoscaler's fields) and
// the fields of the scenario's workload type. A field added to the form appears here too
// (TestScenarioSummaryListsEveryFormField).
func ScenarioInputs(sc *sim.Scenario) []templates.ScenarioGroup {
	tree := scenarioTree(sc)
	item := func(label, value string) templates.ScenarioItem {
		return templates.ScenarioItem{Label: label, Value: value}
	}
	field := func(fs fieldSpec) templates.ScenarioItem {
		it := item(fs.Label, summaryValue(sc, tree, fs))
		it.Title = exactValue(tree, fs, it.Value)
		return it
	}
	var groups []templates.ScenarioGroup
	for _, g := range generalGroups {
		items := make([]templates.ScenarioItem, len(g.Fields))
		for i, fs := range g.Fields {
			items[i] = field(fs)
		}
		groups = append(groups, templates.ScenarioGroup{Title: g.Legend, Items: items})
	}
	groups = append(groups, poolInputs(sc, item, field)...)
	groups = append(groups, scaleInInputs(sc, item, field))
	wl := []templates.ScenarioItem{field(workloadTypeField)}
	if fields, ok := workloadFields(sc.Workload.Type); ok {
		for _, fs := range fields {
			wl = append(wl, field(fs))
		}
	}
	groups = append(groups, templates.ScenarioGroup{Title: "Workload", Items: wl})
	return groups
}

// scaleInInputs is the scale-in section: the form's choice, then the autoscaler's fields or
// the scripted schedule's actions.
func scaleInInputs(sc *sim.Scenario, item func(label, value string) templates.ScenarioItem, field func(fieldSpec) templates.ScenarioItem) templates.ScenarioGroup {
	if sc.Autoscaler != nil {
		items := []templates.ScenarioItem{item(scaleInModeField.Label, ModeAutoscaler)}
		for _, fs := range autoscalerGroup.Fields {
			if fs.Path == AggregatePath && sc.Autoscaler.Source != sim.SourceExternal {
				items = append(items, item(fs.Label, "not used (pods source)"))
				continue
			}
			items = append(items, field(fs))
		}
		items = append(items, behaviorInputs(sc.Autoscaler, item)...)
		return templates.ScenarioGroup{Title: autoscalerGroup.Legend, Items: items}
	}
	if sc.PoolAutoscalers != nil {
		// One autoscaler per pool: each is listed with the pools (poolAutoscalerInputs).
		return templates.ScenarioGroup{Title: "Schedule", Items: []templates.ScenarioItem{
			item(scaleInModeField.Label, ModeAutoscaler+": one per pool (Prefill autoscaler, Decode autoscaler)")}}
	}
	sched := []templates.ScenarioItem{item(scaleInModeField.Label, ModeSchedule)}
	for i, a := range sc.ScaleIn {
		what := ""
		if len(a.Workers) > 0 {
			what = "drain " + format.Unit(float64(len(a.Workers)), "workers") + " " + format.IDs(a.Workers)
		} else {
			pool := ""
			if a.Role != "" {
				pool = a.Role + " "
			}
			what = fmt.Sprintf("drain %s %s%s chosen by %s", format.Number(float64(a.Count)), pool, format.Unit(float64(a.Count), "workers"), a.Select)
		}
		if a.GraceMS != nil {
			what += ", grace " + format.Setting(*a.GraceMS)
		} else {
			what += ", no grace deadline"
		}
		sched = append(sched, item(fmt.Sprintf("Action %d at %s", i+1, format.Setting(a.AtMS)), what))
	}
	if len(sc.ScaleIn) == 0 {
		sched = append(sched, item("Actions", "none"))
	}
	return templates.ScenarioGroup{Title: "Schedule", Items: sched}
}

// summaryValue is a field's value as the summary shows it: a number with its unit, on or off,
// the text of a choice, the trace by name, the scripted requests by count.
func summaryValue(sc *sim.Scenario, tree map[string]any, fs fieldSpec) string {
	switch fs.Kind {
	case kindTraceSource:
		t := sc.Workload.Trace
		if t == nil {
			return "none"
		}
		if t.Name != "" {
			return t.Name
		}
		return "uploaded trace " + shortSHA(t.SHA256)
	case kindJSON:
		return format.Count(int64(len(sc.Workload.Requests)), "requests")
	case kindStages:
		if sc.Workload.Sessions == nil || len(sc.Workload.Sessions.RateStages) == 0 {
			return "none: the constant rate"
		}
		return format.Count(int64(len(sc.Workload.Sessions.RateStages)), "stages")
	}
	v, ok := lookup(tree, fs.Path)
	if !ok || v == nil {
		if fs.Kind == kindNullableInt || fs.Kind == kindNullableFloat {
			return "none"
		}
		return "not set"
	}
	switch x := v.(type) {
	case bool:
		return format.OnOff(x)
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil {
			return x.String()
		}
		if fs.Unit == "ms" {
			return format.Setting(f)
		}
		if fs.Kind == kindInt && fs.Unit != "" {
			return format.Count(int64(f), fs.Unit)
		}
		return format.Quantity(f, fs.Unit)
	case string:
		if fs.Path == StartsAtPath {
			return format.ClockTime(x)
		}
		return x
	}
	return fmt.Sprint(v)
}

// exactValue is a field's value as the scenario holds it ("900000 ms", the RFC 3339 text), for
// the title of a summary value that reads it otherwise; empty when the two read the same.
func exactValue(tree map[string]any, fs fieldSpec, shown string) string {
	v, ok := lookup(tree, fs.Path)
	if !ok || v == nil {
		return ""
	}
	var exact string
	switch x := v.(type) {
	case json.Number:
		if fs.Unit == "" {
			return ""
		}
		exact = x.String() + " " + fs.Unit
	case string:
		exact = x
	default:
		return ""
	}
	if exact == shown {
		return ""
	}
	return exact
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// behaviorInputs summarises the behavior (and the model-3 shorthand, as the behavior it stands
// for) in one item per direction: the form's behavior fields are summarised together.
func behaviorInputs(a *sim.Autoscaler, item func(label, value string) templates.ScenarioItem) []templates.ScenarioItem {
	a = shorthandAsBehavior(a)
	if a.Behavior == nil {
		if a.UsesShorthand() {
			return []templates.ScenarioItem{item(behaviorModeField.Label, "model-3 shorthand (a behavior)")}
		}
		return []templates.ScenarioItem{item(behaviorModeField.Label, "none: Kubernetes' legacy rules")}
	}
	items := []templates.ScenarioItem{item(behaviorModeField.Label, "set")}
	for _, dir := range directions {
		r := a.Behavior.ScaleUp
		window := format.Setting(0)
		if dir == dirDown {
			r = a.Behavior.ScaleDown
			window = format.Setting(a.DownscaleWindowMS)
		}
		var rr sim.ScalingRules
		if r != nil {
			rr = *r
		}
		if rr.WindowMS != nil {
			window = format.Setting(float64(*rr.WindowMS))
		}
		policies := rr.Policies
		if len(policies) == 0 {
			policies = defaultPolicies[dir]
		}
		var words []string
		for _, p := range policies {
			words = append(words, policyHelp(dir, p.Type, strconv.Itoa(p.Value), strconv.FormatInt(p.PeriodMS, 10)))
		}
		sel := rr.Select
		if sel == "" {
			sel = sim.SelectPolicyMax
		}
		text := fmt.Sprintf("window %s; select %s; %s", window, sel, strings.Join(words, " "))
		if rr.Tolerance != nil {
			text += "; tolerance " + format.Number(*rr.Tolerance)
		}
		items = append(items, item(directionLabel(dir), text))
	}
	return items
}

// poolInputs is the Pools section: the form's choice, then with pools each pool's fields and
// the handoff's.
func poolInputs(sc *sim.Scenario, item func(label, value string) templates.ScenarioItem, field func(fieldSpec) templates.ScenarioItem) []templates.ScenarioGroup {
	if sc.Disaggregation == nil {
		return []templates.ScenarioGroup{{Title: "Pools", Items: []templates.ScenarioItem{item(poolsModeField.Label, PoolsAggregated)}}}
	}
	groups := []templates.ScenarioGroup{{Title: "Pools", Items: []templates.ScenarioItem{item(poolsModeField.Label, PoolsPD)}}}
	for _, g := range poolGroups() {
		items := make([]templates.ScenarioItem, 0, len(g.Fields))
		for _, fs := range g.Fields {
			if fs.Path == LeaseTTLPath && sc.Disaggregation.Lease.Mode != sim.LeaseFixed {
				items = append(items, item(fs.Label, "not used (heartbeat lease)"))
				continue
			}
			items = append(items, field(fs))
		}
		groups = append(groups, templates.ScenarioGroup{Title: g.Legend, Items: items})
	}
	if sc.PoolAutoscalers != nil {
		groups = append(groups, poolAutoscalerInputs(sc, item, field)...)
	}
	return groups
}

// poolAutoscalerInputs is each pool's autoscaler: its choice, its common fields and its
// behavior by direction.
func poolAutoscalerInputs(sc *sim.Scenario, item func(label, value string) templates.ScenarioItem, field func(fieldSpec) templates.ScenarioItem) []templates.ScenarioGroup {
	var groups []templates.ScenarioGroup
	for _, role := range poolAutoscalerRoles {
		a := map[string]*sim.Autoscaler{sim.RolePrefill: sc.PoolAutoscalers.Prefill, sim.RoleDecode: sc.PoolAutoscalers.Decode}[role]
		g := poolAutoscalerGroup(role)
		if a == nil {
			groups = append(groups, templates.ScenarioGroup{Title: g.Legend, Items: []templates.ScenarioItem{item(g.Fields[0].Label, "none: the pool keeps its size")}})
			continue
		}
		items := []templates.ScenarioItem{item(g.Fields[0].Label, "set")}
		for _, key := range poolAutoscalerCommon {
			fs := poolAutoscalerField(g, PoolAutoscalerPath(role)+"."+key)
			if key == "aggregate" && a.Source != sim.SourceExternal {
				items = append(items, item(fs.Label, "not used (pods source)"))
				continue
			}
			items = append(items, field(fs))
		}
		items = append(items, behaviorInputs(a, item)...)
		groups = append(groups, templates.ScenarioGroup{Title: g.Legend, Items: items})
	}
	return groups
}
