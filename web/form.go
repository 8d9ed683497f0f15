package web

import "strings"

// The scenario form, one job per file:
//
//	form_fields.go    the field table: every field's JSON path, label, kind and help
//	form_defaults.go  each field's default, read from the simulator's default scenario
//	form_decode.go    reading a posted form into a scenarioForm
//	form_json.go      turning a scenarioForm into scenario JSON for sim.Parse
//	form_prefill.go   a scenarioForm from defaults, or from a scenario (preset, stored run)
//	form_errors.go    validating in one pass and placing each problem beside its field
//	form_view.go      the page model the template renders
//	page_form.go      the handlers

// scenarioForm is what the form holds: every field's text by name, and the schedule rows in
// order (each a map of its field suffixes: at_ms, workers, …).
type scenarioForm struct {
	values map[string]string
	rows   []map[string]string
	// shown is how many schedule rows the posted page displayed; a re-render keeps at least as
	// many so that nothing the user laid out disappears.
	shown int
	// rowsDropped counts the schedule rows of a post beyond maxScheduleRows: they are not kept,
	// and the schedule says so.
	rowsDropped int
}

func rowIsEmpty(row map[string]string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}
