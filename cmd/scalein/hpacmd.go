package main

import (
	"fmt"
	"io"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// writeHPA writes the tune plan's recommended settings as Kubernetes manifests to path. With
// nothing recommended it says so and writes nothing (exit 1: the plan's JSON says why).
func writeHPA(path string, base *sim.Scenario, res *whatif.Result, stderr io.Writer) int {
	rec := res.Recommended
	if rec == nil || rec.Autoscaler == nil {
		fmt.Fprintf(stderr, "scalein plan: -hpa: nothing is recommended, so no manifest was written: %s\n", res.Reason)
		return 1
	}
	out, err := hpa.Export(hpa.Settings{Autoscaler: *rec.Autoscaler, MigrationLimit: *rec.MigrationLimit,
		Source: fmt.Sprintf("scalein plan -tune on scenario %q, recommended %q (scenario_id %s)", base.Name, rec.Label, rec.ScenarioID)})
	if err != nil {
		fmt.Fprintf(stderr, "scalein plan: -hpa: %v\n", err)
		return 1
	}
	if err := writeFileAtomic(path, out); err != nil {
		fmt.Fprintf(stderr, "scalein plan: -hpa: %v\n", err)
		return 1
	}
	return 0
}
