package web

import (
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// tracePIDLifecycle is the trace's process of every worker's lifecycle under an autoscaler.
const (
	tracePIDLifecycle = 5
	// maxTraceLifecycleWorkers bounds the lifecycle tracks (a few events each).
	maxTraceLifecycleWorkers = 20_000
)

// autoscalerTrace is what trace.json adds for an autoscaler run (docs/model.md#model-3): its decisions as
// instants on the Fleet process (thread 2), with what each saw and did, and a process
// "Worker lifecycle" with, per worker, its starting, active and draining spans and its removal
// as an instant. A worker made active again while draining shows one active span from its
// activation to its last marking: the report keeps only the last drain.
func autoscalerTrace(rep *sim.Report) []traceEvent {
	if rep.Autoscaler == nil {
		return nil
	}
	end := rep.Summary.DurationMS
	ev := []traceEvent{
		meta("thread_name", tracePIDFleet, 2, "autoscaler decisions"),
		meta("process_name", tracePIDLifecycle, 0, "Worker lifecycle"),
	}
	for _, d := range rep.Autoscaler.Decisions {
		ev = append(ev, traceEvent{Name: "decision: " + d.Reason, Cat: "autoscaler", Ph: "i", S: "p", TS: usOf(d.TMS),
			PID: tracePIDFleet, TID: 2, Args: map[string]any{"ready": d.Ready, "unready": d.Unready, "missing": d.Missing, "usage": d.Usage,
				"ratio": d.Ratio, "new_ratio": d.NewRatio, "rec": d.Rec, "stab": d.Stab, "limit": d.Limit,
				"desired": d.Desired, "current": d.Current, "drained": d.Drained, "cancelled": d.Cancelled,
				"reactivated": d.Reactivated, "started": d.Started}})
	}
	for i, w := range rep.Workers {
		if i >= maxTraceLifecycleWorkers {
			break
		}
		ev = append(ev, meta("thread_name", tracePIDLifecycle, w.ID, fmt.Sprintf("worker %d", w.ID)))
		stop := end
		if w.RemovedAtMS != nil {
			stop = *w.RemovedAtMS
		}
		activeFrom := 0.0
		if w.StartedAtMS != nil {
			startEnd := stop
			if w.ActiveAtMS != nil {
				startEnd = *w.ActiveAtMS
			}
			ev = append(ev, span("starting", "lifecycle", tracePIDLifecycle, w.ID, *w.StartedAtMS, startEnd, nil))
			if w.ActiveAtMS == nil {
				if w.RemovedAtMS != nil {
					ev = append(ev, traceEvent{Name: "cancelled", Cat: "lifecycle", Ph: "i", S: "t", TS: usOf(*w.RemovedAtMS), PID: tracePIDLifecycle, TID: w.ID})
				}
				continue
			}
			activeFrom = *w.ActiveAtMS
		}
		activeTo := stop
		if w.MarkedAtMS != nil && w.DrainMS != nil || w.MarkedAtMS != nil && w.FinalState == sim.StateDraining {
			activeTo = *w.MarkedAtMS
			ev = append(ev, span("draining", "lifecycle", tracePIDLifecycle, w.ID, *w.MarkedAtMS, stop, nil))
		}
		ev = append(ev, span("active", "lifecycle", tracePIDLifecycle, w.ID, activeFrom, activeTo,
			map[string]any{"reactivations": w.Reactivations}))
		if w.RemovedAtMS != nil {
			ev = append(ev, traceEvent{Name: "removed", Cat: "lifecycle", Ph: "i", S: "t", TS: usOf(*w.RemovedAtMS), PID: tracePIDLifecycle, TID: w.ID,
				Args: map[string]any{"forced": w.Forced}})
		}
	}
	return ev
}
