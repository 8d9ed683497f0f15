package sim

import (
	"cmp"
	"slices"

	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// An autoscaler per pool (docs/model.md#model-5): each a model-4 controller over its pool's
// workers. At one instant the samples of both come first (prefill first), then the decisions
// (prefill first).

// stepAutoscalersPD is the pools' part of step 6. It reports whether a pool changed.
func (e *engine) stepAutoscalersPD() bool {
	for _, c := range e.pd.scalers {
		e.sampleDue(c)
	}
	changed := false
	for _, c := range e.pd.scalers {
		if e.decideDue(c) {
			changed = true
		}
	}
	if changed {
		e.changed()
	}
	return changed
}

// stepActivationsPD makes the starting workers of both pools whose startup ended active, by id.
func (e *engine) stepActivationsPD() bool {
	var due []*worker
	for _, c := range e.pd.scalers {
		if c.stopped {
			continue
		}
		n := 0
		for n < len(c.starting) && c.starting[n].activeAt <= e.now {
			n++
		}
		due = append(due, c.starting[:n]...)
		c.starting = append(c.starting[:0], c.starting[n:]...)
	}
	if len(due) == 0 {
		return false
	}
	slices.SortFunc(due, func(a, b *worker) int { return cmp.Compare(a.id, b.id) })
	for _, w := range due {
		e.activate(w)
	}
	e.changed()
	return true
}

// activatedPD gives a started worker its pool's parts as it becomes active.
func (e *engine) activatedPD(w *worker) {
	pd := e.pd
	pd.starting[w.role]--
	pd.active[w.role]++
	if w.role == rolePrefill {
		w.ph.tLast = e.now
	}
}

// reactivatedPD records a draining pool worker made active again.
func (e *engine) reactivatedPD(w *worker) {
	pd := e.pd
	pd.draining[w.role]--
	pd.active[w.role]++
	if w.ph != nil {
		w.ph.setDraining(e.now, false)
	}
}

// samplePool reads the active workers of a pool (docs/model.md#model-5 "An autoscaler per
// pool"): a decode worker's waiting requests include those waiting for or pulling their
// handoff; used blocks include held ones; handoffs_held counts a prefill worker's open holds.
func (e *engine) samplePool(role uint8) workerSample {
	var smp workerSample
	g := int64(e.pd.fleets[role].GPUBlocks)
	for _, w := range e.ws {
		if w.role != role || w.state != StateActive {
			continue
		}
		smp.n++
		smp.add(w, int64(e.usedBlocks[w.slot]), g)
		if w.ph != nil {
			held := int64(w.ph.n)
			smp.held += held
			smp.maxHeld = max(smp.maxHeld, held)
		}
	}
	return smp
}

// stopCheckPD is the end-of-run rule for the pools' autoscalers.
func (e *engine) stopCheckPD() {
	if len(e.pd.scalers) == 0 || e.waitingN+e.running > 0 {
		return
	}
	if _, ok := e.src.peek(); !ok {
		for _, c := range e.pd.scalers {
			c.stopped = true
		}
	}
}

// reportPoolAutoscalers merges the pools' decisions in time order (prefill first at one t_ms)
// and counts them together.
func (e *engine) reportPoolAutoscalers(r *Report) {
	if len(e.pd.scalers) == 0 {
		return
	}
	rows := []Decision{} // a list, never null, when the run ended before the first decision
	counts := AutoscalerSummary{Reasons: ReasonCounts{}}
	for _, c := range e.pd.scalers {
		rows = append(rows, c.rows...)
		counts.Decisions += c.counts.Decisions
		counts.ScaleUps += c.counts.ScaleUps
		counts.ScaleDowns += c.counts.ScaleDowns
		for _, k := range podautoscaler.Reasons {
			counts.Reasons[k] += c.counts.Reasons[k]
		}
	}
	slices.SortStableFunc(rows, func(a, b Decision) int { return cmp.Compare(a.TMS, b.TMS) })
	r.Autoscaler = &AutoscalerReport{Decisions: rows}
	r.Summary.Autoscaler = &counts
}
