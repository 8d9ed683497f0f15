package form

import (
	"fmt"
	"strings"

	"github.com/a-h/templ"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// view builds the page model. traceOptions are the trace choices (value, label). The error
// summary lists every problem in page order, each linking to its field.
func (f *Form) view(page templates.Page, errs Errors, traceOptions [][2]string) templates.FormPage {
	v := &formView{
		form: f, Errs: errs, traceOptions: traceOptions, shown: map[string]bool{},
		page: templates.FormPage{Page: page, ErrorCount: errs.count, SelectionNote: selectionNote},
	}
	v.general()
	v.poolsView()
	v.model3View()
	v.schedule()
	v.workload()
	v.rawJSON()
	v.leftoverProblems()
	return v.page
}

// formView is the page model under construction.
type formView struct {
	form         *Form
	Errs         Errors
	traceOptions [][2]string
	page         templates.FormPage
	// shown marks the field names whose problems the page shows beside a field.
	shown map[string]bool
}

// field is one control with its problems, which also go to the summary; context names where
// the field is ("Fleet · ").
func (v *formView) field(fs fieldSpec, name, context, value string) templates.Field {
	fd := fieldView(fs, name, value, v.traceOptions)
	if msgs := v.Errs.byField[name]; len(msgs) > 0 {
		v.shown[name] = true
		fd.Error = strings.Join(msgs, "; ")
		for _, m := range msgs {
			v.page.Problems = append(v.page.Problems, templates.Problem{Href: "#" + name, Text: context + fs.Label + ": " + m})
		}
	}
	return fd
}

func (v *formView) fieldset(g fieldGroup, workload string) templates.Fieldset {
	set := templates.Fieldset{Legend: g.Legend, Note: g.Note, Workload: workload}
	for _, fs := range g.Fields {
		set.Fields = append(set.Fields, v.field(fs, fs.Path, g.Legend+" · ", v.form.values[fs.Path]))
	}
	return set
}

func (v *formView) general() {
	for _, g := range generalGroups {
		v.page.General = append(v.page.General, v.fieldset(g, ""))
	}
}

// schedule shows every row the user laid out, at least one empty row to fill in, and no more
// than maxScheduleRows.
func (v *formView) schedule() {
	f := v.form
	v.page.ScheduleError = strings.Join(v.Errs.schedule, "; ")
	for _, m := range v.Errs.schedule {
		v.page.Problems = append(v.page.Problems, templates.Problem{Href: "#schedule", Text: "Scale-in schedule: " + m})
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
			row.Fields = append(row.Fields, v.field(fs, scheduleFieldName(i, fs), context, vals[fs.Path]))
		}
		v.page.Schedule = append(v.page.Schedule, row)
	}
	v.page.ScheduleTemplate = templates.ScheduleRow{Index: rows}
	for _, fs := range scheduleFields {
		v.page.ScheduleTemplate.Fields = append(v.page.ScheduleTemplate.Fields, fieldView(fs, scheduleFieldName(rows, fs), "", nil))
	}
}

func (v *formView) workload() {
	v.page.WorkloadType = v.field(workloadTypeField, workloadTypeField.Path, "", v.form.values[workloadTypeField.Path])
	// app.js shows only the fieldset of the type this select chooses.
	v.page.WorkloadType.Attrs = templ.Attributes{"data-workload-type": true}
	for _, w := range workloadGroups {
		v.page.Workloads = append(v.page.Workloads, v.fieldset(w.Group, w.Type))
	}
}

// rawJSON is the "paste the whole scenario" box; when its JSON was the scenario, every problem
// is one of it, listed in the summary with a link to the box.
func (v *formView) rawJSON() {
	v.page.RawJSON = templates.Field{Name: RawJSONField, Label: "Scenario JSON", Kind: "textarea", Wide: true,
		Value:       v.form.values[RawJSONField],
		Placeholder: `{"name": "…", "fleet": {"workers": 16}, "scale_in": [...], "workload": {...}}`,
		Help:        "Unknown fields, wrong types and out-of-range values are reported with their path."}
	if !v.Errs.rawMode {
		return
	}
	v.page.RawJSON.Error = fmt.Sprintf("%d %s in this JSON, listed at the top of the page", v.Errs.count, format.Plural(int64(v.Errs.count), "problem", "problems"))
	for _, m := range v.Errs.unplaced {
		v.page.Problems = append(v.page.Problems, templates.Problem{Href: "#" + RawJSONField, Text: m})
	}
}

// leftoverProblems adds the problems no field shows to the summary, without links.
func (v *formView) leftoverProblems() {
	if v.Errs.rawMode {
		return
	}
	for _, m := range v.Errs.unplaced {
		v.page.Problems = append(v.page.Problems, templates.Problem{Text: m})
	}
	// A problem placed on a field the page does not show must still be seen.
	for name, msgs := range v.Errs.byField {
		if !v.shown[name] {
			for _, m := range msgs {
				v.page.Problems = append(v.page.Problems, templates.Problem{Text: name + ": " + m})
			}
		}
	}
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
		def = map[string]string{"true": "on", "false": "off"}[def]
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
	case kindJSON, kindStages:
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
