// Package form is the scenario form, one job per file:
//
//	fields.go    the field table: every field's JSON path, label, kind and help
//	defaults.go  each field's default, read from the simulator's default scenario
//	decode.go    reading a posted form into a Form
//	json.go      turning a Form into scenario JSON for sim.Parse
//	prefill.go   a Form from defaults, or from a scenario (preset, stored run)
//	errors.go    validating in one pass and placing each problem beside its field
//	view.go      the page model the template renders
//	summary.go   a scenario's inputs as the form asks for them, for the run page
//	sweep.go     the sweep form (its axes) read into a sweep request
//	pool_autoscalers.go  an autoscaler per pool (autoscaler.prefill / .decode) in the Pools section
//	plan.go      the plan form (its goal, one of whatif's plan kinds, and limits) read into a plan request
//
// The handlers are web's (web/page_form.go; the sweep and plan forms' web/page_sweep.go,
// web/page_plan.go and web/page_whatif_form.go).
package form

import (
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// Form is what the form holds: every field's text by name, and the schedule rows in
// order (each a map of its field suffixes: at_ms, workers, …).
type Form struct {
	values map[string]string
	rows   []map[string]string
	// shown is how many schedule rows the posted page displayed; a re-render keeps at least as
	// many so that nothing the user laid out disappears.
	shown int
	// rowsDropped counts the schedule rows of a post beyond maxScheduleRows: they are not kept,
	// and the schedule says so.
	rowsDropped int
	// policies are the behavior's policy rows by direction (scale_up, scale_down), empty rows
	// dropped; policyShown is how many rows each direction displayed.
	policies    map[string][]map[string]string
	policyShown map[string]int
}

func rowIsEmpty(row map[string]string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// WorkloadTypePath is the field of the workload type.
const WorkloadTypePath = "workload.type"

// Get is the text of the field name; Set replaces it (a prefill: a preset's JSON in the raw
// box, a trace chosen, a calibration's timing).
func (f *Form) Get(name string) string { return f.values[name] }

// Set replaces the text of the field name.
func (f *Form) Set(name, text string) { f.values[name] = text }

// AddRow shows one more schedule row (the no-JavaScript "Add row").
func (f *Form) AddRow() { f.shown = max(f.shown, len(f.rows)) + 1 }

// RemoveRow removes schedule row i, if there is one, and shows one row less ("Remove").
func (f *Form) RemoveRow(i int) {
	if i >= 0 && i < len(f.rows) {
		f.rows = append(f.rows[:i], f.rows[i+1:]...)
	}
	f.shown = max(f.shown-1, 0)
}

// View is the page model of the form with its problems and the traces on offer.
func (f *Form) View(page templates.Page, errs Errors, traceOptions [][2]string) templates.FormPage {
	return f.view(page, errs, traceOptions)
}

// JSON is the scenario JSON the form gives, with the problems found before sim.Parse.
func (f *Form) JSON() (doc []byte, errs []sim.FieldError) {
	doc, errs, _ = f.toJSON()
	return doc, errs
}
