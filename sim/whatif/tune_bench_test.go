package whatif_test

import (
	"context"
	"testing"

	"github.com/scalein-planner/scalein/sim/whatif"
)

// BenchmarkTunePlanReused is a second identical tune plan on the compressed-day preset: every
// run is reused from the runner, so this is the planner's own cost (docs/performance.md).
func BenchmarkTunePlanReused(b *testing.B) {
	base := mustScenarioB(b, "../presets/autoscaler-day.json")
	r := &whatif.LocalRunner{}
	limit := 500.0
	req := whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}, Constraints: whatif.Constraints{TTFTP99MS: &limit}}
	first, err := whatif.Plan(context.Background(), r, base, req)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := whatif.Plan(context.Background(), r, base, req)
		if err != nil {
			b.Fatal(err)
		}
		if res.Reused != res.Runs || res.Recommended.ScenarioID != first.Recommended.ScenarioID {
			b.Fatalf("the second plan simulated %d of %d runs", res.Runs-res.Reused, res.Runs)
		}
	}
}
