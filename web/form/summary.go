package form

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// ScenarioInputs lists a scenario's inputs as the form asks for them: one group per group of
// the form's field table (form_fields.go), each field under its form label, then the scale-in
// schedule and the fields of the scenario's workload type. A field added to the form appears
// here too (TestScenarioSummaryListsEveryFormField).
func ScenarioInputs(sc *sim.Scenario) []templates.ScenarioGroup {
	tree := scenarioTree(sc)
	item := func(label, value string) templates.ScenarioItem {
		return templates.ScenarioItem{Label: label, Value: value}
	}
	field := func(fs fieldSpec) templates.ScenarioItem {
		return item(fs.Label, summaryValue(sc, tree, fs))
	}
	var groups []templates.ScenarioGroup
	for _, g := range generalGroups {
		items := make([]templates.ScenarioItem, len(g.Fields))
		for i, fs := range g.Fields {
			items[i] = field(fs)
		}
		groups = append(groups, templates.ScenarioGroup{Title: g.Legend, Items: items})
	}
	var sched []templates.ScenarioItem
	for i, a := range sc.ScaleIn {
		what := ""
		if len(a.Workers) > 0 {
			what = "drain " + format.Unit(float64(len(a.Workers)), "workers") + " " + format.IDs(a.Workers)
		} else {
			what = fmt.Sprintf("drain %s chosen by %s", format.Count(int64(a.Count), "workers"), a.Select)
		}
		if a.GraceMS != nil {
			what += ", grace " + format.Quantity(*a.GraceMS, "ms")
		} else {
			what += ", no grace deadline"
		}
		sched = append(sched, item(fmt.Sprintf("Action %d at %s", i+1, format.Quantity(a.AtMS, "ms")), what))
	}
	if len(sched) == 0 {
		sched = append(sched, item("Scale-in", "none"))
	}
	groups = append(groups, templates.ScenarioGroup{Title: "Schedule", Items: sched})
	wl := []templates.ScenarioItem{field(workloadTypeField)}
	if fields, ok := workloadFields(sc.Workload.Type); ok {
		for _, fs := range fields {
			wl = append(wl, field(fs))
		}
	}
	groups = append(groups, templates.ScenarioGroup{Title: "Workload", Items: wl})
	return groups
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
	}
	v, ok := lookup(tree, fs.Path)
	if !ok || v == nil {
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
		if fs.Kind == kindInt && fs.Unit != "" {
			return format.Count(int64(f), fs.Unit)
		}
		return format.Quantity(f, fs.Unit)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
