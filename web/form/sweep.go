package form

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
)

// MaxAxisRows is how many axis rows the sweep form offers (the API's limit).
const MaxAxisRows = whatif.MaxAxes

// maxRangeValues bounds the values a start/stop/step range expands to.
const maxRangeValues = 1000

// AxisRow is one row of the sweep form: a field path and either a list of values or a start,
// stop and step.
type AxisRow struct {
	Path, Values, Start, Stop, Step string
}

// Sweep is the sweep form: the scenario as JSON and MaxAxisRows axis rows, empty ones
// included.
type Sweep struct {
	Scenario string
	Axes     [MaxAxisRows]AxisRow
	// rowOf maps an axis of the request to its row of the form (empty rows are left out).
	rowOf []int
}

// DefaultSweep is the sweep form before anything is posted: two axes filled as an example.
func DefaultSweep() *Sweep {
	f := &Sweep{}
	f.Axes[0] = AxisRow{Path: "kvcr.bandwidth_gbps", Values: "5, 10, 20, 40"}
	f.Axes[1] = AxisRow{Path: "kvcr.reject_draining_sources", Values: "true, false"}
	return f
}

func axisName(i int, part string) string { return "axis" + strconv.Itoa(i) + "." + part }

// SweepFromValues reads a posted sweep form.
func SweepFromValues(v url.Values) *Sweep {
	f := &Sweep{Scenario: v.Get(ScenarioJSONField)}
	for i := range f.Axes {
		f.Axes[i] = AxisRow{Path: v.Get(axisName(i, "path")), Values: v.Get(axisName(i, "values")),
			Start: v.Get(axisName(i, "start")), Stop: v.Get(axisName(i, "stop")), Step: v.Get(axisName(i, "step"))}
	}
	return f
}

// Request is the sweep the form asks for, or the problems that keep it from being asked (a row
// with a path and no values, a range that does not expand), each beside its row.
func (f *Sweep) Request() (runs.SweepRequest, JobErrors) {
	req := runs.SweepRequest{Scenario: json.RawMessage(f.Scenario)}
	var errs JobErrors
	f.rowOf = f.rowOf[:0]
	for i, row := range f.Axes {
		path := strings.TrimSpace(row.Path)
		list := strings.TrimSpace(row.Values)
		if path == "" {
			continue
		}
		ax := whatif.Axis{Path: path}
		switch {
		case list != "":
			for _, tok := range strings.Split(list, ",") {
				ax.Values = append(ax.Values, whatif.ParseValue(strings.TrimSpace(tok)))
			}
		case row.Start != "" || row.Stop != "" || row.Step != "":
			vals, problem := valueRange(row.Start, row.Stop, row.Step)
			if problem != "" {
				errs.add(axisName(i, "start"), fmt.Sprintf("field %d (%s): %s", i+1, path, problem), problem)
				continue
			}
			ax.Values = vals
		default:
			msg := "give a list of values, or a start, stop and step"
			errs.add(axisName(i, "values"), fmt.Sprintf("field %d (%s): %s", i+1, path, msg), msg)
			continue
		}
		req.Axes = append(req.Axes, ax)
		f.rowOf = append(f.rowOf, i)
	}
	return req, errs
}

var axisPath = regexp.MustCompile(`^axes\[(\d+)\](\.path)?`)

// Refused places the run service's refusal of the form's request: an axis's problem beside its
// row, the scenario's beside the scenario box.
func (f *Sweep) Refused(message string, fields []sim.FieldError) JobErrors {
	return refused(message, fields, func(path string) (string, bool) {
		m := axisPath.FindStringSubmatch(path)
		if m == nil {
			return "", false
		}
		i, err := strconv.Atoi(m[1])
		if err != nil || i >= len(f.rowOf) {
			return "", true
		}
		if m[2] != "" {
			return axisName(f.rowOf[i], "path"), true
		}
		if strings.TrimSpace(f.Axes[f.rowOf[i]].Values) == "" {
			return axisName(f.rowOf[i], "start"), true
		}
		return axisName(f.rowOf[i], "values"), true
	})
}

// Fill puts the form's text and problems into the page.
func (f *Sweep) Fill(p *templates.SweepNewPage, errs JobErrors) {
	p.Scenario = f.Scenario
	p.AxisPaths, p.AxisLists = make([]string, len(f.Axes)), make([]string, len(f.Axes))
	p.AxisStarts, p.AxisStops, p.AxisSteps = make([]string, len(f.Axes)), make([]string, len(f.Axes)), make([]string, len(f.Axes))
	for i, row := range f.Axes {
		p.AxisPaths[i], p.AxisLists[i] = row.Path, row.Values
		p.AxisStarts[i], p.AxisStops[i], p.AxisSteps[i] = row.Start, row.Stop, row.Step
	}
	p.Errors, p.FieldErrors = errs.List, errs.Beside()
}

// valueRange expands start, stop, step into numbers (stop included when the steps land on it).
// Every bound is checked before the loop: the numbers must be finite, and each step must move
// the value (at 1e300 a step of 1 does not), so the loop ends after at most maxRangeValues.
func valueRange(start, stop, step string) ([]any, string) {
	a, err1 := strconv.ParseFloat(strings.TrimSpace(start), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(stop), 64)
	d, err3 := strconv.ParseFloat(strings.TrimSpace(step), 64)
	finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case err1 != nil && !errors.Is(err1, strconv.ErrRange), err2 != nil && !errors.Is(err2, strconv.ErrRange),
		err3 != nil && !errors.Is(err3, strconv.ErrRange):
		return nil, "start, stop and step must all be numbers"
	case !finite(a) || !finite(b) || !finite(d):
		return nil, "start, stop and step must be finite numbers (not NaN, Inf or beyond ±1.8e308)"
	case d <= 0:
		return nil, "step must be a positive number"
	case b < a:
		return nil, "stop must not be below start"
	case (b-a)/d+1 > maxRangeValues:
		return nil, fmt.Sprintf("the range gives more than %d values; use a larger step", maxRangeValues)
	case a != b && (a+d == a || b-d == b):
		return nil, "the step is too small for numbers this large: each step must change the value; use a larger step"
	}
	var out []any
	for k := 0; k < maxRangeValues; k++ {
		v := a + float64(k)*d
		if v > b+d*1e-9 {
			break
		}
		if r := math.Round(v*1e9) / 1e9; finite(r) { // 0.1 + 0.2 is 0.3 here
			v = r
		}
		out = append(out, json.Number(strconv.FormatFloat(v, 'f', -1, 64)))
		if a == b {
			break
		}
	}
	return out, ""
}
