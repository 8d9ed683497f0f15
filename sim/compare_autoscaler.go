package sim

import "fmt"

// CounterpartAutoscaler pairs an autoscaler run with the same scenario on a fixed fleet: no
// autoscaler, the baseline's workers for the whole run (docs/model.md#model-3, issues 17 and 34).
const CounterpartAutoscaler = "autoscaler"

// fixedFleetMarker is what the fixed-fleet counterpart adds to the name.
const fixedFleetMarker = " — fixed fleet"

// CounterpartKinds lists every counterpart kind, for messages and forms.
func CounterpartKinds() []string {
	return []string{CounterpartHints, CounterpartGuard, CounterpartAutoscaler}
}

// The baseline: every comparison of an autoscaler with "never scaling" (the autoscaler pair,
// the tune and diagnose plans, the run page's sentence) is made against one fixed fleet, the
// autoscaler's max_workers unless the user names a size (-baseline-workers,
// "baseline_workers"). A fixed fleet of the maximum is what the autoscaler's bounds say the
// night may need at its peak, the fleet an operator would otherwise hold.

// BaselineWorkers is the size of the fixed fleet an autoscaler scenario is compared with:
// named when above 0, else the autoscaler's max_workers (fleet.workers without an autoscaler).
func BaselineWorkers(s *Scenario, named int) int {
	switch {
	case named > 0:
		return named
	case s.Autoscaler != nil:
		return s.Autoscaler.MaxWorkers
	}
	return s.Fleet.Workers
}

// CheckBaselineWorkers says what is wrong with a named baseline size (0 is "the default"), or
// "" when it is fine. path names the field in the message.
func CheckBaselineWorkers(path string, named int) string {
	if named < 0 || named > MaxWorkers {
		return fmt.Sprintf("%s: must be a number of workers from 1 to %d for a fixed fleet of that size, or 0 (left out) for the autoscaler's max_workers (got %d)", path, MaxWorkers, named)
	}
	return ""
}

// BaselinePhrase says which fixed fleet a comparison uses: "a fixed fleet of 5 workers, the
// autoscaler's maximum", or "…, the size you named".
func BaselinePhrase(s *Scenario, named int) string {
	n := BaselineWorkers(s, named)
	why := "the size you named"
	switch {
	case named == 0 && s.Autoscaler == nil && s.PoolAutoscalers != nil:
		return poolBaselinePhrase(s)
	case named > 0 && s.Autoscaler != nil && named == s.Autoscaler.MaxWorkers:
		why = "the autoscaler's maximum, as you named"
	case named > 0:
	case s.Autoscaler != nil:
		why = "the autoscaler's maximum"
	default:
		why = "fleet.workers"
	}
	return fmt.Sprintf("a fixed fleet of %s, %s", plural(n, "worker"), why)
}

// poolBaselinePhrase is BaselinePhrase with pools: "fixed pools of 8 prefill and 12 decode
// workers, the autoscalers' maximums".
func poolBaselinePhrase(s *Scenario) string {
	prefill, decode := FixedPoolSizes(s)
	pa := s.PoolAutoscalers
	why := "the autoscalers' maximums"
	switch {
	case pa.Prefill == nil:
		why = "the decode autoscaler's maximum and the prefill pool's own size"
	case pa.Decode == nil:
		why = "the prefill autoscaler's maximum and the decode pool's own size"
	}
	return fmt.Sprintf("fixed pools of %d prefill and %s, %s", prefill, plural(decode, "decode worker"), why)
}

// FixedPoolSizes is the pools' baseline: each pool with an autoscaler at that autoscaler's
// max_workers, a pool without one at its own size. s must have pools.
func FixedPoolSizes(s *Scenario) (prefill, decode int) {
	d, pa := s.Disaggregation, s.PoolAutoscalers
	prefill, decode = d.Prefill.Workers, d.Decode.Workers
	if a := pa.Of(RolePrefill); a != nil {
		prefill = a.MaxWorkers
	}
	if a := pa.Of(RoleDecode); a != nil {
		decode = a.MaxWorkers
	}
	return prefill, decode
}

// plural is "1 worker" or "5 workers".
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// FixedFleet is s without its autoscaler or scale-in on the baseline: BaselineWorkers(s,
// named) workers for the whole run, the name marked. With prefill and decode pools, each pool
// with an autoscaler is held at that autoscaler's max_workers (a pool without one keeps its
// workers); one named size cannot say how to split two pools, so named must be 0 there.
func FixedFleet(s *Scenario, named int) (*Scenario, error) {
	if s.Autoscaler == nil && s.PoolAutoscalers == nil {
		return nil, fmt.Errorf("sim: the %q pair compares an autoscaler with a fixed fleet, and this scenario has no autoscaler; add one (autoscaler: {…}) or pair by %q or %q", CounterpartAutoscaler, CounterpartHints, CounterpartGuard)
	}
	if msg := CheckBaselineWorkers("baseline_workers", named); msg != "" {
		return nil, fmt.Errorf("sim: %s", msg)
	}
	c := cloneScenario(s)
	if pa := s.PoolAutoscalers; pa != nil {
		if named > 0 {
			return nil, fmt.Errorf("sim: baseline_workers names one fleet's size, and this scenario has prefill and decode pools: the fixed fleet holds each pool at its autoscaler's max_workers; leave baseline_workers out (or set autoscaler.prefill.max_workers and autoscaler.decode.max_workers)")
		}
		c.Disaggregation.Prefill.Workers, c.Disaggregation.Decode.Workers = FixedPoolSizes(s)
		c.PoolAutoscalers = nil
	} else {
		c.Fleet.Workers = BaselineWorkers(s, named)
		c.Autoscaler = nil
	}
	c.ScaleIn = []ScaleInAction{}
	c.Name = withMarker(c.Name, fixedFleetMarker)
	return c, nil
}

// withMarker appends a name marker, keeping the name within MaxNameChars.
func withMarker(name, marker string) string {
	r := []rune(name)
	if max := MaxNameChars - len([]rune(marker)); len(r) > max {
		name = string(r[:max])
	}
	return name + marker
}

// AutoscalerFigures are the figures an autoscaler run adds to the headline (docs/model.md#model-3): what
// it cost in GPUs and what it did to requests.
func AutoscalerFigures(r *Report) []Figure {
	if r == nil {
		r = &Report{}
	}
	value := func(f float64) *float64 { return &f }
	return []Figure{
		{HeadlineGPUHours, "GPU-hours", "GPU-h", value(r.Summary.GPUHours)},
		{HeadlineWorkersPeak, "Peak workers", "workers", value(float64(r.Summary.Workers.Peak))},
		{HeadlineWorkersFinal, "Final workers", "workers", value(float64(r.Summary.Workers.Final))},
		{HeadlineRequestsMigrated, "Requests migrated", "moves", value(float64(r.Summary.Requests.Migrated))},
	}
}
