package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// scenarioForm is what the form holds: every field's text by name, and the schedule rows in
// order (each a map of its field suffixes: at_ms, workers, …).
type scenarioForm struct {
	values map[string]string
	rows   []map[string]string
	// shown is how many schedule rows the posted page displayed; a re-render keeps at least as
	// many so that nothing the user laid out disappears.
	shown int
}

// defaultForm is the form of a fresh page: every default filled in.
func defaultForm() *scenarioForm {
	f := &scenarioForm{values: map[string]string{}}
	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			f.values[fs.Path] = fs.Default
		}
	}
	f.values[workloadTypeField.Path] = workloadTypeField.Default
	for _, w := range workloadGroups {
		for _, fs := range w.Group.Fields {
			f.values[fs.Path] = fs.Default
		}
	}
	f.values[traceSourceField] = "name:" + sim.BuiltinMooncakeConversation
	return f
}

var rowKey = regexp.MustCompile(`^scale_in\[(\d{1,4})\]\.([a-z_]+)$`)

// formFromValues reads a posted form. Schedule rows are taken in index order, whatever the
// numbering (app.js renumbers, but a hand-made post may skip numbers).
func formFromValues(v url.Values) *scenarioForm {
	f := &scenarioForm{values: map[string]string{}}
	rows := map[int]map[string]string{}
	for key, vals := range v {
		if len(vals) == 0 {
			continue
		}
		val := vals[0]
		if m := rowKey.FindStringSubmatch(key); m != nil {
			i, _ := strconv.Atoi(m[1])
			if rows[i] == nil {
				rows[i] = map[string]string{}
			}
			rows[i][m[2]] = val
			continue
		}
		f.values[key] = val
	}
	if n, err := strconv.Atoi(v.Get("scale_in_rows")); err == nil {
		f.shown = min(max(n, 0), sim.MaxScaleInActions)
	}
	delete(f.values, "scale_in_rows")
	idx := make([]int, 0, len(rows))
	for i := range rows {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		f.rows = append(f.rows, rows[i])
	}
	return f
}

func rowIsEmpty(row map[string]string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// toJSON turns the form into a scenario JSON document for sim.Parse. Numbers that do not parse
// are reported here, by field, in the same shape as sim.Parse's errors. rowOf maps the index of
// each scale_in action in the JSON back to its row in the form (empty rows are skipped).
func (f *scenarioForm) toJSON() (doc []byte, errs []sim.FieldError, rowOf []int) {
	root := map[string]any{}
	add := func(fs fieldSpec, name, text string, into map[string]any, key string) {
		val, err := convertField(fs, text)
		if err != "" {
			errs = append(errs, sim.FieldError{Path: name, Message: err})
			return
		}
		if val != nil {
			into[key] = val
		}
	}
	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			parent, key := mapAt(root, fs.Path)
			add(fs, fs.Path, f.values[fs.Path], parent, key)
		}
	}

	schedule := []any{}
	for i, row := range f.rows {
		if rowIsEmpty(row) {
			continue
		}
		action := map[string]any{}
		jsonIndex := len(schedule)
		for _, fs := range scheduleFields {
			name := fmt.Sprintf("scale_in[%d].%s", jsonIndex, fs.Path)
			text := row[fs.Path]
			if fs.Path == "workers" {
				if ids, err := parseWorkerIDs(text); err != "" {
					errs = append(errs, sim.FieldError{Path: name, Message: err})
				} else if ids != nil {
					action["workers"] = ids
				}
				continue
			}
			add(fs, name, text, action, fs.Path)
		}
		schedule = append(schedule, action)
		rowOf = append(rowOf, i)
	}
	root["scale_in"] = schedule

	wtype := strings.TrimSpace(f.values[workloadTypeField.Path])
	workload := map[string]any{"type": wtype}
	root["workload"] = workload
	switch wtype {
	case sim.WorkloadSessions:
		sessions := map[string]any{}
		workload["sessions"] = sessions
		for _, fs := range workloadFields(wtype) {
			add(fs, fs.Path, f.values[fs.Path], sessions, lastSegment(fs.Path))
		}
	case sim.WorkloadTrace:
		trace := map[string]any{}
		workload["trace"] = trace
		for _, fs := range workloadFields(wtype) {
			if fs.Path == traceSourceField {
				kind, ref, _ := strings.Cut(f.values[traceSourceField], ":")
				switch kind {
				case "name":
					trace["name"] = ref
				case "sha256":
					trace["sha256"] = ref
				default:
					errs = append(errs, sim.FieldError{Path: traceSourceField, Message: "choose a built-in or an uploaded trace"})
				}
				continue
			}
			add(fs, fs.Path, f.values[fs.Path], trace, lastSegment(fs.Path))
		}
	case sim.WorkloadRequests:
		text := strings.TrimSpace(f.values["workload.requests"])
		if text == "" {
			errs = append(errs, sim.FieldError{Path: "workload.requests", Message: "enter a JSON list of requests, like [{\"id\": \"r0\", \"at_ms\": 0, \"blocks\": [\"P*8\"], \"output_tokens\": 16}]"})
			break
		}
		// The list is passed through untouched so sim.Parse reports its problems by path.
		if !json.Valid([]byte(text)) {
			errs = append(errs, sim.FieldError{Path: "workload.requests", Message: "is not valid JSON: " + jsonSyntaxError(text)})
			break
		}
		workload["requests"] = json.RawMessage(text)
	default:
		errs = append(errs, sim.FieldError{Path: workloadTypeField.Path, Message: "choose sessions, trace or requests"})
	}
	doc, err := json.Marshal(root)
	if err != nil {
		errs = append(errs, sim.FieldError{Message: "the form could not be encoded: " + err.Error()})
	}
	return doc, errs, rowOf
}

func workloadFields(t string) []fieldSpec {
	for _, w := range workloadGroups {
		if w.Type == t {
			return w.Group.Fields
		}
	}
	return nil
}

// convertField turns a field's text into its JSON value; nil means "left empty: use the
// default". The error text follows sim.Parse's style: what is wrong and what to type instead.
func convertField(fs fieldSpec, text string) (any, string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, ""
	}
	switch fs.Kind {
	case kindInt:
		n, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(text, 64); ferr == nil {
				return nil, fmt.Sprintf("must be a whole number (got %q)", text)
			}
			return nil, fmt.Sprintf("must be a number (got %q)", text)
		}
		return n, ""
	case kindFloat:
		x, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Sprintf("must be a number (got %q)", text)
		}
		return x, ""
	case kindBool:
		switch text {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, fmt.Sprintf("must be true or false (got %q)", text)
	default:
		return text, ""
	}
}

// parseWorkerIDs reads "12, 13 14" as [12, 13, 14].
func parseWorkerIDs(text string) ([]int64, string) {
	parts := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
	if len(parts) == 0 {
		return nil, ""
	}
	ids := make([]int64, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Sprintf("must be worker ids separated by commas, like 14, 15 (%q is not a whole number)", p)
		}
		ids = append(ids, n)
	}
	return ids, ""
}

// mapAt returns the object that holds a dotted path's last key, creating the objects above it.
func mapAt(root map[string]any, path string) (map[string]any, string) {
	parts := strings.Split(path, ".")
	m := root
	for _, p := range parts[:len(parts)-1] {
		child, ok := m[p].(map[string]any)
		if !ok {
			child = map[string]any{}
			m[p] = child
		}
		m = child
	}
	return m, parts[len(parts)-1]
}

func lastSegment(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}

func jsonSyntaxError(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var syn *json.SyntaxError
	if errAs(err, &syn) {
		line := 1 + bytes.Count([]byte(text[:min(int(syn.Offset), len(text))]), []byte("\n"))
		return fmt.Sprintf("%s (line %d)", syn.Error(), line)
	}
	if err != nil {
		return err.Error()
	}
	return "unexpected content"
}

// formFromScenario fills the form from a complete scenario (a preset, a stored run), over the
// defaults so that the fields of the other workload types stay sensible.
func formFromScenario(sc *sim.Scenario) *scenarioForm {
	f := defaultForm()
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(sc.CanonicalJSON()))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return f
	}
	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			if v, ok := lookup(tree, fs.Path); ok {
				f.values[fs.Path] = jsonText(v)
			}
		}
	}
	if actions, ok := tree["scale_in"].([]any); ok {
		for _, a := range actions {
			obj, _ := a.(map[string]any)
			row := map[string]string{}
			for _, fs := range scheduleFields {
				v, ok := obj[fs.Path]
				if !ok {
					continue
				}
				if list, isList := v.([]any); isList {
					ids := make([]string, len(list))
					for i, id := range list {
						ids[i] = jsonText(id)
					}
					row[fs.Path] = strings.Join(ids, ", ")
					continue
				}
				row[fs.Path] = jsonText(v)
			}
			f.rows = append(f.rows, row)
		}
	}
	wl := sc.Workload
	f.values[workloadTypeField.Path] = wl.Type
	switch wl.Type {
	case sim.WorkloadSessions:
		for _, fs := range workloadFields(wl.Type) {
			if v, ok := lookup(tree, fs.Path); ok {
				f.values[fs.Path] = jsonText(v)
			}
		}
	case sim.WorkloadTrace:
		for _, fs := range workloadFields(wl.Type) {
			if v, ok := lookup(tree, fs.Path); ok {
				f.values[fs.Path] = jsonText(v)
			}
		}
		if wl.Trace != nil {
			if wl.Trace.SHA256 != "" {
				f.values[traceSourceField] = "sha256:" + wl.Trace.SHA256
			} else {
				f.values[traceSourceField] = "name:" + wl.Trace.Name
			}
			if wl.Trace.Limit == 0 {
				f.values["workload.trace.limit"] = ""
			}
		}
	case sim.WorkloadRequests:
		if b, err := json.MarshalIndent(wl.Requests, "", "  "); err == nil {
			f.values["workload.requests"] = string(b)
		}
	}
	return f
}

func lookup(tree map[string]any, path string) (any, bool) {
	var cur any = tree
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// formErrors places validation errors beside their fields: fieldErrs by form field name, and
// the rest (paths no field shows) as a list for the top of the page.
type formErrors struct {
	byField  map[string]string
	schedule string
	other    []string
	count    int
}

var indexSegment = regexp.MustCompile(`^scale_in\[(\d+)\](.*)$`)

// placeErrors maps sim.Parse paths to form field names. rowOf translates scale_in indices of the
// JSON back to rows of the form.
func placeErrors(errs []sim.FieldError, rowOf []int, rawMode bool) formErrors {
	fe := formErrors{byField: map[string]string{}, count: len(errs)}
	addTo := func(name, msg string) {
		if prev, ok := fe.byField[name]; ok {
			fe.byField[name] = prev + "; " + msg
			return
		}
		fe.byField[name] = msg
	}
	for _, e := range errs {
		if rawMode {
			fe.other = append(fe.other, e.String())
			continue
		}
		name, ok := fieldForPath(e.Path, rowOf)
		switch {
		case ok:
			addTo(name, e.Message)
		case e.Path == "scale_in":
			fe.schedule = e.Message
		default:
			fe.other = append(fe.other, e.String())
		}
	}
	if rawMode && len(errs) > 0 {
		fe.byField[rawJSONField] = fmt.Sprintf("%d problem(s) in this JSON, listed at the top of the page", len(errs))
	}
	return fe
}

// fieldForPath finds the form field that shows an error at path: the field itself, else the
// closest enclosing field (workload.requests[2].id → workload.requests).
func fieldForPath(path string, rowOf []int) (string, bool) {
	if m := indexSegment.FindStringSubmatch(path); m != nil {
		i, _ := strconv.Atoi(m[1])
		if i < len(rowOf) {
			i = rowOf[i]
		}
		rest := strings.TrimPrefix(m[2], ".")
		field := rest
		if cut := strings.IndexAny(field, ".["); cut >= 0 {
			field = field[:cut]
		}
		for _, fs := range scheduleFields {
			if fs.Path == field {
				return fmt.Sprintf("scale_in[%d].%s", i, field), true
			}
		}
		// An error about the action as a whole (e.g. neither workers nor count) goes beside
		// its worker ids.
		return fmt.Sprintf("scale_in[%d].workers", i), true
	}
	switch {
	case path == "workload.trace" || strings.HasPrefix(path, "workload.trace.name") ||
		strings.HasPrefix(path, "workload.trace.sha256") || strings.HasPrefix(path, "workload.trace.path"):
		return traceSourceField, true
	case path == "workload" || path == "workload.sessions" || path == "workload.requests":
		if path == "workload.requests" {
			return path, true
		}
		return workloadTypeField.Path, true
	}
	known := knownFieldNames()
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

func knownFieldNames() map[string]bool {
	names := map[string]bool{workloadTypeField.Path: true}
	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			names[fs.Path] = true
		}
	}
	for _, w := range workloadGroups {
		for _, fs := range w.Group.Fields {
			names[fs.Path] = true
		}
	}
	return names
}

// formView builds the page model. traceOptions are the trace choices (value, label).
func (f *scenarioForm) view(page templates.Page, errs formErrors, traceOptions [][2]string) templates.FormPage {
	field := func(fs fieldSpec, name, value string) templates.Field {
		fd := templates.Field{
			Name: name, Label: fs.Label, Unit: fs.Unit, Help: fs.Help, Value: value,
			Placeholder: fs.Default, Error: errs.byField[name],
		}
		if fs.Default != "" && fs.Kind != kindString {
			fd.Help = strings.TrimSpace(fd.Help + " Default " + fs.Default + ".")
		}
		switch fs.Kind {
		case kindInt, kindFloat:
			fd.Kind = "number"
		case kindBool:
			fd.Kind = "select"
			fd.Options = []templates.Option{
				{Value: "true", Label: "on", Selected: value == "true"},
				{Value: "false", Label: "off", Selected: value == "false"},
			}
		case kindSelect:
			fd.Kind = "select"
			opts := fs.Options
			if name == traceSourceField {
				opts = traceOptions
			}
			for _, o := range opts {
				fd.Options = append(fd.Options, templates.Option{Value: o[0], Label: o[1], Selected: o[0] == value})
			}
		default:
			fd.Kind = "text"
			if strings.Contains(name, "requests") {
				fd.Kind = "textarea"
				fd.Wide = true
				fd.Placeholder = ""
			}
		}
		return fd
	}
	p := templates.FormPage{Page: page, ErrorCount: errs.count, Errors: errs.other, ScheduleError: errs.schedule}
	for _, g := range generalGroups {
		fs := templates.Fieldset{Legend: g.Legend, Note: g.Note}
		for _, spec := range g.Fields {
			fs.Fields = append(fs.Fields, field(spec, spec.Path, f.values[spec.Path]))
		}
		p.General = append(p.General, fs)
	}
	used := len(f.rows)
	for used > 0 && rowIsEmpty(f.rows[used-1]) {
		used--
	}
	rows := max(used+1, minScheduleRows, f.shown)
	for i := range rows {
		row := templates.ScheduleRow{Index: i}
		var vals map[string]string
		if i < len(f.rows) {
			vals = f.rows[i]
		}
		for _, spec := range scheduleFields {
			row.Fields = append(row.Fields, field(spec, fmt.Sprintf("scale_in[%d].%s", i, spec.Path), vals[spec.Path]))
		}
		p.Schedule = append(p.Schedule, row)
	}
	p.ScheduleTemplate = templates.ScheduleRow{Index: rows}
	for _, spec := range scheduleFields {
		p.ScheduleTemplate.Fields = append(p.ScheduleTemplate.Fields, field(spec, fmt.Sprintf("scale_in[%d].%s", rows, spec.Path), ""))
	}
	p.WorkloadType = field(workloadTypeField, workloadTypeField.Path, f.values[workloadTypeField.Path])
	p.WorkloadType.Options = nil
	for _, o := range workloadTypeField.Options {
		p.WorkloadType.Options = append(p.WorkloadType.Options, templates.Option{Value: o[0], Label: o[1], Selected: o[0] == f.values[workloadTypeField.Path]})
	}
	for _, w := range workloadGroups {
		fs := templates.Fieldset{Legend: w.Group.Legend, Note: w.Group.Note, Workload: w.Type}
		for _, spec := range w.Group.Fields {
			fs.Fields = append(fs.Fields, field(spec, spec.Path, f.values[spec.Path]))
		}
		p.Workloads = append(p.Workloads, fs)
	}
	p.RawJSON = templates.Field{Name: rawJSONField, Label: "Scenario JSON", Kind: "textarea", Wide: true,
		Value: f.values[rawJSONField], Error: errs.byField[rawJSONField],
		Placeholder: `{"name": "…", "fleet": {"workers": 16}, "scale_in": [...], "workload": {...}}`,
		Help:        "Unknown fields, wrong types and out-of-range values are reported with their path."}
	return p
}
