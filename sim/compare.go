package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Counterpart kinds: the two toggles a pair of runs compares.
const (
	CounterpartHints = "hints" // router.hints on vs off
	CounterpartGuard = "guard" // kvcr.reject_draining_sources on vs off
)

// Name markers Counterpart adds; a marker of the same kind is stripped instead, so toggling
// twice gives back the original name (and so the original id).
var counterpartMarkers = map[string][2]string{ // kind → {marker when on, marker when off}
	CounterpartHints: {" — hinted", " — no hints"},
	CounterpartGuard: {" — guard on", " — guard off"},
}

// Counterpart returns a copy of s with one toggle flipped: "hints" flips router.hints, "guard"
// flips kvcr.reject_draining_sources. The name is marked with the new setting.
//
// "autoscaler" removes the autoscaler: the same scenario on the baseline's fixed fleet, the
// autoscaler's max_workers (FixedFleet names another size).
func Counterpart(s *Scenario, kind string) (*Scenario, error) {
	if kind == CounterpartAutoscaler {
		return FixedFleet(s, 0)
	}
	if pdCounterpart(kind) {
		return poolCounterpart(s, kind)
	}
	markers, ok := counterpartMarkers[kind]
	if !ok {
		return nil, fmt.Errorf("sim: unknown counterpart kind %q; use %q, %q or %q", kind, CounterpartHints, CounterpartGuard, CounterpartAutoscaler)
	}
	c := cloneScenario(s)
	var on bool
	switch kind {
	case CounterpartHints:
		c.Router.Hints = !c.Router.Hints
		on = c.Router.Hints
	case CounterpartGuard:
		c.KVCR.RejectDrainingSources = !c.KVCR.RejectDrainingSources
		on = c.KVCR.RejectDrainingSources
	}
	stripped := false
	for _, m := range markers {
		if base, found := strings.CutSuffix(c.Name, m); found {
			c.Name, stripped = base, true
			break
		}
	}
	if !stripped {
		if on {
			c.Name += markers[0]
		} else {
			c.Name += markers[1]
		}
	}
	return c, nil
}

// cloneScenario copies s deeply enough that changing the copy never changes s. Trace rows are
// shared: they are read-only.
func cloneScenario(s *Scenario) *Scenario {
	c := *s
	c.ScaleIn = make([]ScaleInAction, len(s.ScaleIn))
	for i, a := range s.ScaleIn {
		a.Workers = slices.Clone(a.Workers)
		if a.GraceMS != nil {
			g := *a.GraceMS
			a.GraceMS = &g
		}
		c.ScaleIn[i] = a
	}
	if s.SLO != nil {
		slo := *s.SLO
		c.SLO = &slo
	}
	if s.Workload.Requests != nil {
		c.Workload.Requests = make([]ScriptedRequest, len(s.Workload.Requests))
		for i, r := range s.Workload.Requests {
			r.Blocks = slices.Clone(r.Blocks)
			if r.RouteTo != nil {
				w := *r.RouteTo
				r.RouteTo = &w
			}
			c.Workload.Requests[i] = r
		}
	}
	if s.Workload.Sessions != nil {
		ss := *s.Workload.Sessions
		c.Workload.Sessions = &ss
	}
	if s.Workload.Trace != nil {
		t := *s.Workload.Trace
		c.Workload.Trace = &t
	}
	if s.Workload.Sessions != nil {
		c.Workload.Sessions.RateStages = slices.Clone(s.Workload.Sessions.RateStages)
	}
	if s.Autoscaler != nil {
		a := *s.Autoscaler
		for _, p := range []**float64{&a.ScaleDownWindowMS, &a.ScaleUpWindowMS} {
			if *p != nil {
				v := **p
				*p = &v
			}
		}
		a.Behavior = a.Behavior.Clone()
		if a.GraceMS != nil {
			g := *a.GraceMS
			a.GraceMS = &g
		}
		c.Autoscaler = &a
	}
	clonePools(&c, s)
	return &c
}

// FieldDiff is one scenario field that differs between two runs; A and B are compact JSON, or
// empty where the field is absent on that side.
type FieldDiff struct {
	Path string `json:"path"`
	A    string `json:"a"`
	B    string `json:"b"`
}

// maxDiffValueChars bounds a value shown in a diff; a long list is summarised instead.
const maxDiffValueChars = 200

// DiffScenarios lists the fields whose values differ, by path ("scale_in[0].at_ms"), sorted by
// path with list indices in numeric order. The name is ignored. Lists of different lengths
// are one diff on the whole list.
func DiffScenarios(a, b *Scenario) []FieldDiff {
	va, okA := genericScenario(a)
	vb, okB := genericScenario(b)
	var diffs []FieldDiff
	diffValues("", va, vb, okA, okB, &diffs)
	sort.Slice(diffs, func(i, j int) bool { return pathLess(diffs[i].Path, diffs[j].Path) })
	return diffs
}

// genericScenario decodes the canonical JSON into maps and lists; ok is false for nil.
func genericScenario(s *Scenario) (any, bool) {
	if s == nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(s.CanonicalJSON()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "name")
	}
	return v, true
}

// diffValues appends a diff for every leaf that differs; hasA/hasB say whether the value is
// present on each side.
func diffValues(path string, a, b any, hasA, hasB bool, out *[]FieldDiff) {
	if hasA && hasB {
		ma, isMapA := a.(map[string]any)
		mb, isMapB := b.(map[string]any)
		if isMapA && isMapB {
			for k, ea := range ma {
				eb, inB := mb[k]
				diffValues(joinPath(path, k), ea, eb, true, inB, out)
			}
			for k, eb := range mb {
				if _, inA := ma[k]; !inA {
					diffValues(joinPath(path, k), nil, eb, false, true, out)
				}
			}
			return
		}
		la, isListA := a.([]any)
		lb, isListB := b.([]any)
		if isListA && isListB && len(la) == len(lb) {
			for i := range la {
				diffValues(indexPath(path, i), la[i], lb[i], true, true, out)
			}
			return
		}
	}
	if hasA == hasB && compactJSON(a) == compactJSON(b) {
		return
	}
	*out = append(*out, FieldDiff{Path: path, A: diffText(a, hasA), B: diffText(b, hasB)})
}

func compactJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// diffText is the compact JSON of a value, summarised when it is too long to show.
func diffText(v any, present bool) string {
	if !present {
		return ""
	}
	data := compactJSON(v)
	if len(data) <= maxDiffValueChars {
		return data
	}
	switch t := v.(type) {
	case []any:
		return fmt.Sprintf("[… %d items]", len(t))
	case map[string]any:
		return fmt.Sprintf("{… %d fields}", len(t))
	}
	return strings.ToValidUTF8(data[:maxDiffValueChars], "") + "…"
}

// pathLess orders paths segment by segment, list indices numerically.
func pathLess(a, b string) bool {
	ka, kb := pathKey(a), pathKey(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		if ka[i] == kb[i] {
			continue
		}
		na, ea := strconv.Atoi(ka[i])
		nb, eb := strconv.Atoi(kb[i])
		if ea == nil && eb == nil {
			return na < nb
		}
		return ka[i] < kb[i]
	}
	return len(ka) < len(kb)
}

func pathKey(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}

// FigureDelta is one headline figure of two runs: Delta = B − A, DeltaPct = 100 × Delta / A
// (nil when A is nil or 0, or B is nil).
type FigureDelta struct {
	Figure
	A        *float64 `json:"a"`
	B        *float64 `json:"b"`
	Delta    *float64 `json:"delta"`
	DeltaPct *float64 `json:"delta_pct"`
}

// Comparison sets two runs side by side. Kind names the toggles that differ ("hints",
// "guard", "hints+guard" or ""); OnlyToggle is true when nothing else differs.
type Comparison struct {
	Kind       string        `json:"kind"`
	Diffs      []FieldDiff   `json:"diffs"`
	OnlyToggle bool          `json:"only_toggle"`
	Figures    []FigureDelta `json:"figures"`
}

// Compare diffs two scenarios and their reports' headline figures.
func Compare(sa, sb *Scenario, ra, rb *Report) Comparison {
	c := Comparison{Diffs: DiffScenarios(sa, sb)}
	if c.Diffs == nil {
		c.Diffs = []FieldDiff{}
	}
	hints, guard, auto, workers, other := false, false, false, false, false
	for _, d := range c.Diffs {
		switch d.Path {
		case "router.hints":
			hints = true
		case "kvcr.reject_draining_sources":
			guard = true
		case "autoscaler":
			auto = true
		case "fleet.workers", "disaggregation.prefill.workers", "disaggregation.decode.workers":
			workers = true
		default:
			other = true
		}
	}
	// The autoscaler pair's fixed side holds the baseline's workers (FixedFleet): its fleet size
	// is part of the toggle, not another difference.
	other = other || workers && !auto
	if auto {
		c.Kind = CounterpartAutoscaler
		c.OnlyToggle = !hints && !guard && !other
	}
	switch {
	case auto:
	case hints && guard:
		c.Kind = CounterpartHints + "+" + CounterpartGuard
	case hints:
		c.Kind = CounterpartHints
	case guard:
		c.Kind = CounterpartGuard
	}
	if !auto {
		c.OnlyToggle = (hints || guard) && !other
	}
	fa, fb := Headline(ra), Headline(rb)
	if ra == nil {
		fa = nil
	}
	if rb == nil {
		fb = nil
	}
	all := Headline(nil)
	if auto || (ra != nil && ra.Autoscaler != nil) || (rb != nil && rb.Autoscaler != nil) {
		all = append(all, AutoscalerFigures(nil)...)
		if fa != nil {
			fa = append(fa, AutoscalerFigures(ra)...)
		}
		if fb != nil {
			fb = append(fb, AutoscalerFigures(rb)...)
		}
	}
	if (ra != nil && ra.Summary.SLO != nil) || (rb != nil && rb.Summary.SLO != nil) {
		all = append(all, SLOFigures(nil)...)
		if fa != nil {
			fa = append(fa, SLOFigures(ra)...)
		}
		if fb != nil {
			fb = append(fb, SLOFigures(rb)...)
		}
	}
	for i, f := range all {
		d := FigureDelta{Figure: Figure{Key: f.Key, Label: f.Label, Unit: f.Unit}}
		if fa != nil {
			d.A = fa[i].Value
		}
		if fb != nil {
			d.B = fb[i].Value
		}
		if d.A != nil && d.B != nil {
			// Figures are whole nanoseconds (or counts); rounding to 1e-9 removes the noise of
			// the subtraction (86.554432 − 77 = 9.554432000000006 in doubles).
			delta := math.Round((*d.B-*d.A)*1e9) / 1e9
			d.Delta = &delta
			if *d.A != 0 {
				pct := delta / *d.A * 100
				d.DeltaPct = &pct
			}
		}
		c.Figures = append(c.Figures, d)
	}
	return c
}
