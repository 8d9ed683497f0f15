package whatif

import (
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// Plans on a scenario with prefill and decode pools (docs/planning.md#pools): a drain plan
// drains one pool (goal.role), searching the same schedules as on one fleet with count actions
// of that role and worker sets chosen among that pool's workers. Tune, capacity and diagnose
// plans read one fleet's autoscaler and worker, and are refused with what to do instead.

// refusePools checks a goal against a scenario with pools: which kinds work, and goal.role.
func refusePools(g Goal) error {
	fail := func(path, msg string) error {
		return &sim.ValidationError{Errors: []sim.FieldError{{Path: path, Message: msg}}}
	}
	switch g.Kind() {
	case KindTune:
		return fail("goal.tune", "a tune plan searches one fleet's autoscaler; tuning each pool's autoscaler (autoscaler.prefill, autoscaler.decode) is not supported yet. Instead sweep a pool's settings (e.g. axes autoscaler.decode.target, autoscaler.prefill.behavior.scale_down.window_ms) and compare the runs, or plan a drain of one pool (goal.role)")
	case KindCapacity:
		return fail("goal.capacity", "a capacity plan measures one worker of one fleet; with prefill and decode pools a request needs a worker of each, which it does not measure yet. Instead sweep disaggregation.prefill.workers or disaggregation.decode.workers at your load and compare the runs")
	case KindDiagnose:
		return fail("goal.diagnose", "a diagnose plan compares one fleet's autoscaler with an ideal fleet; with prefill and decode pools (two autoscalers) it is not supported yet. Instead run the scenario (its decisions carry their pool) or compare it with a static one (scalein compare)")
	}
	switch g.Role {
	case sim.RolePrefill, sim.RoleDecode:
		return nil
	case "":
		return fail("goal.role", `the scenario has prefill and decode pools: name the pool to drain, "prefill" or "decode" (goal.role; scalein plan -role): one pool per plan`)
	}
	return fail("goal.role", fmt.Sprintf(`must be "prefill" or "decode" (got %q)`, g.Role))
}

// poolSelections are the selections a drain plan of a pool searches: the simulator's policies,
// and the decode workers with the least work (a prefill worker completes no request, and no
// worker serves KVCR pulls with disaggregation).
func poolSelections(role string) []string {
	sels := []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached}
	if role == sim.RoleDecode {
		sels = append(sels, SelectLeastWork)
	}
	return sels
}

// poolSelectionWhy says why a selection is not searched on a pool.
func poolSelectionWhy(sel, role string) string {
	if sel == SelectFewestPullsServed {
		return "ranks workers by the KVCR pulls they served, and with prefill and decode pools there are none (handoffs are not KVCR pulls): use highest_id, least_loaded or least_cached"
	}
	return fmt.Sprintf("ranks workers by the requests they completed, and a %s worker completes none (its requests complete on a decode worker): use highest_id, least_loaded or least_cached", role)
}

// ofPool is the worker rows of the goal's pool (all rows without one).
func ofPool(rows []sim.WorkerRow, role string) []sim.WorkerRow {
	if role == "" {
		return rows
	}
	var out []sim.WorkerRow
	for _, w := range rows {
		if w.Role == role {
			out = append(out, w)
		}
	}
	return out
}
