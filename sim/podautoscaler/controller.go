package podautoscaler

import "math"

// Source is where the metric comes from.
type Source uint8

const (
	// SourcePods is a Pods metric with an AverageValue target (a Prometheus adapter).
	SourcePods Source = iota
	// SourceExternal is an External metric with an AverageValue target (what KEDA creates).
	SourceExternal
)

// Select picks among the policies of one direction (spec.behavior.*.selectPolicy).
type Select uint8

const (
	SelectMax Select = iota
	SelectMin
	SelectDisabled
)

// PolicyType is a scaling policy's unit.
type PolicyType uint8

const (
	PolicyPods PolicyType = iota
	PolicyPercent
)

// Policy allows a change of Value pods (or Value percent) per PeriodNS.
type Policy struct {
	Type     PolicyType
	Value    int
	PeriodNS int64
}

// Rules is one direction of a behavior with every field filled.
type Rules struct {
	WindowNS  int64
	Select    Select
	Policies  []Policy
	Tolerance float64
}

// Behavior is spec.behavior with the defaults filled (DefaultBehavior).
type Behavior struct {
	Up, Down Rules
}

// Settings are the HPA's fields and the controller's flags that a decision reads.
type Settings struct {
	Source      Source
	TargetMilli int64 // the AverageValue target, in milli-units (≥ 1)
	// Tolerance is the controller's --horizontal-pod-autoscaler-tolerance; a behavior's
	// per-direction tolerances, when set, are in Behavior.
	Tolerance float64
	// DownscaleWindowNS is --horizontal-pod-autoscaler-downscale-stabilization: the legacy
	// path's window.
	DownscaleWindowNS int64
	MinReplicas       int
	MaxReplicas       int
	// Behavior is nil for an HPA without spec.behavior (the legacy path).
	Behavior *Behavior
}

// Default policies of pkg/apis/autoscaling/v2/defaults.go, with periods in ns.
const defaultPeriodNS = 15_000_000_000

// DefaultUpPolicies are the scale-up policies Kubernetes fills: 4 pods or 100 % per 15 s.
func DefaultUpPolicies() []Policy {
	return []Policy{{PolicyPods, 4, defaultPeriodNS}, {PolicyPercent, 100, defaultPeriodNS}}
}

// DefaultDownPolicies are the scale-down policies Kubernetes fills: 100 % per 15 s.
func DefaultDownPolicies() []Policy {
	return []Policy{{PolicyPercent, 100, defaultPeriodNS}}
}

// Sample is what the controller sees of the pods at a decision.
type Sample struct {
	Ready   int // Running and Ready with a metric sample
	Unready int // Pending
	Missing int // Running without a sample (starting workers past pending, or new since the sample)
	// Milli is the metric in milli-units: for SourcePods the sum of the ready pods' samples,
	// for SourceExternal the aggregated value (already ceil(1000 × value)).
	Milli int64
}

// Reasons, in the order the report tests them.
const (
	ReasonAboveMax        = "above_max"
	ReasonBelowMin        = "below_min"
	ReasonNoMetrics       = "no_metrics"
	ReasonScaleUp         = "scale_up"
	ReasonScaleDown       = "scale_down"
	ReasonWithinTolerance = "within_tolerance"
	ReasonHeldByStarting  = "held_by_starting"
	ReasonStabilized      = "stabilized"
	ReasonLimited         = "limited"
	ReasonAtBound         = "at_bound"
	ReasonNoChange        = "no_change"
)

// Reasons lists every reason in report order.
var Reasons = []string{ReasonAboveMax, ReasonBelowMin, ReasonNoMetrics, ReasonScaleUp, ReasonScaleDown,
	ReasonWithinTolerance, ReasonHeldByStarting, ReasonStabilized, ReasonLimited, ReasonAtBound, ReasonNoChange}

// Decision is one sync's record. Pointers are nil where a value was not computed.
type Decision struct {
	Ready, Unready, Missing *int
	Usage                   *float64 // metric units (milli ÷ 1000)
	Ratio, NewRatio         *float64
	Rec, Stab, Up, Down     *int
	Limit                   *int
	Current, Desired        int
	Reason                  string
}

type entry struct {
	t int64
	v int
}

// window keeps the recommendations that can still be the minimum (keepMax false) or maximum
// (keepMax true) of a window of fixed length: a monotonic queue, so a query is O(1) amortised
// and the queue never holds more than one entry per decision inside the window.
type window struct {
	lenNS   int64
	keepMax bool
	q       []entry
}

// best returns the extreme of v and the entries recorded strictly after t − lenNS.
func (w *window) best(t int64, v int) int {
	i := 0
	for i < len(w.q) && w.q[i].t <= t-w.lenNS {
		i++
	}
	if i > 0 {
		w.q = append(w.q[:0], w.q[i:]...)
	}
	if len(w.q) > 0 {
		if w.keepMax {
			v = max(v, w.q[0].v)
		} else {
			v = min(v, w.q[0].v)
		}
	}
	return v
}

func (w *window) push(t int64, v int) {
	for n := len(w.q); n > 0; n = len(w.q) {
		last := w.q[n-1].v
		if (w.keepMax && last > v) || (!w.keepMax && last < v) {
			break
		}
		w.q = w.q[:n-1]
	}
	w.q = append(w.q, entry{t, v})
}

type event struct {
	t      int64
	change int // +k up, −k down
}

// Controller is one HPA's controller state: its recommendation history and scale events.
type Controller struct {
	s      Settings
	seeded bool
	up     window // behavior path: minimum over the scale-up window
	down   window // maximum over the scale-down window (the legacy window without behavior)
	events []event
	maxPer int64 // the longest policy period: older events never count again
}

// New returns a controller with an empty history.
func New(s Settings) *Controller {
	c := &Controller{s: s}
	c.down = window{lenNS: s.DownscaleWindowNS, keepMax: true}
	if b := s.Behavior; b != nil {
		c.up = window{lenNS: b.Up.WindowNS}
		c.down = window{lenNS: b.Down.WindowNS, keepMax: true}
		for _, p := range append(append([]Policy(nil), b.Up.Policies...), b.Down.Policies...) {
			c.maxPer = max(c.maxPer, p.PeriodNS)
		}
	}
	return c
}

// Tolerances are the two directions' tolerances.
type Tolerances struct{ Down, Up float64 }

func (t Tolerances) within(ratio float64) bool {
	return 1-t.Down <= ratio && ratio <= 1+t.Up
}

func (c *Controller) tolerances() Tolerances {
	if b := c.s.Behavior; b != nil {
		return Tolerances{Down: b.Down.Tolerance, Up: b.Up.Tolerance}
	}
	return Tolerances{Down: c.s.Tolerance, Up: c.s.Tolerance}
}

// proposal is the metric source's answer: rec, and why it is current when it is.
type proposal struct {
	rec             int
	usage           float64
	ratio, newRatio *float64
	within, held    bool
}

// Decide is one sync at t with current replicas (active + starting workers): the decision, its
// record, and (with a behavior) the scale event of its change. The engine carries out
// Desired − Current.
func (c *Controller) Decide(t int64, current int, smp Sample) Decision {
	d := Decision{Current: current, Desired: current}
	if !c.seeded {
		// recordInitialRecommendation: the seed counts as recorded just before t, so it is in
		// every window of length > 0 at this decision, which is what stamping it t gives under
		// the strict "> t − length" rule.
		c.seeded = true
		c.up.push(t, current)
		c.down.push(t, current)
	}
	switch {
	case current > c.s.MaxReplicas:
		d.Desired, d.Reason = c.s.MaxReplicas, ReasonAboveMax
	case current < c.s.MinReplicas:
		d.Desired, d.Reason = c.s.MinReplicas, ReasonBelowMin
	default:
		d.Ready, d.Unready, d.Missing = ptr(smp.Ready), ptr(smp.Unready), ptr(smp.Missing)
		if c.s.Source == SourcePods && smp.Ready == 0 {
			d.Reason = ReasonNoMetrics
			return d
		}
		var p proposal
		if c.s.Source == SourceExternal {
			p = c.externalReplicas(current, smp)
		} else {
			p = c.plainMetricReplicas(current, smp)
		}
		d.Usage, d.Ratio, d.NewRatio, d.Rec = ptr(p.usage), p.ratio, p.newRatio, ptr(p.rec)
		if c.s.Behavior == nil {
			c.legacy(t, &d)
		} else {
			c.withBehavior(t, &d)
		}
		switch {
		case d.Desired > current:
			d.Reason = ReasonScaleUp
		case d.Desired < current:
			d.Reason = ReasonScaleDown
		case p.within:
			d.Reason = ReasonWithinTolerance
		case p.held:
			d.Reason = ReasonHeldByStarting
		case p.rec != current && *d.Stab == current:
			d.Reason = ReasonStabilized
		case *d.Stab != current:
			d.Reason = c.boundReason(&d)
		default:
			d.Reason = ReasonNoChange
		}
	}
	if c.s.Behavior != nil && d.Desired != current {
		c.events = append(c.events, event{t, d.Desired - current})
	}
	return d
}

// boundReason names the condition that held a stabilised recommendation at current
// (convertDesiredReplicasWithBehaviorRate, convertDesiredReplicasWithRules).
func (c *Controller) boundReason(d *Decision) string {
	stab, cur := *d.Stab, d.Current
	if c.s.Behavior == nil {
		return ReasonAtBound
	}
	if stab > cur {
		if *d.Limit < c.s.MaxReplicas {
			return ReasonLimited
		}
		return ReasonAtBound
	}
	if *d.Limit > c.s.MinReplicas {
		return ReasonLimited
	}
	return ReasonAtBound
}

// plainMetricReplicas follows calcPlainMetricReplicas for a Pods metric.
func (c *Controller) plainMetricReplicas(current int, smp Sample) proposal {
	target := c.s.TargetMilli
	tol := c.tolerances()
	usageMilli := smp.Milli / int64(smp.Ready)
	ratio := float64(usageMilli) / float64(target)
	p := proposal{usage: float64(usageMilli) / 1000, ratio: ptr(ratio)}
	rebalanceIgnored := smp.Unready > 0 && ratio > 1
	if !rebalanceIgnored && smp.Missing == 0 {
		if tol.within(ratio) {
			p.rec, p.within = current, true
			return p
		}
		p.rec = int(math.Ceil(ratio * float64(smp.Ready)))
		return p
	}
	sum, count := smp.Milli, int64(smp.Ready)
	switch {
	case smp.Missing == 0:
	case ratio < 1:
		// On a scale-down, missing pods count as using exactly the target.
		sum += int64(smp.Missing) * target
		count += int64(smp.Missing)
	case ratio > 1:
		// On a scale-up they count as 0.
		count += int64(smp.Missing)
	default:
		// At exactly 1 they get no sample and are left out (the controller's
		// `else if usageRatio > 1.0`): new_ratio stays 1, and the decision holds.
	}
	if rebalanceIgnored {
		count += int64(smp.Unready)
	}
	newRatio := float64(sum/count) / float64(target)
	p.newRatio = ptr(newRatio)
	if tol.within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		p.rec, p.held = current, true
		return p
	}
	m := int(math.Ceil(newRatio * float64(count)))
	if (newRatio < 1 && m > current) || (newRatio > 1 && m < current) {
		p.rec, p.held = current, true
		return p
	}
	p.rec = m
	p.held = m == current
	return p
}

// externalReplicas follows GetExternalPerPodMetricReplicas: one value for the whole target,
// divided by the target per pod and the current replicas.
func (c *Controller) externalReplicas(current int, smp Sample) proposal {
	target := c.s.TargetMilli
	ratio := float64(smp.Milli) / (float64(target) * float64(current))
	p := proposal{usage: float64(smp.Milli) / 1000, ratio: ptr(ratio)}
	if c.tolerances().within(ratio) {
		p.rec, p.within = current, true
		return p
	}
	p.rec = int(math.Ceil(float64(smp.Milli) / float64(target)))
	return p
}

// legacy is normalizeDesiredReplicas: the maximum over the downscale window, then
// convertDesiredReplicasWithRules.
func (c *Controller) legacy(t int64, d *Decision) {
	rec := *d.Rec
	stab := c.down.best(t, rec)
	c.down.push(t, rec)
	limit := max(2*d.Current, 4)
	desired := stab
	if stab < c.s.MinReplicas {
		desired = c.s.MinReplicas
	} else if hi := min(c.s.MaxReplicas, limit); stab > hi {
		desired = hi
	}
	d.Stab, d.Limit, d.Desired = ptr(stab), ptr(limit), desired
}

// withBehavior is normalizeDesiredReplicasWithBehaviors: both windows, then the rate limits of
// the policies.
func (c *Controller) withBehavior(t int64, d *Decision) {
	b := c.s.Behavior
	rec, cur := *d.Rec, d.Current
	up := c.up.best(t, rec)
	down := c.down.best(t, rec)
	c.up.push(t, rec)
	c.down.push(t, rec)
	stab := cur
	if stab < up {
		stab = up
	}
	if stab > down {
		stab = down
	}
	d.Up, d.Down, d.Stab = ptr(up), ptr(down), ptr(stab)
	c.prune(t)
	switch {
	case stab > cur:
		lim := max(c.scaleUpLimit(t, cur, b.Up), cur)
		d.Limit = ptr(lim)
		d.Desired = min(stab, c.s.MaxReplicas, lim)
	case stab < cur:
		lim := min(c.scaleDownLimit(t, cur, b.Down), cur)
		d.Limit = ptr(lim)
		d.Desired = max(stab, c.s.MinReplicas, lim)
	}
}

// prune drops scale events older than every policy period: they never count again.
func (c *Controller) prune(t int64) {
	i := 0
	for i < len(c.events) && c.events[i].t <= t-c.maxPer {
		i++
	}
	if i > 0 {
		c.events = append(c.events[:0], c.events[i:]...)
	}
}

// changeInPeriod is getReplicasChangePerPeriod for both directions: the replicas added and
// removed by events recorded strictly after t − period.
func (c *Controller) changeInPeriod(t, period int64) (added, removed int) {
	for i := len(c.events) - 1; i >= 0 && c.events[i].t > t-period; i-- {
		if ch := c.events[i].change; ch > 0 {
			added += ch
		} else {
			removed -= ch
		}
	}
	return added, removed
}

// scaleUpLimit is calculateScaleUpLimitWithScalingRules.
func (c *Controller) scaleUpLimit(t int64, current int, r Rules) int {
	if r.Select == SelectDisabled {
		return current
	}
	result := math.MinInt
	if r.Select == SelectMin {
		result = math.MaxInt
	}
	for _, p := range r.Policies {
		added, removed := c.changeInPeriod(t, p.PeriodNS)
		start := current - added + removed
		var proposed int
		if p.Type == PolicyPods {
			proposed = start + p.Value
		} else {
			proposed = int(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if r.Select == SelectMin {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

// scaleDownLimit is calculateScaleDownLimitWithBehaviors.
func (c *Controller) scaleDownLimit(t int64, current int, r Rules) int {
	if r.Select == SelectDisabled {
		return current
	}
	result := math.MaxInt
	if r.Select == SelectMin {
		result = math.MinInt
	}
	for _, p := range r.Policies {
		added, removed := c.changeInPeriod(t, p.PeriodNS)
		start := current - added + removed
		var proposed int
		if p.Type == PolicyPods {
			proposed = start - p.Value
		} else {
			proposed = int(float64(start) * (1 - float64(p.Value)/100))
		}
		if r.Select == SelectMin {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}

func ptr[T any](v T) *T { return &v }
