package podautoscaler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const s = int64(1_000_000_000) // one second in ns

// The rate-limit cases of the controller's tests (calculateScaleUpLimitWithScalingRules and
// calculateScaleDownLimitWithBehaviors), ported: events are (instant, change) before t = 100 s.
func TestScaleLimitsPorted(t *testing.T) {
	pods := func(v int, period int64) Policy { return Policy{PolicyPods, v, period * s} }
	pct := func(v int, period int64) Policy { return Policy{PolicyPercent, v, period * s} }
	now := 100 * s
	cases := []struct {
		name    string
		current int
		events  []event
		rules   Rules
		up      bool
		want    int
	}{
		{"up: no previous events", 5, nil, Rules{Policies: []Policy{pods(4, 60)}}, true, 9},
		{"up: a scale-up 30 s ago counts", 5, []event{{now - 30*s, 2}}, Rules{Policies: []Policy{pods(4, 60)}}, true, 7},
		{"up: disabled", 5, nil, Rules{Select: SelectDisabled, Policies: []Policy{pods(4, 60)}}, true, 5},
		{"up: min change", 5, nil, Rules{Select: SelectMin, Policies: []Policy{pods(4, 60), pods(2, 60)}}, true, 7},
		{"up: percent", 10, nil, Rules{Policies: []Policy{pct(50, 60)}}, true, 15},
		{"up: percent rounds up", 3, nil, Rules{Policies: []Policy{pct(50, 60)}}, true, 5},
		{"up: Kubernetes' defaults on 2", 2, nil, Rules{Policies: DefaultUpPolicies()}, true, 6},
		{"up: Kubernetes' defaults on 10", 10, nil, Rules{Policies: DefaultUpPolicies()}, true, 20},
		{"up: an event outside the period", 5, []event{{now - 60*s, 2}}, Rules{Policies: []Policy{pods(4, 60)}}, true, 9},
		{"up: a scale-down in the period raises the start", 5, []event{{now - 10*s, -3}}, Rules{Policies: []Policy{pods(1, 60)}}, true, 9},
		{"down: no previous events", 10, nil, Rules{Policies: []Policy{pct(20, 60)}}, false, 8},
		{"down: a scale-down 30 s ago counts", 10, []event{{now - 30*s, -1}}, Rules{Policies: []Policy{pct(20, 60)}}, false, 8},
		{"down: multiple policies, max change", 100, nil, Rules{Policies: []Policy{pct(10, 60), pods(5, 60)}}, false, 90},
		{"down: disabled", 10, nil, Rules{Select: SelectDisabled, Policies: []Policy{pct(20, 60)}}, false, 10},
		{"down: min change", 100, nil, Rules{Select: SelectMin, Policies: []Policy{pct(10, 60), pods(15, 60)}}, false, 90},
		{"down: percent truncates", 5, nil, Rules{Policies: []Policy{pct(50, 60)}}, false, 2},
		{"down: Kubernetes' default allows all", 7, nil, Rules{Policies: DefaultDownPolicies()}, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{events: tc.events}
			var got int
			if tc.up {
				got = c.scaleUpLimit(now, tc.current, tc.rules)
			} else {
				got = c.scaleDownLimit(now, tc.current, tc.rules)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// calcPlainMetricReplicas on Pods metrics, in milli-units, derived by hand from the
// controller's rules (the first is its TestReplicaCalcScaleUpCM: 20, 10 and 30 against 15).
func TestPlainMetricReplicas(t *testing.T) {
	cases := []struct {
		name     string
		current  int
		target   int64
		tol      float64
		smp      Sample
		rec      int
		within   bool
		held     bool
		newRatio float64 // 0: not computed
	}{
		{"scale up", 3, 15000, 0.1, Sample{Ready: 3, Milli: 60000}, 4, false, false, 0},
		{"within tolerance", 3, 1000, 0.1, Sample{Ready: 3, Milli: 3150}, 3, true, false, 0},
		{"scale down", 4, 1000, 0.1, Sample{Ready: 4, Milli: 1000}, 1, false, false, 0},
		{"missing pods at the target on a scale-down", 4, 2000, 0, Sample{Ready: 2, Missing: 2, Milli: 2000}, 3, false, false, 0.75},
		{"missing pods at 0 on a scale-up: held", 4, 2000, 0.1, Sample{Ready: 2, Missing: 2, Milli: 8000}, 4, false, true, 1},
		{"unready pods at 0 when ratio > 1", 4, 1000, 0, Sample{Ready: 2, Unready: 2, Milli: 6000}, 6, false, false, 1.5},
		{"unready pods ignored when ratio < 1", 4, 1000, 0, Sample{Ready: 2, Unready: 2, Milli: 1000}, 1, false, false, 0},
		{"new ratio across 1: held", 6, 2000, 0, Sample{Ready: 4, Missing: 2, Milli: 10000}, 6, false, true, 0.833},
		{"integer division of the average", 3, 1000, 0, Sample{Ready: 3, Milli: 1000}, 1, false, false, 0},
		// At a ratio of exactly 1 (`else if usageRatio > 1.0`) missing pods get no sample: counted
		// as 0 they would make 8000/6 → 0.6665 and scale down to 4.
		{"ratio exactly 1, missing pods left out: held", 6, 2000, 0, Sample{Ready: 4, Missing: 2, Milli: 8000}, 6, false, true, 1},
		{"ratio exactly 1, missing left out even with a tolerance", 6, 2000, 0.1, Sample{Ready: 4, Missing: 2, Milli: 8000}, 6, false, true, 1},
		{"ratio exactly 1, missing and Pending pods both left out", 7, 2000, 0, Sample{Ready: 4, Unready: 1, Missing: 2, Milli: 8000}, 7, false, true, 1},
		{"ratio exactly 1, Pending pods only: within tolerance", 5, 2000, 0, Sample{Ready: 4, Unready: 1, Milli: 8000}, 5, true, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Settings{TargetMilli: tc.target, Tolerance: tc.tol, MinReplicas: 1, MaxReplicas: 100})
			p := c.plainMetricReplicas(tc.current, tc.smp)
			assert.Equal(t, tc.rec, p.rec)
			assert.Equal(t, tc.within, p.within)
			assert.Equal(t, tc.held, p.held)
			if tc.newRatio == 0 {
				assert.Nil(t, p.newRatio)
			} else {
				require.NotNil(t, p.newRatio)
				assert.Equal(t, tc.newRatio, *p.newRatio)
			}
		})
	}
}

// GetExternalPerPodMetricReplicas: the value over target × current replicas.
func TestExternalReplicas(t *testing.T) {
	c := New(Settings{Source: SourceExternal, TargetMilli: 1000, MinReplicas: 1, MaxReplicas: 10})
	p := c.externalReplicas(2, Sample{Ready: 2, Milli: 5000})
	assert.Equal(t, 5, p.rec)
	assert.Equal(t, 2.5, *p.ratio)
	p = c.externalReplicas(5, Sample{Ready: 2, Missing: 3, Milli: 5000})
	assert.True(t, p.within, "starting pods count in the replicas")
	assert.Equal(t, 5, p.rec)
}

// A window holds what was recorded strictly after t − length; the seed is in every window of
// length > 0 at the first decision and in none of length 0.
func TestWindowsAndSeed(t *testing.T) {
	w := window{lenNS: 20, keepMax: true}
	w.push(10, 3)
	w.push(20, 1)
	assert.Equal(t, 3, w.best(29, 1), "the entry at 10 is inside (10 > 9)")
	assert.Equal(t, 1, w.best(30, 1), "exactly one window old: out")

	legacy := func(window int64) Decision {
		c := New(Settings{TargetMilli: 1000, DownscaleWindowNS: window, MinReplicas: 1, MaxReplicas: 10})
		return c.Decide(10, 3, Sample{Ready: 3, Milli: 1000})
	}
	d := legacy(0)
	assert.Equal(t, ReasonScaleDown, d.Reason, "window 0: the seed does not count")
	assert.Equal(t, 1, d.Desired)
	d = legacy(1)
	assert.Equal(t, ReasonStabilized, d.Reason, "window > 0: the seed (just before t) holds")
	assert.Equal(t, 3, *d.Stab)
}

// The legacy path: no scale-down rate limit, a scale-up limit of max(2 × current, 4), and a
// decision held at max_workers is at_bound.
func TestLegacyPath(t *testing.T) {
	c := New(Settings{TargetMilli: 1000, MinReplicas: 1, MaxReplicas: 10})
	d := c.Decide(10, 2, Sample{Ready: 2, Milli: 20000})
	assert.Equal(t, 4, d.Desired)
	assert.Equal(t, 4, *d.Limit)
	d = c.Decide(20, 4, Sample{Ready: 4, Milli: 80000})
	assert.Equal(t, 8, d.Desired)
	d = c.Decide(30, 8, Sample{Ready: 8, Milli: 160000})
	assert.Equal(t, 10, d.Desired)
	d = c.Decide(40, 10, Sample{Ready: 10, Milli: 200000})
	assert.Equal(t, ReasonAtBound, d.Reason)
	assert.Nil(t, d.Up)
}

// A behavior's reasons: limited when a policy (not a bound) holds the change, and every
// recorded change counts as a scale event of its direction.
func TestBehaviorLimitedAndEvents(t *testing.T) {
	b := &Behavior{
		Up:   Rules{Policies: DefaultUpPolicies(), Tolerance: 0},
		Down: Rules{Policies: []Policy{{PolicyPods, 1, 30}}, Tolerance: 0},
	}
	c := New(Settings{TargetMilli: 1000, MinReplicas: 1, MaxReplicas: 10, Behavior: b})
	d := c.Decide(10, 5, Sample{Ready: 5, Milli: 1000})
	assert.Equal(t, ReasonScaleDown, d.Reason)
	assert.Equal(t, 4, d.Desired)
	d = c.Decide(20, 4, Sample{Ready: 4, Milli: 1000})
	assert.Equal(t, ReasonLimited, d.Reason, "the −1 at 10 is inside the 30 ns period")
	assert.Equal(t, 4, *d.Limit)
	d = c.Decide(40, 4, Sample{Ready: 4, Milli: 1000})
	assert.Equal(t, ReasonScaleDown, d.Reason, "at 40 the event at 10 is exactly one period old: out")
	assert.Equal(t, 3, d.Desired)
	assert.Len(t, c.events, 2, "both kept: the scale-up policies' period is 15 s")
	d = c.Decide(16*s, 3, Sample{Ready: 3, Milli: 3000})
	assert.Equal(t, ReasonWithinTolerance, d.Reason)
	assert.Empty(t, c.events, "events older than every policy period are dropped")
}

// Above max_workers or below min_workers the controller sets the bound without reading a sample.
func TestBounds(t *testing.T) {
	c := New(Settings{TargetMilli: 1000, MinReplicas: 3, MaxReplicas: 5, Behavior: &Behavior{Up: Rules{Policies: DefaultUpPolicies()}, Down: Rules{Policies: DefaultDownPolicies()}}})
	d := c.Decide(10, 7, Sample{})
	assert.Equal(t, Decision{Current: 7, Desired: 5, Reason: ReasonAboveMax}, d)
	d = c.Decide(20, 2, Sample{})
	assert.Equal(t, Decision{Current: 2, Desired: 3, Reason: ReasonBelowMin}, d)
	assert.Len(t, c.events, 2)
}
