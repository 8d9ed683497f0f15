package form

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// Invalid is a posted form that does not make a valid scenario: the form as it was posted,
// with every problem placed beside its field. Handlers render it as the form again (422).
type Invalid struct {
	Form *Form
	Errs Errors
}

func (e *Invalid) Error() string {
	return fmt.Sprintf("the scenario form has %d %s", e.Errs.count, format.Plural(int64(e.Errs.count), "problem", "problems"))
}

// Errors places validation errors beside their fields.
type Errors struct {
	// byField holds the messages of each form field, by field name.
	byField map[string][]string
	// schedule holds problems with the schedule as a whole.
	schedule []string
	// unplaced are problems no field shows ("path: message"); with pasted JSON, every problem.
	unplaced []string
	// rawMode says the problems are those of the pasted scenario JSON.
	rawMode bool
	count   int
}

// NoErrors is a form without problems.
func NoErrors() Errors { return Errors{byField: map[string][]string{}} }

// Count is how many problems the form has.
func (fe Errors) Count() int { return fe.count }

func (fe *Errors) addToField(name, msg string) {
	fe.byField[name] = append(fe.byField[name], msg)
	fe.count++
}

// Scenario validates a form in one pass: the fields that convert and every rule of
// sim.Parse, so that four bad fields give four errors at once. A field that did not convert is
// left out of the document (sim.Parse then holds its default); sim.Parse's problems that land on
// a field the form already faulted are dropped as consequences of the first. A filled "paste
// the whole scenario" box wins over the fields. The error is an *Invalid when the user has
// something to fix.
func Scenario(form *Form, env sim.ParseEnv) (*sim.Scenario, error) {
	raw := strings.TrimSpace(form.values[RawJSONField])
	if raw != "" {
		sc, err := sim.Parse([]byte(raw), env)
		if err == nil {
			return sc, nil
		}
		invalid, ok := errors.AsType[*sim.ValidationError](err)
		if !ok {
			return nil, err
		}
		fe := NoErrors()
		fe.rawMode = true
		for _, e := range invalid.Errors {
			fe.unplaced = append(fe.unplaced, e.String())
		}
		fe.count = len(invalid.Errors)
		return nil, &Invalid{Form: form, Errs: fe}
	}

	doc, convErrs, rowOf := form.toJSON()
	fe := NoErrors()
	if form.rowsDropped > 0 {
		fe.schedule = append(fe.schedule, fmt.Sprintf(
			"the form sent %d more non-empty rows than the %d a schedule may have; they were not kept. Put that many actions in the pasted scenario JSON, where the limit is reported by path, or split the schedule into several scenarios",
			form.rowsDropped, maxScheduleRows))
		fe.count++
	}
	fe.place(convErrs, rowOf, nil)
	faulted := map[string]bool{}
	for name := range fe.byField {
		faulted[name] = true
	}
	sc, err := sim.Parse(doc, env)
	if err != nil {
		invalid, ok := errors.AsType[*sim.ValidationError](err)
		if !ok {
			return nil, err
		}
		fe.place(invalid.Errors, rowOf, faulted)
	}
	if fe.count > 0 {
		return nil, &Invalid{Form: form, Errs: fe}
	}
	return sc, nil
}

// place maps sim.Parse paths to form field names; rowOf translates scale_in indices of the JSON
// back to rows of the form. Problems that land on a field in skip are left out.
func (fe *Errors) place(errs []sim.FieldError, rowOf []int, skip map[string]bool) {
	for _, e := range errs {
		name, ok := fieldForPath(e.Path, rowOf)
		switch {
		case ok && skip[name]:
		case ok:
			fe.addToField(name, e.Message)
		case e.Path == "scale_in":
			fe.schedule = append(fe.schedule, e.Message)
			fe.count++
		default:
			fe.unplaced = append(fe.unplaced, e.String())
			fe.count++
		}
	}
}

var indexSegment = regexp.MustCompile(`^scale_in\[(\d+)\](.*)$`)

// fieldForPath finds the form field that shows an error at path: the field itself, else the
// closest enclosing field (workload.requests[2].id → workload.requests).
func fieldForPath(path string, rowOf []int) (string, bool) {
	if m := indexSegment.FindStringSubmatch(path); m != nil {
		i, err := strconv.Atoi(m[1])
		if err != nil {
			return "", false
		}
		if i < len(rowOf) {
			i = rowOf[i]
		}
		field := strings.TrimPrefix(m[2], ".")
		if cut := strings.IndexAny(field, ".["); cut >= 0 {
			field = field[:cut]
		}
		for _, fs := range scheduleFields {
			if fs.Path == field {
				return scheduleFieldName(i, fs), true
			}
		}
		// An error about the action as a whole (e.g. neither workers nor count) goes beside
		// its worker ids.
		return fmt.Sprintf("scale_in[%d].workers", i), true
	}
	switch {
	case path == "workload.trace" || strings.HasPrefix(path, "workload.trace.name") ||
		strings.HasPrefix(path, "workload.trace.sha256") || strings.HasPrefix(path, "workload.trace.path"):
		return TraceSourceField, true
	case path == "workload" || path == "workload.sessions":
		return workloadTypeField.Path, true
	}
	if policyKey.MatchString(path) {
		return path, true
	}
	known := map[string]bool{}
	singleFields(func(fs fieldSpec) { known[fs.Path] = true })
	for p := path; p != ""; {
		if known[p] {
			return p, true
		}
		cut := strings.LastIndexAny(p, ".[")
		if cut < 0 {
			break
		}
		p = p[:cut]
	}
	return "", false
}

// AdmissionError shows an admission refusal in the form: beside the fields that drive the
// estimate, or at the top when the scenario was pasted as JSON.
func AdmissionError(form *Form, err error) error {
	invalid, ok := errors.AsType[*sim.ValidationError](err)
	if !ok {
		return err
	}
	fe := NoErrors()
	if strings.TrimSpace(form.values[RawJSONField]) != "" {
		fe.rawMode = true
		for _, e := range invalid.Errors {
			fe.unplaced = append(fe.unplaced, e.String())
		}
		fe.count = len(invalid.Errors)
	} else {
		fe.place(invalid.Errors, nil, nil)
	}
	return &Invalid{Form: form, Errs: fe}
}
