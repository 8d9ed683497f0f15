package form

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// behaviorView adds the behavior editor, the model-3 shorthand (when the scenario has one a
// behavior cannot hold) and the external-average warning to the page model.
func (v *formView) behaviorView() {
	f := v.form
	v.page.AvgWarning = strings.TrimSpace(f.values[SourcePath]) == sim.SourceExternal && strings.TrimSpace(f.values[AggregatePath]) == sim.AggregateAvg
	v.page.FleetWarning = fleetWarning(f)
	for i, fd := range v.page.Autoscaler.Fields {
		switch fd.Name {
		case SourcePath:
			v.page.Autoscaler.Fields[i].Attrs = templ.Attributes{"data-autoscaler-source": true}
		case AggregatePath:
			v.page.Autoscaler.Fields[i].Attrs = templ.Attributes{"data-autoscaler-aggregate": true}
		case MetricPath:
			v.page.Autoscaler.Fields[i].Attrs = templ.Attributes{"data-autoscaler-metric": true}
		case TargetPath:
			// A kv_usage metric proposes a fraction (app.js swaps the value as the metric changes).
			v.page.Autoscaler.Fields[i].Attrs = templ.Attributes{"data-autoscaler-target": true}
			if strings.TrimSpace(f.values[MetricPath]) == sim.MetricKVUsage {
				v.page.Autoscaler.Fields[i].Placeholder = "0.7"
			}
		}
	}
	for _, fs := range shorthandGroup.Fields {
		if strings.TrimSpace(f.values[fs.Path]) != "" || v.Errs.byField[fs.Path] != nil {
			set := v.fieldset(shorthandGroup, "")
			v.page.Shorthand = &set
			break
		}
	}

	ed := &v.page.Behavior
	ed.Mode = v.field(behaviorModeField, BehaviorModePath, "Autoscaler · ", f.values[BehaviorModePath])
	ed.Mode.Attrs = templ.Attributes{"data-behavior-mode": true}
	tolerance := cmpText(f.values["autoscaler.tolerance"], formDefaults["autoscaler.tolerance"])
	downWindow := cmpText(f.values[DownscaleWindowPath], formDefaults[DownscaleWindowPath])
	fields := behaviorFields()
	for _, dir := range directions {
		d := templates.BehaviorDirection{Key: dir, Legend: directionLabel(dir), RowsName: policyRowsKey(dir)}
		context := "Behavior · " + d.Legend + " · "
		for _, fs := range fields {
			if !strings.HasPrefix(fs.Path, BehaviorModePath+"."+dir+".") {
				continue
			}
			fd := v.field(fs, fs.Path, context, f.values[fs.Path])
			switch {
			case strings.HasSuffix(fs.Path, ".window_ms") && dir == dirUp:
				fd.Placeholder = "0"
				fd.Help += " Empty = 0 (Kubernetes' default)."
			case strings.HasSuffix(fs.Path, ".window_ms"):
				fd.Placeholder = downWindow
				fd.Help += " Empty = the downscale stabilisation (" + downWindow + ")."
			case strings.HasSuffix(fs.Path, ".tolerance"):
				fd.Placeholder = tolerance
			}
			d.Fields = append(d.Fields, fd)
		}
		defaults := defaultPolicies[dir]
		var words []string
		for _, p := range defaults {
			h := policyHelp(dir, p.Type, strconv.Itoa(p.Value), strconv.FormatInt(p.PeriodMS, 10))
			words = append(words, strings.ToLower(h[:1])+strings.TrimSuffix(h[1:], "."))
		}
		d.Note = "Policies limit the change per period (the policies of the direction's earlier scale events count); empty rows are ignored, and without a policy Kubernetes' default applies: " +
			strings.Join(words, ", or ") + "."
		rows := f.policies[dir]
		n := max(len(rows), f.policyShown[dir])
		if len(rows) == 0 {
			n = max(n, len(defaults))
		}
		n = min(n, maxPolicyRows)
		for i := range n {
			var vals map[string]string
			if i < len(rows) {
				vals = rows[i]
			}
			row := templates.PolicyRow{Index: i}
			rowContext := fmt.Sprintf("%spolicy %d · ", context, i+1)
			for _, fs := range policyFields {
				fd := v.field(fs, policyFieldName(dir, i, fs.Path), rowContext, vals[fs.Path])
				if len(rows) == 0 && i < len(defaults) {
					// Kubernetes' default policies, as placeholders of the empty rows.
					switch fs.Path {
					case "value":
						fd.Placeholder = strconv.Itoa(defaults[i].Value)
					case "period_ms":
						fd.Placeholder = strconv.FormatInt(defaults[i].PeriodMS, 10)
					case "type":
						fd.Options[0].Label = "— (default " + defaults[i].Type + ")"
					}
				}
				row.Fields = append(row.Fields, fd)
			}
			row.Help = policyHelp(dir, vals["type"], vals["value"], vals["period_ms"])
			d.Policies = append(d.Policies, row)
		}
		ed.Directions = append(ed.Directions, d)
	}
}

// cmpText is text, or def when text is empty.
func cmpText(text, def string) string {
	if t := strings.TrimSpace(text); t != "" {
		return t
	}
	return def
}

// fleetWarning is sim.FleetOutsideBounds for the form's values: an autoscaler chosen and
// fleet.workers outside min_workers..max_workers (an empty max is the fleet's workers).
func fleetWarning(f *Form) string {
	if strings.TrimSpace(f.values[ScaleInModePath]) != ModeAutoscaler {
		return ""
	}
	n, err := strconv.Atoi(strings.TrimSpace(f.values["fleet.workers"]))
	if err != nil {
		return ""
	}
	lo, hi := 1, n
	if v, err := strconv.Atoi(strings.TrimSpace(f.values["autoscaler.min_workers"])); err == nil {
		lo = v
	}
	if v, err := strconv.Atoi(strings.TrimSpace(f.values["autoscaler.max_workers"])); err == nil {
		hi = v
	}
	if lo > hi {
		return "" // the form's own error says so
	}
	return sim.FleetOutsideBounds(&sim.Scenario{Fleet: sim.Fleet{Workers: n}, Autoscaler: &sim.Autoscaler{MinWorkers: lo, MaxWorkers: hi}})
}
