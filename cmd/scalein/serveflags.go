package main

import (
	"flag"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/web"
)

// calibrationCap reads -max-calibration-bytes: "" is the default (web.DefaultMaxCalibrationBytes);
// anything else is a size above 0, like 500MB (issue 19 M7: the cap had no flag).
func calibrationCap(text string) (int64, error) {
	if text == "" {
		return web.DefaultMaxCalibrationBytes, nil
	}
	n, err := sim.ParseBytes(text)
	if err != nil {
		return 0, fmt.Errorf("-max-calibration-bytes: %w", err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("-max-calibration-bytes must be above 0 (got %q); leave it out for the default of %s", text, sim.FormatBytes(web.DefaultMaxCalibrationBytes))
	}
	return n, nil
}

// checkServeLimits refuses, before anything starts, the limit flags a user set to a value that
// would remove a bound or make a plan or sweep wait for room that can never come (issue 19 L5):
// a flag left out takes its default; one set to 0 or less is an error, not "no bound".
func checkServeLimits(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		n, isInt := g.Get().(int)
		if !isInt {
			return
		}
		switch f.Name {
		case "queue", "runs-per-minute", "max-sweep-points":
			if n < 1 {
				err = fmt.Errorf("-%s must be at least 1 (got %d); leave it out for the default", f.Name, n)
			}
		case "max-plan-runs":
			if n < 2 || n > whatif.MaxPlanRunsLimit {
				err = fmt.Errorf("-max-plan-runs must be between 2 and %d, the planner's own limit (got %d)", whatif.MaxPlanRunsLimit, n)
			}
		}
	})
	return err
}
