package sim

// Draining and removing workers of the two pools (docs/model.md#model-5 "Prefill drain",
// "Decode drain"): a prefill worker's removal by prefill_drain.mode, the failures of its
// outstanding handoffs, and the forced removal of either kind of worker.

// ownWork reports whether a worker has work of its own (docs/model.md#drain-and-removal): requests, a pass, own transfers.
func (w *worker) ownWork() bool {
	return w.nReq > 0 || w.busy || w.ownTransfers > 0
}

// removePDIfDue is step 5 for a draining worker of a pool: it removes the worker when its
// pool's rule allows it (failing a prefill worker's outstanding handoffs first in fixed and skip
// modes), or force-removes it at its grace deadline. It reports whether w was removed.
func (e *engine) removePDIfDue(w *worker) bool {
	if w.role == roleDecode {
		switch {
		case w.removable():
			e.remove(w)
		case w.hasGrace && e.now >= w.graceAt:
			e.forceRemoveDecode(w)
		default:
			return false
		}
		return true
	}
	pd := e.pd
	free := !w.ownWork()
	switch {
	case free && pd.mode == DrainWait && w.ph.n == 0:
		e.remove(w)
	case free && pd.mode == DrainSkip:
		e.failOutstanding(w, causeSourceSkipped)
		e.remove(w)
	case pd.mode == DrainFixed && w.hasGrace && e.now >= w.graceAt && w.graceAt < addNS(w.markedAt, pd.fixedNS):
		e.forceRemovePrefill(w)
	case free && pd.mode == DrainFixed && e.now >= addNS(w.markedAt, pd.fixedNS):
		e.failOutstanding(w, causeSourceRemoved)
		e.remove(w)
	case w.hasGrace && e.now >= w.graceAt:
		e.forceRemovePrefill(w)
	default:
		return false
	}
	return true
}

// failOutstanding fails a prefill worker's handoffs not landed, in the order they were made.
func (e *engine) failOutstanding(w *worker, cause int) {
	for _, h := range sortedByMade(w.ph.open) {
		if !h.ended {
			e.failHandoff(h, cause)
		}
	}
	w.ph.open = w.ph.open[:0]
}

// markedPD records a pool worker's marking: its gauges, its held-block state, and the fixed
// deadline the run must visit.
func (e *engine) markedPD(w *worker) {
	pd := e.pd
	pd.active[w.role]--
	pd.draining[w.role]++
	if w.role == rolePrefill {
		w.ph.setDraining(e.now, true)
		if pd.mode == DrainFixed {
			pd.timers.push(event{t: addNS(e.now, pd.fixedNS), seq: int64(w.id), kind: evFixed})
		}
	}
}

// removedPD records a pool worker's removal.
func (e *engine) removedPD(w *worker) {
	e.pd.draining[w.role]--
	if w.ph != nil {
		w.ph.setDraining(e.now, false)
	}
}

// forceRemovePrefill removes a draining prefill worker at its grace deadline: its pass is
// discarded, its own transfers cancelled, its handoffs not landed fail with forced (in the order
// made), then its requests are killed or migrated among the active prefill workers.
func (e *engine) forceRemovePrefill(w *worker) {
	e.failOutstanding(w, causeForced)
	e.forceRemove(w)
}

// forceRemoveDecode removes a draining decode worker at its grace deadline: its pass is
// discarded; in input order, a request with an outstanding handoff is re-routed to another
// decode worker keeping its hold (a migration), or its handoff fails with decode_removed; any
// other request is migrated through a prefill worker, or killed.
func (e *engine) forceRemoveDecode(w *worker) {
	e.settle(w, e.now)
	w.stretchLeft = 0
	w.forced = true
	if w.ownWork() {
		e.touch(w)
	}
	victims := forceRemovalVictims(w)
	w.busy = false
	e.passVer[w.slot]++
	for _, r := range w.batch {
		r.passTokens, r.passEmit = 0, false
	}
	w.batch = nil
	limit := e.s.Router.MigrationLimit
	var migrate []*request
	for _, r := range victims {
		if h := r.ho; r.holding() {
			to := e.routeDecode()
			if r.migrations >= limit || to == nil {
				e.failHandoff(h, causeDecodeRemoved)
				continue
			}
			// Re-routed with its hold: its pull, if started, is aborted; it waits again.
			e.abortHandoffPull(h)
			if r.queued {
				if h.started {
					w.held.remove(r)
				} else {
					w.fresh.remove(r)
				}
			}
			releaseBlocks(w, r.blocks, e.now)
			r.blocks = nil
			h.started = false
			h.wait = -1 // an aborted pull is no admission: the wait runs on
			w.nReq--
			r.migrations++
			e.migratedN++
			e.inst.migrated++
			if h.expire >= 0 && h.expire <= e.now {
				e.pd.expireNow = append(e.pd.expireNow, h)
			}
			e.sendToDecode(r, h, to)
			continue
		}
		if r.migrations < limit && e.activePrefill() {
			migrate = append(migrate, r)
			continue
		}
		e.kill(w, r)
	}
	for _, r := range e.pd.interrupts {
		e.interrupt(r)
	}
	e.pd.interrupts = e.pd.interrupts[:0]
	w.running = nil
	w.pre, w.fresh, w.held = queue{}, queue{}, queue{}
	w.loading = 0
	e.remove(w)
	for _, r := range migrate {
		e.migrate(w, r)
	}
}
