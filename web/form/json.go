package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// toJSON turns the form into a scenario JSON document for sim.Parse. A field whose text does not
// convert (a number that is not one) is reported in errs, in the same shape as sim.Parse's
// errors, and left out of the document, so that sim.Parse still checks every other field and the
// user sees every problem at once. Only the chosen workload type's fields are used. rowOf maps
// the index of each scale_in action in the JSON back to its row in the form (empty rows are
// skipped).
func (f *Form) toJSON() (doc []byte, errs []sim.FieldError, rowOf []int) {
	root := map[string]any{}
	put := func(fs fieldSpec, name, text string, into map[string]any, key string) {
		val, msg := convertField(fs, text)
		if msg != "" {
			errs = append(errs, sim.FieldError{Path: name, Message: msg})
			return
		}
		if val != nil {
			into[key] = val
		}
	}
	putSingle := func(fs fieldSpec) {
		parent, key := mapAt(root, fs.Path)
		if fs.Kind == kindTraceSource {
			// The choice names the member it sets: "name:mooncake-conversation" → trace.name.
			val, msg := convertField(fs, f.values[fs.Path])
			if msg != "" {
				errs = append(errs, sim.FieldError{Path: fs.Path, Message: msg})
			} else if choice, ok := val.([2]string); ok {
				parent[choice[0]] = choice[1]
			}
			return
		}
		put(fs, fs.Path, f.values[fs.Path], parent, key)
	}

	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			putSingle(fs)
		}
	}
	dropEmptySLO(root)
	f.poolsJSON(root, put)

	schedule := []any{}
	// With the autoscaler chosen it replaces the schedule: the rows stay in the form, unsent.
	autoscaled := f.autoscalerJSON(root, put)
	for i, row := range f.rows {
		if autoscaled || rowIsEmpty(row) {
			continue
		}
		action := map[string]any{}
		jsonIndex := len(schedule)
		for _, fs := range scheduleFields {
			put(fs, scheduleFieldName(jsonIndex, fs), row[fs.Path], action, fs.Path)
		}
		schedule = append(schedule, action)
		rowOf = append(rowOf, i)
	}
	root["scale_in"] = schedule

	putSingle(workloadTypeField)
	wtype := strings.TrimSpace(f.values[workloadTypeField.Path])
	if fields, ok := workloadFields(wtype); ok {
		for _, fs := range fields {
			putSingle(fs)
		}
	}

	doc, err := json.Marshal(root)
	if err != nil {
		errs = append(errs, sim.FieldError{Message: "the form could not be encoded: " + err.Error()})
	}
	return doc, errs, rowOf
}

// scheduleFieldName is the name of a schedule field in row (or action) i.
func scheduleFieldName(i int, fs fieldSpec) string {
	return fmt.Sprintf("scale_in[%d].%s", i, fs.Path)
}

// convertField turns a field's text into its JSON value; nil means "left empty: use the
// default". The error text follows sim.Parse's style: what is wrong and what to type instead.
// A trace source converts to its [member, value] pair.
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
	case kindIDList:
		return parseWorkerIDs(text)
	case kindNullableInt, kindNullableFloat:
		if strings.EqualFold(text, "none") {
			return json.RawMessage("null"), ""
		}
		inner := fs
		inner.Kind = map[fieldKind]fieldKind{kindNullableInt: kindInt, kindNullableFloat: kindFloat}[fs.Kind]
		v, msg := convertField(inner, text)
		if msg != "" {
			msg += `, or "none"`
		}
		return v, msg
	case kindStages:
		return convertStages(text)
	case kindJSON:
		// Passed through untouched so that sim.Parse reports its problems by path.
		if !json.Valid([]byte(text)) {
			return nil, "is not valid JSON: " + jsonSyntaxError(text)
		}
		return json.RawMessage(text), ""
	case kindTraceSource:
		kind, ref, _ := strings.Cut(text, ":")
		if (kind != "name" && kind != "sha256") || ref == "" {
			return nil, "choose a built-in or an uploaded trace"
		}
		return [2]string{kind, ref}, ""
	default:
		return text, ""
	}
}

// parseWorkerIDs reads "12, 13 14" as [12, 13, 14].
func parseWorkerIDs(text string) (any, string) {
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

// jsonSyntaxError says where JSON text stops being valid, with its line.
func jsonSyntaxError(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := 1 + bytes.Count([]byte(text[:min(int(syn.Offset), len(text))]), []byte("\n"))
		return fmt.Sprintf("%s (line %d)", syn.Error(), line)
	}
	if err != nil {
		return err.Error()
	}
	return "unexpected content"
}
