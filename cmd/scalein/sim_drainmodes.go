package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/scalein-planner/scalein/sim"
)

// drainModesOutput is what -pair prefill-drain writes: the same scenario under each prefill
// drain mode, and each other mode compared with wait (a: wait, b: the mode), keyed by mode.
type drainModesOutput struct {
	Modes       []string                  `json:"modes"`
	Runs        map[string]*sim.Report    `json:"runs"`
	Comparisons map[string]sim.Comparison `json:"comparisons"`
}

// pairKinds are the -pair kinds.
func pairKinds() []string {
	return append([]string{sim.CounterpartHints, sim.CounterpartGuard, sim.CounterpartAutoscaler}, sim.PoolCounterpartKinds()...)
}

// runDrainModes runs the three prefill drain modes side by side.
func runDrainModes(ctx context.Context, s *sim.Scenario, progress *progressLine, stderr io.Writer) (any, int) {
	scs, err := sim.PrefillDrainVariants(s)
	if err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return nil, 2
	}
	reports := make([]*sim.Report, len(scs))
	errs := make([]error, len(scs))
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Go(func() {
			reports[i], errs[i] = sim.Run(ctx, sc, sim.RunOptions{Progress: progress.reporter(i, len(scs))})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, runFailed(stderr, err)
	}
	progress.finish()
	out := drainModesOutput{Modes: sim.PrefillDrainModes, Runs: map[string]*sim.Report{}, Comparisons: map[string]sim.Comparison{}}
	for i, m := range sim.PrefillDrainModes {
		out.Runs[m] = reports[i]
		if i > 0 {
			out.Comparisons[m] = sim.Compare(scs[0], scs[i], reports[0], reports[i])
		}
	}
	return out, 0
}
