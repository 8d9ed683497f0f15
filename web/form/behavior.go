package form

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// The HPA's behavior in the form (docs/model.md#autoscaler): "no behavior" (the legacy path) or a behavior
// with, per direction, a window, a tolerance, a select and policy rows. Each field is named by
// its path in the scenario JSON (autoscaler.behavior.scale_down.policies[0].value), so a
// problem sim.Parse finds lands beside its field.

// BehaviorModePath is the choice between no behavior and a behavior. It is named after the
// behavior object, so that a problem with the object as a whole lands on it.
const BehaviorModePath = "autoscaler.behavior"

// The two behavior modes.
const (
	BehaviorNone = "none"
	BehaviorSet  = "set"
)

var behaviorModeField = fieldSpec{Path: BehaviorModePath, Label: "Behavior", Kind: kindSelect, Start: BehaviorNone,
	Help: "Without spec.behavior (what most clusters run) the HPA holds a scale-down for the downscale stabilisation and scales up at once, at most to max(2 × current, 4). A behavior (even an empty one: Kubernetes' defaults) adds per-direction windows and rate policies.",
	Options: [][2]string{
		{BehaviorNone, "No behavior (Kubernetes' legacy rules)"},
		{BehaviorSet, "A behavior (the rules below; empty fields take Kubernetes' defaults)"},
	}}

// The two directions, as the scenario names them.
const (
	dirUp   = "scale_up"
	dirDown = "scale_down"
)

var directions = []string{dirUp, dirDown}

func directionLabel(dir string) string {
	if dir == dirUp {
		return "Scale up"
	}
	return "Scale down"
}

func rulesPath(dir, field string) string { return BehaviorModePath + "." + dir + "." + field }

// behaviorFields are each direction's single fields (the policies are rows).
func behaviorFields() []fieldSpec {
	var out []fieldSpec
	for _, dir := range directions {
		verb := map[string]string{dirUp: "up", dirDown: "down"}[dir]
		keep := map[string]string{dirUp: "the smallest", dirDown: "the largest"}[dir]
		out = append(out,
			fieldSpec{Path: rulesPath(dir, "window_ms"), Label: "Window", Unit: "ms", Kind: kindInt,
				Help: fmt.Sprintf("stabilizationWindowSeconds (in ms, a whole number ≤ 3600000): scale %s only to %s recommendation of this window.", verb, keep)},
			fieldSpec{Path: rulesPath(dir, "tolerance"), Label: "Tolerance", Kind: kindFloat,
				Help: fmt.Sprintf("No scale-%s while the ratio is within this tolerance; empty = the autoscaler's tolerance.", verb)},
			fieldSpec{Path: rulesPath(dir, "select"), Label: "Select", Kind: kindSelect,
				Help:    "selectPolicy: max takes the policy allowing the biggest change, min the smallest; disabled allows none.",
				Options: [][2]string{{"", "(default: max)"}, {sim.SelectPolicyMax, "max"}, {sim.SelectPolicyMin, "min"}, {sim.SelectPolicyDisabled, "disabled"}}},
		)
	}
	return out
}

// policyFields are the columns of a policy row.
var policyFields = []fieldSpec{
	{Path: "type", Label: "Type", Kind: kindSelect, Options: [][2]string{{"", "—"}, {sim.PolicyTypePods, "pods"}, {sim.PolicyTypePercent, "percent"}}},
	{Path: "value", Label: "Value", Kind: kindInt},
	{Path: "period_ms", Label: "Period", Unit: "ms", Kind: kindInt},
}

// defaultPolicies are Kubernetes' policies of a direction without its own (docs/model.md#autoscaler step 4).
var defaultPolicies = map[string][]sim.ScalingPolicy{
	dirUp:   {{Type: sim.PolicyTypePods, Value: 4, PeriodMS: 15000}, {Type: sim.PolicyTypePercent, Value: 100, PeriodMS: 15000}},
	dirDown: {{Type: sim.PolicyTypePercent, Value: 100, PeriodMS: 15000}},
}

// maxPolicyRows bounds the policy rows a form keeps per direction: a post with more keeps the
// first ones (sim.Parse then reports a list longer than sim.MaxPolicies).
const maxPolicyRows = 2 * sim.MaxPolicies

// policyKey matches a policy field's name.
var policyKey = regexp.MustCompile(`^autoscaler\.behavior\.(scale_up|scale_down)\.policies\[(\d+)\]\.(type|value|period_ms)$`)

// policyRowsKey is the hidden field with the number of policy rows a direction showed.
func policyRowsKey(dir string) string { return rulesPath(dir, "policy_rows") }

func policyFieldName(dir string, i int, field string) string {
	return fmt.Sprintf("%s.%s.policies[%d].%s", BehaviorModePath, dir, i, field)
}

// AddPolicy shows one more policy row in a direction (the no-JavaScript "Add policy").
func (f *Form) AddPolicy(dir string) {
	if dir != dirUp && dir != dirDown {
		return
	}
	if f.policyShown == nil {
		f.policyShown = map[string]int{}
	}
	f.policyShown[dir] = min(max(f.policyShown[dir], len(f.policies[dir]))+1, maxPolicyRows)
	f.values[BehaviorModePath] = BehaviorSet
}

// readPolicies takes the policy rows out of a post's values: per direction in index order,
// empty rows dropped, so that a row's index is its index in the scenario's list.
func (f *Form) readPolicies(values map[string][]string) {
	type cell struct{ idx, field, val string }
	cells := map[string][]cell{}
	for key, vals := range values {
		m := policyKey.FindStringSubmatch(key)
		if m == nil || len(vals) == 0 {
			continue
		}
		cells[m[1]] = append(cells[m[1]], cell{strings.TrimLeft(m[2], "0"), m[3], vals[0]})
	}
	f.policies = map[string][]map[string]string{}
	f.policyShown = map[string]int{}
	for _, dir := range directions {
		byIdx := map[string]map[string]string{}
		for _, c := range cells[dir] {
			if byIdx[c.idx] == nil {
				byIdx[c.idx] = map[string]string{}
			}
			byIdx[c.idx][c.field] = c.val
		}
		idx := make([]string, 0, len(byIdx))
		for i := range byIdx {
			idx = append(idx, i)
		}
		// Digit strings without leading zeros compare as numbers by length, then by text.
		slices.SortFunc(idx, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
		for _, i := range idx {
			if row := byIdx[i]; !rowIsEmpty(row) && len(f.policies[dir]) < maxPolicyRows {
				f.policies[dir] = append(f.policies[dir], row)
			}
		}
		if vals := values[policyRowsKey(dir)]; len(vals) > 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(vals[0])); err == nil {
				f.policyShown[dir] = min(max(n, 0), maxPolicyRows)
			}
		}
	}
}

// behaviorJSON puts the behavior into the autoscaler object a when the form chooses one.
func (f *Form) behaviorJSON(a map[string]any, put func(fs fieldSpec, name, text string, into map[string]any, key string)) {
	if strings.TrimSpace(f.values[BehaviorModePath]) != BehaviorSet {
		return
	}
	b := map[string]any{}
	fields := behaviorFields()
	for _, dir := range directions {
		r := map[string]any{}
		for _, fs := range fields {
			if strings.HasPrefix(fs.Path, BehaviorModePath+"."+dir+".") {
				put(fs, fs.Path, f.values[fs.Path], r, fs.Path[strings.LastIndexByte(fs.Path, '.')+1:])
			}
		}
		var policies []any
		for i, row := range f.policies[dir] {
			p := map[string]any{}
			for _, fs := range policyFields {
				put(fs, policyFieldName(dir, i, fs.Path), row[fs.Path], p, fs.Path)
			}
			policies = append(policies, p)
		}
		if len(policies) > 0 {
			r["policies"] = policies
		}
		if len(r) > 0 {
			b[dir] = r
		}
	}
	a["behavior"] = b
}

// behaviorPrefill fills the behavior's mode and policy rows from a scenario's autoscaler (its
// single fields are prefilled by path like every other field).
func (f *Form) behaviorPrefill(a *sim.Autoscaler) {
	f.values[BehaviorModePath] = BehaviorNone
	f.policies = map[string][]map[string]string{}
	if a == nil || a.Behavior == nil {
		return
	}
	f.values[BehaviorModePath] = BehaviorSet
	for _, dir := range directions {
		r := a.Behavior.ScaleUp
		if dir == dirDown {
			r = a.Behavior.ScaleDown
		}
		if r == nil {
			continue
		}
		for _, p := range r.Policies {
			f.policies[dir] = append(f.policies[dir], map[string]string{
				"type": p.Type, "value": strconv.Itoa(p.Value), "period_ms": strconv.FormatInt(p.PeriodMS, 10)})
		}
	}
}

// shorthandAsBehavior is the autoscaler with its model-3 shorthand written as the behavior it
// stands for (docs/model.md#autoscaler "Fields"), when a behavior holds it exactly: whole-ms windows within
// a behavior's range and an interval that is a whole number of ms within a policy's period
// range. Otherwise (and without shorthand) it is a unchanged; the form then shows the shorthand
// fields. The controller is the same either way; the scenario's id is not.
func shorthandAsBehavior(a *sim.Autoscaler) *sim.Autoscaler {
	if a == nil || !a.UsesShorthand() || a.Behavior != nil {
		return a
	}
	whole := func(x float64, hi int64) (int64, bool) {
		return int64(x), x == math.Trunc(x) && x >= 0 && x <= float64(hi)
	}
	period, ok := whole(a.IntervalMS, sim.MaxPolicyPeriodMS)
	if !ok || period < 1 {
		return a
	}
	up := &sim.ScalingRules{Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: a.MaxWorkers, PeriodMS: period}}}
	down := &sim.ScalingRules{Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 100, PeriodMS: period}}}
	for _, w := range []struct {
		ms  *float64
		dst **int64
	}{{a.ScaleUpWindowMS, &up.WindowMS}, {a.ScaleDownWindowMS, &down.WindowMS}} {
		if w.ms == nil {
			continue
		}
		n, ok := whole(*w.ms, sim.MaxBehaviorWindowMS)
		if !ok {
			return a
		}
		*w.dst = &n
	}
	if k := a.MaxAddPerTick.Ptr(); k != nil {
		up.Policies[0].Value = *k
	}
	if k := a.MaxRemovePerTick.Ptr(); k != nil {
		down.Policies[0] = sim.ScalingPolicy{Type: sim.PolicyTypePods, Value: *k, PeriodMS: period}
	}
	if up.Policies[0].Value < 1 {
		return a
	}
	c := *a
	c.ScaleUpWindowMS, c.ScaleDownWindowMS = nil, nil
	c.MaxAddPerTick, c.MaxRemovePerTick = sim.PerTick{}, sim.PerTick{}
	c.Behavior = &sim.Behavior{ScaleUp: up, ScaleDown: down}
	return &c
}

// policyHelp says in one line what a policy row allows ("at most 1 worker removed per 60 s").
func policyHelp(dir, typ, value, period string) string {
	v, err1 := strconv.Atoi(strings.TrimSpace(value))
	p, err2 := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	if err1 != nil || err2 != nil || v < 1 || p < 1 {
		return ""
	}
	verb := map[string]string{dirUp: "added", dirDown: "removed"}[dir]
	secs := strconv.FormatFloat(float64(p)/1000, 'f', -1, 64) + " s"
	switch typ {
	case sim.PolicyTypePods:
		return fmt.Sprintf("At most %d %s %s per %s.", v, plural(v, "worker", "workers"), verb, secs)
	case sim.PolicyTypePercent:
		return fmt.Sprintf("At most %d %% of the workers %s per %s.", v, verb, secs)
	}
	return ""
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
