package whatif

import (
	"testing"

	"github.com/scalein-planner/scalein/sim"
)

// BenchmarkCapacityProbe is the planner's own work for one capacity probe of e2 (20,000
// scripted requests): building the probe's scenario and its id, besides its run.
func BenchmarkCapacityProbe(b *testing.B) {
	p, ok := sim.PresetByKey("e2")
	if !ok {
		b.Fatal("no preset e2")
	}
	base, err := sim.Parse(p.JSON, sim.ParseEnv{})
	if err != nil {
		b.Fatal(err)
	}
	g := CapacityGoal{MinAttainment: 0.99, Workers: 2, DurationMS: 300000}
	rate := 1410.0
	for b.Loop() {
		sc := capacityScenario(base, g, rate)
		_ = sc.ID()
	}
}
