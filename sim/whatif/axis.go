// Package whatif answers range and choice questions over the simulator: a sweep runs a scenario
// at every combination of a few field values, and a plan answers one goal, whose Kind says
// which: a drain plan searches scale-in schedules that drain a given number of workers and
// recommends the best one that meets the limits (plan.go); a tune plan searches an autoscaler's
// settings for the fewest GPU-hours (tune.go); a capacity plan finds one worker's capacity at
// the slo (capacity.go); a diagnose plan measures an autoscaler against an ideal fleet and
// what each of its lags costs (diagnose.go). Normalize and Plan switch on the kind.
//
// Like sim, it is pure: it never touches HTTP or SQL. Runs go through a Runner, so the command
// line simulates in-process and the web app queues ordinary runs.
package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scalein-planner/scalein/sim"
)

// Sweep bounds.
const (
	MaxAxes              = 3
	DefaultMaxPoints     = 256
	maxAxisValues        = 1000
	maxPathChars         = 200
	nameSuffixSeparator  = " — "
	maxScenarioNameChars = sim.MaxNameChars
)

// Axis is one swept field: a path into the scenario ("kvcr.bandwidth_gbps",
// "scale_in[0].grace_ms") and the values it takes, as JSON values (json.Number, bool, string).
type Axis struct {
	Path   string `json:"path"`
	Values []any  `json:"values"`
}

// Point is one combination of axis values and the valid scenario it gives.
type Point struct {
	Values   []any         `json:"values"`
	Scenario *sim.Scenario `json:"-"`
}

// axisKind is what a field holds.
type axisKind int

const (
	kindNumber axisKind = iota
	kindBool
	kindChoice
)

// choiceFields lists the text fields with a fixed set of values, which a sweep may vary.
// The pattern uses [] for any list index.
var choiceFields = map[string][]string{
	"router.policy":     {sim.PolicyKVAware, sim.PolicyRoundRobin, sim.PolicyLeastLoaded},
	"scale_in[].select": {sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached},
	// model 3 (docs/model.md#model-3)
	"autoscaler.metric": {sim.MetricRequestsPerWorker, sim.MetricRequestsWaiting, sim.MetricRequestsRunning, sim.MetricKVUsage, sim.MetricOfferedRate},
	"autoscaler.select": {sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached},
	// model 4 (docs/model.md#autoscaler)
	"autoscaler.source":                              {sim.SourcePods, sim.SourceExternal},
	"autoscaler.aggregate":                           {sim.AggregateSum, sim.AggregateAvg, sim.AggregateMax},
	"autoscaler.behavior.scale_up.select":            {sim.SelectPolicyMax, sim.SelectPolicyMin, sim.SelectPolicyDisabled},
	"autoscaler.behavior.scale_down.select":          {sim.SelectPolicyMax, sim.SelectPolicyMin, sim.SelectPolicyDisabled},
	"autoscaler.behavior.scale_up.policies[].type":   {sim.PolicyTypePods, sim.PolicyTypePercent},
	"autoscaler.behavior.scale_down.policies[].type": {sim.PolicyTypePods, sim.PolicyTypePercent},
	// model 5 (docs/model.md#model-5); each pool's autoscaler is added by init below
	"disaggregation.lease.mode":          {sim.LeaseHeartbeat, sim.LeaseFixed},
	"disaggregation.load_failure_policy": {sim.LoadFailureFail, sim.LoadFailureRecompute},
	"disaggregation.prefill_drain.mode":  {sim.DrainWait, sim.DrainFixed, sim.DrainSkip},
	"scale_in[].role":                    {sim.RolePrefill, sim.RoleDecode},
}

// optionalNumbers are number fields that a scenario may leave out and a sweep may still set.
var optionalNumbers = map[string]bool{
	"scale_in[].grace_ms":          true,
	"workload.requests[].route_to": true,
	// model 3: null means no limit / no grace
	"autoscaler.grace_ms":            true,
	"autoscaler.max_remove_per_tick": true,
	"autoscaler.max_add_per_tick":    true,
	// model 4: the shorthand windows, and a behavior's fields inside a direction that exists
	"autoscaler.scale_down_window_ms":          true,
	"autoscaler.scale_up_window_ms":            true,
	"autoscaler.behavior.scale_down.window_ms": true,
	"autoscaler.behavior.scale_up.window_ms":   true,
	"autoscaler.behavior.scale_down.tolerance": true,
	"autoscaler.behavior.scale_up.tolerance":   true,
	// model 5: a lease's ttl_ms is written only with mode fixed
	"disaggregation.lease.ttl_ms": true,
}

// With prefill and decode pools the autoscaler is {"prefill": A, "decode": A}: each pool's
// autoscaler has the fields of one fleet's, and the prefill pool's may read handoffs_held.
func init() {
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		for k, v := range maps.Clone(choiceFields) {
			if rest, ok := strings.CutPrefix(k, "autoscaler."); ok {
				vals := slices.Clone(v)
				if rest == "metric" && role == sim.RolePrefill {
					vals = append(vals, sim.MetricHandoffsHeld)
				}
				choiceFields["autoscaler."+role+"."+rest] = vals
			}
		}
		for k := range maps.Clone(optionalNumbers) {
			if rest, ok := strings.CutPrefix(k, "autoscaler."); ok {
				optionalNumbers["autoscaler."+role+"."+rest] = true
			}
		}
	}
}

// segment is one step of a path: an object key, or a list index when key is empty.
type segment struct {
	key   string
	index int
}

// parsePath splits "scale_in[0].at_ms" into steps.
func parsePath(p string) ([]segment, error) {
	if p == "" {
		return nil, fmt.Errorf(`is empty; name a field such as "kvcr.bandwidth_gbps" or "scale_in[0].grace_ms"`)
	}
	if utf8.RuneCountInString(p) > maxPathChars {
		return nil, fmt.Errorf("is longer than %d characters; name one scenario field", maxPathChars)
	}
	var segs []segment
	rest := p
	for rest != "" {
		switch {
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("%q has an unclosed [", p)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("%q has a bad list index %q; use [0], [1], …", p, rest[1:end])
			}
			segs = append(segs, segment{index: i})
			rest = rest[end+1:]
			if strings.HasPrefix(rest, ".") {
				rest = rest[1:]
				if rest == "" || rest[0] == '.' || rest[0] == '[' {
					return nil, fmt.Errorf("%q has an empty field name", p)
				}
			} else if rest != "" && rest[0] != '[' {
				return nil, fmt.Errorf("%q needs a dot after ]", p)
			}
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("%q has an empty field name", p)
			}
			segs = append(segs, segment{key: rest[:end]})
			rest = rest[end:]
			if strings.HasPrefix(rest, ".") {
				rest = rest[1:]
				if rest == "" {
					return nil, fmt.Errorf("%q ends with a dot", p)
				}
			}
		}
	}
	return segs, nil
}

// pattern is the path with every list index replaced by [].
func pattern(segs []segment) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case s.key == "":
			b.WriteString("[]")
		case i > 0:
			b.WriteString("." + s.key)
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// tree is a scenario as generic JSON: map[string]any, []any, json.Number, bool, string, nil.
func tree(s *sim.Scenario) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(s.CanonicalJSON()))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("whatif: decode the scenario: %w", err)
	}
	return m, nil
}

// resolve checks that the path names a sweepable field of the scenario and says what it holds.
func resolve(root map[string]any, p string) (axisKind, error) {
	segs, err := parsePath(p)
	if err != nil {
		return 0, err
	}
	pat := pattern(segs)
	if segs[0].key == "report" {
		return 0, fmt.Errorf("report options do not change the outcome; sweep a fleet, disaggregation, kvcr, router, scale_in, autoscaler or workload field")
	}
	if segs[0].key == "name" {
		return 0, fmt.Errorf("the name does not change the outcome; sweep a fleet, disaggregation, kvcr, router, scale_in, autoscaler or workload field")
	}
	var cur any = root
	where := "the scenario"
	for i, s := range segs {
		last := i == len(segs)-1
		switch node := cur.(type) {
		case map[string]any:
			if s.key == "" {
				return 0, fmt.Errorf("%s is an object, not a list; remove [%d]", where, s.index)
			}
			v, ok := node[s.key]
			if !ok {
				if last && optionalNumbers[pat] {
					return kindNumber, nil
				}
				return 0, fmt.Errorf("%s has no field %q%s", where, s.key, suggest(s.key, node))
			}
			cur = v
			where = joinWhere(segs[:i+1])
		case []any:
			if s.key != "" {
				return 0, fmt.Errorf("%s is a list; pick an element first, like %s[0].%s", where, where, s.key)
			}
			if s.index >= len(node) {
				return 0, fmt.Errorf("%s has %d element(s); index %d is out of range", where, len(node), s.index)
			}
			cur = node[s.index]
			where = joinWhere(segs[:i+1])
		default:
			if s.key == "" {
				return 0, fmt.Errorf("%s is a single value, not a list; remove [%d]", where, s.index)
			}
			return 0, fmt.Errorf("%s is a single value; it has no field %q", where, s.key)
		}
	}
	switch v := cur.(type) {
	case nil:
		if optionalNumbers[pat] {
			return kindNumber, nil
		}
		return 0, fmt.Errorf("has no value to vary")
	case json.Number:
		return kindNumber, nil
	case bool:
		return kindBool, nil
	case string:
		if _, ok := choiceFields[pat]; ok {
			return kindChoice, nil
		}
		return 0, fmt.Errorf("is a text field; a sweep varies numbers, true/false and choice fields (router.policy, scale_in[N].select, autoscaler.metric, autoscaler.select, disaggregation.prefill_drain.mode, …)")
	case map[string]any:
		return 0, fmt.Errorf("is an object; name one of its fields: %s", strings.Join(keysOf(v), ", "))
	case []any:
		return 0, fmt.Errorf("is a list; name one element's field, like %s[0]…", p)
	default:
		return 0, fmt.Errorf("has no value to vary")
	}
}

func joinWhere(segs []segment) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case s.key == "":
			fmt.Fprintf(&b, "[%d]", s.index)
		case i > 0:
			b.WriteString("." + s.key)
		default:
			b.WriteString(s.key)
		}
	}
	return b.String()
}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// suggest names the closest known key, or lists them all.
func suggest(key string, m map[string]any) string {
	keys := keysOf(m)
	if best := sim.ClosestName(key, keys); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return "; its fields are " + strings.Join(keys, ", ")
}

// setPath writes v at the path, creating an optional leaf. The path was resolved before.
func setPath(root map[string]any, p string, v any) {
	segs, _ := parsePath(p)
	var cur any = root
	for i, s := range segs {
		last := i == len(segs)-1
		switch node := cur.(type) {
		case map[string]any:
			if last {
				node[s.key] = v
				return
			}
			cur = node[s.key]
		case []any:
			if last {
				node[s.index] = v
				return
			}
			cur = node[s.index]
		}
	}
}

// deepCopy copies a generic JSON tree.
func deepCopy(v any) any {
	switch n := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(n))
		for k, e := range n {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(n))
		for i, e := range n {
			l[i] = deepCopy(e)
		}
		return l
	default:
		return v
	}
}

// normalizeValue checks a value's type against the field's and returns it in the tree's form.
func normalizeValue(kind axisKind, path string, v any) (any, error) {
	switch kind {
	case kindNumber:
		switch n := v.(type) {
		case json.Number:
			if _, err := n.Float64(); err != nil {
				return nil, fmt.Errorf("%s is not a usable number", n)
			}
			return n, nil
		case float64:
			return json.Number(strconv.FormatFloat(n, 'g', -1, 64)), nil
		case int:
			return json.Number(strconv.Itoa(n)), nil
		}
		return nil, fmt.Errorf("must be a number like 10, not %s", describe(v))
	case kindBool:
		if _, ok := v.(bool); ok {
			return v, nil
		}
		return nil, fmt.Errorf("must be true or false, not %s", describe(v))
	default:
		segs, _ := parsePath(path)
		allowed := choiceFields[pattern(segs)]
		s, ok := v.(string)
		if !ok || !slices.Contains(allowed, s) {
			return nil, fmt.Errorf("must be one of %q, not %s", allowed, describe(v))
		}
		return s, nil
	}
}

func describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// valueKey is a value's identity for duplicate checks (10 and 10.0 are the same number).
func valueKey(v any) string {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return describe(v)
}

// ValueText formats an axis value for labels and CSV cells.
func ValueText(v any) string {
	switch n := v.(type) {
	case string:
		return n
	case json.Number:
		return n.String()
	default:
		return describe(v)
	}
}

// withNameSuffix appends " — suffix" to a scenario name, shortening the base so the whole name
// stays within sim.MaxNameChars.
func withNameSuffix(base, suffix string) string {
	suffix = nameSuffixSeparator + suffix
	room := maxScenarioNameChars - utf8.RuneCountInString(suffix)
	if room < 1 {
		r := []rune(suffix)
		return string(r[:maxScenarioNameChars])
	}
	if r := []rune(base); len(r) > room {
		base = string(r[:room-1]) + "…"
	}
	return base + suffix
}

// Expand checks the axes against the base scenario and returns every point in row-major order
// (the last axis varies fastest), each a parsed, valid scenario named after its values. Bad
// axes give a *sim.ValidationError whose paths are "axes[i].path" or "axes[i].values[j]"; a
// value that the scenario's own rules reject carries that rule's message.
func Expand(base *sim.Scenario, axes []Axis, env sim.ParseEnv, maxPoints int) ([]Point, error) {
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	var errs []sim.FieldError
	add := func(path, format string, a ...any) {
		errs = append(errs, sim.FieldError{Path: path, Message: fmt.Sprintf(format, a...)})
	}
	switch {
	case len(axes) == 0:
		add("axes", `list at least one axis, like {"path": "kvcr.bandwidth_gbps", "values": [5, 10, 40]}`)
	case len(axes) > MaxAxes:
		add("axes", "has %d axes; a sweep varies at most %d fields at once", len(axes), MaxAxes)
	}
	if len(errs) > 0 {
		return nil, &sim.ValidationError{Errors: errs}
	}
	root, err := tree(base)
	if err != nil {
		return nil, err
	}
	seenPath := map[string]int{}
	points := 1
	values := make([][]any, len(axes))
	for i, ax := range axes {
		pp := fmt.Sprintf("axes[%d].path", i)
		kind, err := resolve(root, ax.Path)
		if err != nil {
			add(pp, "%s: %v", ax.Path, err)
			continue
		}
		if j, dup := seenPath[ax.Path]; dup {
			add(pp, "%q is already axes[%d]; sweep each field once", ax.Path, j)
			continue
		}
		seenPath[ax.Path] = i
		vp := fmt.Sprintf("axes[%d].values", i)
		switch {
		case len(ax.Values) == 0:
			add(vp, "list at least one value for %s", ax.Path)
			continue
		case len(ax.Values) > maxAxisValues:
			add(vp, "has %d values; an axis takes at most %d", len(ax.Values), maxAxisValues)
			continue
		}
		seenValue := map[string]int{}
		for j, v := range ax.Values {
			vjp := fmt.Sprintf("axes[%d].values[%d]", i, j)
			nv, err := normalizeValue(kind, ax.Path, v)
			if err != nil {
				add(vjp, "%v", err)
				continue
			}
			if k, dup := seenValue[valueKey(nv)]; dup {
				add(vjp, "%s is listed twice (also values[%d]); keep one", ValueText(nv), k)
				continue
			}
			seenValue[valueKey(nv)] = j
			// Each value on its own, the other fields as in the base scenario.
			if _, err := pointScenario(root, base.Name, []Axis{{Path: ax.Path}}, []any{nv}, env); err != nil {
				add(vjp, "%s", firstProblem(err, ax.Path))
				continue
			}
			values[i] = append(values[i], nv)
		}
		points *= max(len(ax.Values), 1)
	}
	if len(errs) == 0 && points > maxPoints {
		add("axes", "give %d points; the limit is %d: use fewer values or fewer axes", points, maxPoints)
	}
	if len(errs) > 0 {
		return nil, &sim.ValidationError{Errors: errs}
	}

	out := make([]Point, 0, points)
	idx := make([]int, len(axes))
	for range points {
		vals := make([]any, len(axes))
		for a := range axes {
			vals[a] = values[a][idx[a]]
		}
		sc, err := pointScenario(root, base.Name, axes, vals, env)
		if err != nil {
			errs = append(errs, sim.FieldError{Path: "axes", Message: fmt.Sprintf("the point %s gives an invalid scenario: %s", pointLabel(axes, vals), firstProblem(err, ""))})
		}
		out = append(out, Point{Values: vals, Scenario: sc})
		for a := len(axes) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < len(values[a]) {
				break
			}
			idx[a] = 0
		}
	}
	if len(errs) > 0 {
		return nil, &sim.ValidationError{Errors: errs}
	}
	return out, nil
}

// pointLabel is "kvcr.bandwidth_gbps=10, router.hints=false".
func pointLabel(axes []Axis, vals []any) string {
	parts := make([]string, len(axes))
	for i, ax := range axes {
		parts[i] = ax.Path + "=" + ValueText(vals[i])
	}
	return strings.Join(parts, ", ")
}

// pointScenario sets the values in a copy of the base tree and parses it.
func pointScenario(root map[string]any, baseName string, axes []Axis, vals []any, env sim.ParseEnv) (*sim.Scenario, error) {
	t := deepCopy(root).(map[string]any)
	for i, ax := range axes {
		setPath(t, ax.Path, vals[i])
	}
	leaseRule(t, axes)
	t["name"] = withNameSuffix(baseName, pointLabel(axes, vals))
	data, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("whatif: encode the point: %w", err)
	}
	return sim.Parse(data, env)
}

// leaseRule keeps a lease's ttl_ms meaningful (it only exists with mode fixed): sweeping
// disaggregation.lease.ttl_ms on a heartbeat lease sweeps fixed leases of those lengths, and a
// point whose lease is heartbeat drops the ttl_ms.
func leaseRule(t map[string]any, axes []Axis) {
	d, _ := t["disaggregation"].(map[string]any)
	l, _ := d["lease"].(map[string]any)
	if l == nil || l["mode"] != sim.LeaseHeartbeat {
		return
	}
	ttl, mode := false, false
	for _, ax := range axes {
		ttl = ttl || ax.Path == "disaggregation.lease.ttl_ms"
		mode = mode || ax.Path == "disaggregation.lease.mode"
	}
	if ttl && !mode {
		l["mode"] = sim.LeaseFixed
		return
	}
	delete(l, "ttl_ms")
}

// firstProblem picks the scenario problem that a value caused: the one at the axis path if any,
// otherwise the first, as "path: message".
func firstProblem(err error, path string) string {
	ve, ok := err.(*sim.ValidationError)
	if !ok || len(ve.Errors) == 0 {
		return err.Error()
	}
	for _, fe := range ve.Errors {
		if path != "" && fe.Path == path {
			return fe.String()
		}
	}
	return ve.Errors[0].String()
}

// ParseValue reads one value of an axis as a user types it (the sweep form, `scalein sweep
// -vary`): a number, true/false or a JSON string; anything else is a bare string (a choice such
// as least_loaded).
func ParseValue(tok string) any {
	dec := json.NewDecoder(strings.NewReader(tok))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		switch v.(type) {
		case json.Number, bool, string:
			return v
		}
	}
	return tok
}
