package form

import (
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// JobErrors are the problems of a sweep or plan form: every one listed at the top in the
// words the API uses, and each one whose field the form shows beside that field as well.
type JobErrors struct {
	// List is every problem, in order.
	List []string
	// byField holds the messages shown beside each field, by field name.
	byField map[string][]string
}

// Count is how many problems the form has.
func (e JobErrors) Count() int { return len(e.List) }

// Beside is what the form shows beside each field: its messages, joined; nil without problems.
func (e JobErrors) Beside() map[string]string {
	if len(e.byField) == 0 {
		return nil
	}
	out := make(map[string]string, len(e.byField))
	for name, msgs := range e.byField {
		out[name] = strings.Join(msgs, "; ")
	}
	return out
}

// add lists a problem and, when field is not "", places message beside that field.
func (e *JobErrors) add(field, listed, message string) {
	e.List = append(e.List, listed)
	if field == "" {
		return
	}
	if e.byField == nil {
		e.byField = map[string][]string{}
	}
	e.byField[field] = append(e.byField[field], message)
}

// refused places the run service's refusal of a job's request: message when it names no field,
// otherwise each field error beside the form field fieldOf gives for its path ("" for none).
// The paths of the request's own fields (axes, goal, constraints, search, name, origin) are the
// request's; every other path is the scenario's, and goes beside the scenario box.
func refused(message string, fields []sim.FieldError, fieldOf func(path string) (string, bool)) JobErrors {
	var e JobErrors
	if len(fields) == 0 {
		e.add("", message, "")
		return e
	}
	for _, fe := range fields {
		field, ok := fieldOf(fe.Path)
		if !ok {
			field = scenarioOf(fe.Path)
		}
		e.add(field, fe.String(), fe.Message)
	}
	return e
}

// scenarioOf is the field of a refusal that fieldOf did not place: the scenario box for the
// scenario's own paths, none for the request's other fields.
func scenarioOf(path string) string {
	for _, own := range []string{"name", "axes", "goal", "constraints", "search", "origin"} {
		if path == own || strings.HasPrefix(path, own+".") || strings.HasPrefix(path, own+"[") {
			return ""
		}
	}
	return ScenarioJSONField
}

// ScenarioJSONField is the sweep and plan forms' box of scenario JSON.
const ScenarioJSONField = "scenario"
