package main

import (
	"fmt"
	"io"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// writeHPA writes the tune plan's recommended settings to path: into the user's file when
// origin carries it (only the changed fields changed, as scalein export does), else as new
// Kubernetes manifests. With nothing recommended it says so and writes nothing (exit 1: the
// plan's JSON says why).
func writeHPA(path string, base *sim.Scenario, res *whatif.Result, origin *hpa.Origin, stderr io.Writer) int {
	rec := res.Recommended
	if rec == nil || rec.Autoscaler == nil {
		fmt.Fprintf(stderr, "scalein plan: -hpa: nothing is recommended, so no manifest was written: %s\n", res.Reason)
		return 1
	}
	out, code := exportSettings("plan", hpa.Settings{Autoscaler: *rec.Autoscaler, MigrationLimit: *rec.MigrationLimit, Origin: origin,
		Source: fmt.Sprintf("scalein plan -tune on scenario %q, recommended %q (scenario_id %s)", base.Name, rec.Label, rec.ScenarioID)}, stderr)
	if code != 0 {
		return code
	}
	if err := writeFileAtomic(path, out); err != nil {
		fmt.Fprintf(stderr, "scalein plan: -hpa: %v\n", err)
		return 1
	}
	return 0
}
