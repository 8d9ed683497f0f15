package sim

import "fmt"

// Counterparts of a scenario with prefill and decode pools (docs/model.md#model-5): the
// operator's questions about a scale-in of a disaggregated fleet.
const (
	// CounterpartLoadFailure flips disaggregation.load_failure_policy (fail ↔ recompute).
	CounterpartLoadFailure = "load-failure"
	// CounterpartLease flips the hold limit: heartbeat (vLLM ≥ 0.22) ↔ fixed 480 s (before).
	CounterpartLease = "lease"
	// CounterpartPrefillDrain runs the same scenario under the three prefill drain modes (wait,
	// fixed, skip): three runs, not a pair (PrefillDrainVariants).
	CounterpartPrefillDrain = "prefill-drain"
)

func pdCounterpart(kind string) bool {
	return kind == CounterpartLoadFailure || kind == CounterpartLease || kind == CounterpartPrefillDrain
}

// poolCounterpart is the counterpart of a pair kind of model 5.
func poolCounterpart(s *Scenario, kind string) (*Scenario, error) {
	if s.Disaggregation == nil {
		return nil, fmt.Errorf("sim: the %q pair compares settings of prefill and decode pools, and this scenario has none; add disaggregation: {\"prefill\": {…}, \"decode\": {…}}", kind)
	}
	c := cloneScenario(s)
	d := c.Disaggregation
	switch kind {
	case CounterpartLoadFailure:
		if d.LoadFailurePolicy == LoadFailureFail {
			d.LoadFailurePolicy = LoadFailureRecompute
		} else {
			d.LoadFailurePolicy = LoadFailureFail
		}
		c.Name = withMarker(stripMarkers(c.Name), " — load failure "+d.LoadFailurePolicy)
	case CounterpartLease:
		if d.Lease.Mode == LeaseHeartbeat {
			d.Lease = Lease{Mode: LeaseFixed, TTLMS: DefaultLeaseTTLMS}
			c.Name = withMarker(stripMarkers(c.Name), " — fixed 480 s lease")
		} else {
			d.Lease = Lease{Mode: LeaseHeartbeat}
			c.Name = withMarker(stripMarkers(c.Name), " — heartbeat lease")
		}
	default:
		return nil, fmt.Errorf("sim: %q runs three scenarios (wait, fixed, skip), not a pair; use PrefillDrainVariants", kind)
	}
	return c, nil
}

var poolMarkers = []string{" — load failure fail", " — load failure recompute", " — fixed 480 s lease",
	" — heartbeat lease", " — drain wait", " — drain fixed", " — drain skip"}

// stripMarkers removes a model-5 counterpart marker, so flipping twice gives back the name.
func stripMarkers(name string) string {
	for _, m := range poolMarkers {
		if len(name) >= len(m) && name[len(name)-len(m):] == m {
			return name[:len(name)-len(m)]
		}
	}
	return name
}

// PrefillDrainModes are the modes PrefillDrainVariants runs, in its order (wait is the baseline).
var PrefillDrainModes = []string{DrainWait, DrainFixed, DrainSkip}

// PrefillDrainVariants returns the scenario under each prefill drain mode, in
// PrefillDrainModes' order, each keeping its fixed_ms; the one equal to s keeps s's name.
func PrefillDrainVariants(s *Scenario) ([]*Scenario, error) {
	if s.Disaggregation == nil {
		return nil, fmt.Errorf("sim: the %q runs compare prefill drain modes, and this scenario has no prefill and decode pools; add disaggregation: {\"prefill\": {…}, \"decode\": {…}}", CounterpartPrefillDrain)
	}
	out := make([]*Scenario, 0, len(PrefillDrainModes))
	for _, m := range PrefillDrainModes {
		if m == s.Disaggregation.PrefillDrain.Mode {
			out = append(out, s)
			continue
		}
		c := cloneScenario(s)
		c.Disaggregation.PrefillDrain.Mode = m
		c.Name = withMarker(stripMarkers(c.Name), " — drain "+m)
		out = append(out, c)
	}
	return out, nil
}

// clonePools deep-copies model 5's parts of s into c.
func clonePools(c, s *Scenario) {
	if s.Disaggregation != nil {
		d := *s.Disaggregation
		c.Disaggregation = &d
	}
	if pa := s.PoolAutoscalers; pa != nil {
		n := &PoolAutoscalers{}
		for _, p := range []struct{ src, dst **Autoscaler }{{&pa.Prefill, &n.Prefill}, {&pa.Decode, &n.Decode}} {
			if *p.src != nil {
				one := cloneScenario(&Scenario{Autoscaler: *p.src})
				*p.dst = one.Autoscaler
			}
		}
		c.PoolAutoscalers = n
	}
}

// PoolCounterpartKinds lists the counterpart kinds of scenarios with pools (the command line's
// -pair; prefill-drain runs three scenarios).
func PoolCounterpartKinds() []string {
	return []string{CounterpartLoadFailure, CounterpartLease, CounterpartPrefillDrain}
}
