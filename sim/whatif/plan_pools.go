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
	case KindCapacity:
		return fail("goal.capacity", "a capacity plan measures one worker of one fleet; with prefill and decode pools a request needs a worker of each, which it does not measure yet. Instead sweep disaggregation.prefill.workers or disaggregation.decode.workers at your load and compare the runs")
	case KindDiagnose:
		return fail("goal.diagnose", "a diagnose plan compares one fleet's autoscaler with an ideal fleet; with prefill and decode pools (two autoscalers) it is not supported yet. Instead run the scenario (its decisions carry their pool) or compare it with a static one (scalein compare)")
	}
	what := "drain"
	if g.Kind() == KindTune {
		what = "tune the autoscaler of"
	}
	switch g.Role {
	case sim.RolePrefill, sim.RoleDecode:
		return nil
	case "":
		return fail("goal.role", fmt.Sprintf(`the scenario has prefill and decode pools: name the pool to %s, "prefill" or "decode" (goal.role; scalein plan -role): one pool per plan`, what))
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

// poolView is the scenario as a tune plan of one pool sees it: the pool's autoscaler as the
// scenario's (nil when the pool has none), so the search reads and varies it as one fleet's;
// poolScenario turns a candidate built on it back into a scenario with pools.
func poolView(base *sim.Scenario, role string) *sim.Scenario {
	if base.Disaggregation == nil || role == "" {
		return base
	}
	v := *base
	v.Autoscaler = nil
	if pa := base.PoolAutoscalers; pa != nil {
		v.Autoscaler = pa.Prefill
		if role == sim.RoleDecode {
			v.Autoscaler = pa.Decode
		}
	}
	return &v
}

// poolScenario moves sc's autoscaler back into its pool (role) beside the other pool's, as
// base has it; with fixed, the pool has no autoscaler and `workers` workers instead.
func poolScenario(sc *sim.Scenario, base *sim.Scenario, role string, fixed bool, workers int) {
	if base.Disaggregation == nil || role == "" {
		return
	}
	pa := sim.PoolAutoscalers{}
	if base.PoolAutoscalers != nil {
		pa = *base.PoolAutoscalers
	}
	mine := sc.Autoscaler
	if fixed {
		mine = nil
		d := *sc.Disaggregation
		if role == sim.RolePrefill {
			d.Prefill.Workers = workers
		} else {
			d.Decode.Workers = workers
		}
		sc.Disaggregation = &d
	}
	if role == sim.RolePrefill {
		pa.Prefill = mine
	} else {
		pa.Decode = mine
	}
	sc.Autoscaler, sc.PoolAutoscalers = nil, &pa
	if pa.Prefill == nil && pa.Decode == nil {
		sc.PoolAutoscalers = nil
	}
}
