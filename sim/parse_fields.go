package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// fieldErrors collects every problem found in one scenario.
type fieldErrors struct {
	list []FieldError
}

func (e *fieldErrors) add(path, format string, args ...any) {
	e.list = append(e.list, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// objectView reads the members of one JSON object against a schema: each getter marks its key
// as known, fills the default when the key is absent and records an error (returning the
// default) when the value is unusable. finish reports the keys no getter asked for.
type objectView struct {
	errs  *fieldErrors
	path  string
	node  *jsonNode // nil when the object was omitted
	known []string  // member names a getter asked for; a slice, as objects are small
}

// openObject opens the member at path. A missing member (n == nil) reads as an empty object so
// every default applies; any non-object value is an error.
func openObject(errs *fieldErrors, path string, n *jsonNode) *objectView {
	v := &objectView{errs: errs, path: path}
	if n == nil {
		return v
	}
	if n.kind != kindObject {
		errs.add(path, "must be an object {…}, not %s", n.kind)
		return v
	}
	v.node = n
	return v
}

func (v *objectView) child(key string) string { return joinPath(v.path, key) }

// get returns the member's value, or nil when it is absent.
func (v *objectView) get(key string) *jsonNode {
	if !slices.Contains(v.known, key) {
		v.known = append(v.known, key)
	}
	if v.node == nil {
		return nil
	}
	for _, m := range v.node.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

func (v *objectView) has(key string) bool { return v.get(key) != nil }

// finish reports unknown members, suggesting the closest known name for a typo.
func (v *objectView) finish() {
	if v.node == nil {
		return
	}
	knownNames := slices.Sorted(slices.Values(v.known))
	for _, m := range v.node.members {
		if slices.Contains(knownNames, m.key) {
			continue
		}
		if s := ClosestName(strings.ToLower(m.key), knownNames); s != "" {
			v.errs.add(v.child(m.key), "unknown field; did you mean %q?", s)
		} else {
			v.errs.add(v.child(m.key), "unknown field; known fields here: %s", strings.Join(knownNames, ", "))
		}
	}
}

// intRange is an inclusive range for an integer field.
type intRange struct{ min, max int64 }

// integer reads an integer member. Values such as 16.0 or 1e3 are accepted because they are
// exact integers; 16.5, strings and null are not.
func (v *objectView) integer(key string, def int64, r intRange) int64 {
	n := v.get(key)
	if n == nil {
		return def
	}
	got, ok := asInteger(v.errs, fieldPath{v.path, key}, n, def)
	if !ok {
		return def
	}
	return checkIntRange(v.errs, fieldPath{v.path, key}, got, r, def)
}

// optionalInteger is integer for a member whose absence (or null) means "not set".
func (v *objectView) optionalInteger(key string, r intRange) *int64 {
	n := v.get(key)
	if n == nil || n.kind == kindNull {
		return nil
	}
	got, ok := asInteger(v.errs, fieldPath{v.path, key}, n, 0)
	if !ok {
		return nil
	}
	if got < r.min || got > r.max {
		checkIntRange(v.errs, fieldPath{v.path, key}, got, r, 0)
		return nil
	}
	return &got
}

// fieldPath is a member's path, joined only when an error needs it: building every path
// eagerly cost a large scenario more than parsing it.
type fieldPath struct{ base, key string }

func (p fieldPath) String() string {
	if p.key == "" {
		return p.base
	}
	return joinPath(p.base, p.key)
}

func asInteger(errs *fieldErrors, path fieldPath, n *jsonNode, def int64) (int64, bool) {
	if n.kind != kindNumber {
		errs.add(path.String(), "must be an integer, not %s%s", n.kind, gotSuffix(n))
		return def, false
	}
	if i, err := strconv.ParseInt(n.text, 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		errs.add(path.String(), "must be an integer of reasonable size (got %s)", n.text)
		return def, false
	}
	if f != math.Trunc(f) {
		errs.add(path.String(), "must be a whole number (got %s)", n.text)
		return def, false
	}
	if f < -9e18 || f > 9e18 {
		errs.add(path.String(), "must be an integer of reasonable size (got %s)", n.text)
		return def, false
	}
	return int64(f), true
}

func checkIntRange(errs *fieldErrors, path fieldPath, got int64, r intRange, def int64) int64 {
	if got < r.min {
		errs.add(path.String(), "must be ≥ %d (got %d)", r.min, got)
		return def
	}
	if got > r.max {
		errs.add(path.String(), "must be ≤ %d (got %d)", r.max, got)
		return def
	}
	return got
}

// floatRange is a range for a number field; the minimum is exclusive when minExclusive is set
// (bandwidths and rates must be strictly positive).
type floatRange struct {
	min          float64
	minExclusive bool
	max          float64
}

func (v *objectView) number(key string, def float64, r floatRange) float64 {
	n := v.get(key)
	if n == nil {
		return def
	}
	got, ok := asNumber(v.errs, fieldPath{v.path, key}, n)
	if !ok || !checkFloatRange(v.errs, fieldPath{v.path, key}, got, r) {
		return def
	}
	return got
}

func (v *objectView) optionalNumber(key string, r floatRange) *float64 {
	n := v.get(key)
	if n == nil || n.kind == kindNull {
		return nil
	}
	got, ok := asNumber(v.errs, fieldPath{v.path, key}, n)
	if !ok || !checkFloatRange(v.errs, fieldPath{v.path, key}, got, r) {
		return nil
	}
	return &got
}

func asNumber(errs *fieldErrors, path fieldPath, n *jsonNode) (float64, bool) {
	if n.kind != kindNumber {
		errs.add(path.String(), "must be a number, not %s%s", n.kind, gotSuffix(n))
		return 0, false
	}
	f, err := strconv.ParseFloat(n.text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		errs.add(path.String(), "must be a finite number (got %s)", n.text)
		return 0, false
	}
	if f == 0 {
		f = 0 // -0 would print as "-0" and give the same scenario a second id
	}
	return f, true
}

func checkFloatRange(errs *fieldErrors, path fieldPath, got float64, r floatRange) bool {
	if r.minExclusive && !(got > r.min) {
		errs.add(path.String(), "must be > %s (got %s)", fmtNum(r.min), fmtNum(got))
		return false
	}
	if !r.minExclusive && got < r.min {
		errs.add(path.String(), "must be ≥ %s (got %s)", fmtNum(r.min), fmtNum(got))
		return false
	}
	if got > r.max {
		errs.add(path.String(), "must be ≤ %s (got %s)", fmtNum(r.max), fmtNum(got))
		return false
	}
	return true
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (v *objectView) boolean(key string, def bool) bool {
	n := v.get(key)
	if n == nil {
		return def
	}
	if n.kind != kindBool {
		v.errs.add(v.child(key), "must be true or false, not %s%s", n.kind, gotSuffix(n))
		return def
	}
	return n.boolean
}

// str reads a string member; absent means def.
func (v *objectView) str(key, def string) string {
	n := v.get(key)
	if n == nil {
		return def
	}
	if n.kind != kindString {
		v.errs.add(v.child(key), "must be a string, not %s%s", n.kind, gotSuffix(n))
		return def
	}
	return n.text
}

// choice reads a string member that must be one of the allowed values.
func (v *objectView) choice(key, def string, allowed ...string) string {
	n := v.get(key)
	if n == nil {
		return def
	}
	got := v.str(key, "")
	if n.kind != kindString {
		return def
	}
	for _, a := range allowed {
		if got == a {
			return got
		}
	}
	if near := ClosestName(got, allowed); near != "" {
		v.errs.add(v.child(key), "must be one of %s (got %q; did you mean %q?)", strings.Join(allowed, ", "), got, near)
		return def
	}
	v.errs.add(v.child(key), "must be one of %s (got %q)", strings.Join(allowed, ", "), got)
	return def
}

// gotSuffix shows a short form of a wrongly typed value, so the message says what was found.
func gotSuffix(n *jsonNode) string {
	switch n.kind {
	case kindString:
		s := n.text
		if len([]rune(s)) > 40 {
			s = string([]rune(s)[:40]) + "…"
		}
		return fmt.Sprintf(" (got %q)", s)
	case kindNumber:
		return fmt.Sprintf(" (got %s)", n.text)
	case kindBool:
		return fmt.Sprintf(" (got %t)", n.boolean)
	}
	return ""
}
