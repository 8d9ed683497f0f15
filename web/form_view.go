package web

import (
	"fmt"
	"strings"

	"github.com/a-h/templ"
	"github.com/scalein-planner/scalein/templates"
)

// view builds the page model. traceOptions are the trace choices (value, label). The error
// summary lists every problem in page order, each linking to its field.
func (f *scenarioForm) view(page templates.Page, errs formErrors, traceOptions [][2]string) templates.FormPage {
	p := templates.FormPage{Page: page, ErrorCount: errs.count, SelectionNote: selectionNote}
	shown := map[string]bool{}
	field := func(fs fieldSpec, name, context, value string) templates.Field {
		fd := fieldView(fs, name, value, traceOptions)
		if msgs := errs.byField[name]; len(msgs) > 0 {
			shown[name] = true
			fd.Error = strings.Join(msgs, "; ")
			for _, m := range msgs {
				p.Problems = append(p.Problems, templates.Problem{Href: "#" + name, Text: context + fs.Label + ": " + m})
			}
		}
		return fd
	}

	for _, g := range generalGroups {
		set := templates.Fieldset{Legend: g.Legend, Note: g.Note}
		for _, fs := range g.Fields {
			set.Fields = append(set.Fields, field(fs, fs.Path, g.Legend+" · ", f.values[fs.Path]))
		}
		p.General = append(p.General, set)
	}

	p.ScheduleError = strings.Join(errs.schedule, "; ")
	for _, m := range errs.schedule {
		p.Problems = append(p.Problems, templates.Problem{Href: "#schedule", Text: "Scale-in schedule: " + m})
	}
	used := len(f.rows)
	for used > 0 && rowIsEmpty(f.rows[used-1]) {
		used--
	}
	rows := min(max(used+1, minScheduleRows, f.shown), maxScheduleRows)
	for i := range rows {
		row := templates.ScheduleRow{Index: i}
		var vals map[string]string
		if i < len(f.rows) {
			vals = f.rows[i]
		}
		context := fmt.Sprintf("Scale-in action %d · ", i+1)
		for _, fs := range scheduleFields {
			row.Fields = append(row.Fields, field(fs, scheduleFieldName(i, fs), context, vals[fs.Path]))
		}
		p.Schedule = append(p.Schedule, row)
	}
	p.ScheduleTemplate = templates.ScheduleRow{Index: rows}
	for _, fs := range scheduleFields {
		p.ScheduleTemplate.Fields = append(p.ScheduleTemplate.Fields, fieldView(fs, scheduleFieldName(rows, fs), "", nil))
	}

	p.WorkloadType = field(workloadTypeField, workloadTypeField.Path, "", f.values[workloadTypeField.Path])
	// app.js shows only the fieldset of the type this select chooses.
	p.WorkloadType.Attrs = templ.Attributes{"data-workload-type": true}
	for _, w := range workloadGroups {
		set := templates.Fieldset{Legend: w.Group.Legend, Note: w.Group.Note, Workload: w.Type}
		for _, fs := range w.Group.Fields {
			set.Fields = append(set.Fields, field(fs, fs.Path, w.Group.Legend+" · ", f.values[fs.Path]))
		}
		p.Workloads = append(p.Workloads, set)
	}

	p.RawJSON = templates.Field{Name: rawJSONField, Label: "Scenario JSON", Kind: "textarea", Wide: true,
		Value:       f.values[rawJSONField],
		Placeholder: `{"name": "…", "fleet": {"workers": 16}, "scale_in": [...], "workload": {...}}`,
		Help:        "Unknown fields, wrong types and out-of-range values are reported with their path."}
	if errs.rawMode {
		p.RawJSON.Error = fmt.Sprintf("%d problem(s) in this JSON, listed at the top of the page", errs.count)
		for _, m := range errs.unplaced {
			p.Problems = append(p.Problems, templates.Problem{Href: "#" + rawJSONField, Text: m})
		}
		return p
	}
	for _, m := range errs.unplaced {
		p.Problems = append(p.Problems, templates.Problem{Text: m})
	}
	// A problem placed on a field the page does not show must still be seen.
	for name, msgs := range errs.byField {
		if !shown[name] {
			for _, m := range msgs {
				p.Problems = append(p.Problems, templates.Problem{Text: name + ": " + m})
			}
		}
	}
	return p
}

// fieldView is one field's control: its kind, options, help (with the simulator's default) and
// placeholder.
func fieldView(fs fieldSpec, name, value string, traceOptions [][2]string) templates.Field {
	def := defaultText(fs)
	fd := templates.Field{Name: name, Label: fs.Label, Unit: fs.Unit, Help: fs.Help, Value: value, Placeholder: def}
	switch fs.Kind {
	case kindInt, kindFloat:
		fd.Kind = "number"
	case kindBool:
		fd.Kind = "select"
		fd.Options = []templates.Option{
			{Value: "true", Label: "on", Selected: value == "true"},
			{Value: "false", Label: "off", Selected: value == "false"},
		}
		fd.Placeholder = ""
		switch def {
		case "true":
			def = "on"
		case "false":
			def = "off"
		}
	case kindSelect, kindTraceSource:
		fd.Kind = "select"
		opts := fs.Options
		if fs.Kind == kindTraceSource {
			opts = traceOptions
		}
		for _, o := range opts {
			fd.Options = append(fd.Options, templates.Option{Value: o[0], Label: o[1], Selected: o[0] == value})
		}
		fd.Placeholder = ""
	case kindJSON:
		fd.Kind = "textarea"
		fd.Wide = true
	default:
		fd.Kind = "text"
	}
	if def != "" && fs.Kind != kindString {
		fd.Help = strings.TrimSpace(fd.Help + " Default " + def + ".")
	}
	return fd
}
