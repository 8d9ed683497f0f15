package sim

import "fmt"

// CounterpartAutoscaler pairs an autoscaler run with the same scenario on a fixed fleet: no
// autoscaler, fleet.workers for the whole run (docs/model.md#model-3, issue 17).
const CounterpartAutoscaler = "autoscaler"

// fixedFleetMarker is what the fixed-fleet counterpart adds to the name.
const fixedFleetMarker = " — fixed fleet"

// CounterpartKinds lists every counterpart kind, for messages and forms.
func CounterpartKinds() []string {
	return []string{CounterpartHints, CounterpartGuard, CounterpartAutoscaler}
}

// fixedFleetCounterpart is s without its autoscaler.
func fixedFleetCounterpart(s *Scenario) (*Scenario, error) {
	if s.Autoscaler == nil {
		return nil, fmt.Errorf("sim: the %q pair compares an autoscaler with a fixed fleet, and this scenario has no autoscaler; add one (autoscaler: {…}) or pair by %q or %q", CounterpartAutoscaler, CounterpartHints, CounterpartGuard)
	}
	c := cloneScenario(s)
	c.Autoscaler = nil
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
