package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/scalein-planner/scalein/sim/whatif"
)

// optionalShare is a flag holding a share of requests, such as 0.99; unset is nil.
type optionalShare struct{ v *float64 }

func (o *optionalShare) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optionalShare) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a share of requests such as 0.99 for 99 %% (got %q)", s)
	}
	o.v = &f
	return nil
}

// capacityPlanFlags makes the request of "scalein plan -capacity": goal.capacity with
// -min-attainment as its goal, and -max-runs only when given (the capacity search's own
// default is 12 runs).
func capacityPlanFlags(o planOptions, fs *commandFlags, minAttainment optionalShare, maxRuns int, search string) (planOptions, int, bool) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"ttft-p99-ms", "e2e-p99-ms", "max-killed", "hpa", "force"} {
		if set[name] {
			return o, fs.usageError("-%s does not apply to -capacity: its only limit is -min-attainment with the scenario's slo", name), false
		}
	}
	if search != "" {
		return o, fs.usageError("-search does not apply to -capacity; use -max-runs"), false
	}
	goal := &whatif.CapacityGoal{}
	if minAttainment.v != nil {
		goal.MinAttainment = *minAttainment.v
	}
	o.req = whatif.Request{Goal: whatif.Goal{Capacity: goal}}
	if set["max-runs"] {
		o.req.Search.MaxRuns = maxRuns
	}
	return o, 0, true
}

// diagnosePlanFlags makes the request of "scalein plan -diagnose": goal.diagnose with μ from
// -rate-per-worker, or a capacity search for -min-attainment of requests; -max-runs only when
// given.
func diagnosePlanFlags(o planOptions, fs *commandFlags, minAttainment optionalShare, rate float64, maxRuns int, search string) (planOptions, int, bool) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"ttft-p99-ms", "e2e-p99-ms", "max-killed", "hpa", "force"} {
		if set[name] {
			return o, fs.usageError("-%s does not apply to -diagnose: it judges runs by the scenario's slo", name), false
		}
	}
	if search != "" {
		return o, fs.usageError("-search does not apply to -diagnose; use -max-runs"), false
	}
	goal := &whatif.DiagnoseGoal{RatePerWorker: rate}
	if minAttainment.v != nil {
		goal.Capacity = &whatif.CapacityGoal{MinAttainment: *minAttainment.v}
	}
	o.req = whatif.Request{Goal: whatif.Goal{Diagnose: goal}}
	if set["max-runs"] {
		o.req.Search.MaxRuns = maxRuns
	}
	return o, 0, true
}
