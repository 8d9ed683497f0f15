package sim

import (
	"slices"
	"sort"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// removable is the removal rule of docs/model.md#scale-in: no requests, no pass, no own transfer in flight
// and no source pins held by pulls from it.
func (w *worker) removable() bool {
	return w.nReq == 0 && !w.busy && w.ownTransfers == 0 && len(w.outPulls) == 0
}

// stepRemovals is step 5: draining workers that meet the rule are removed; otherwise a worker
// whose grace deadline has come is force-removed.
func (e *engine) stepRemovals() bool {
	changed := false
	for i := 0; i < len(e.draining); {
		w := e.draining[i]
		switch {
		case w.removable():
			e.remove(w)
		case w.hasGrace && e.now >= w.graceAt:
			e.forceRemove(w)
		default:
			i++
			continue
		}
		e.draining = append(e.draining[:i], e.draining[i+1:]...)
		changed = true
	}
	if changed {
		e.changed()
	}
	return changed
}

// remove takes a draining worker that meets the removal rule out of the fleet (docs/model.md#scale-in).
func (e *engine) remove(w *worker) {
	w.state = StateRemoved
	w.removedAt = e.now
	e.drainingN--
	e.pendPrefill[w.slot] = 0
	e.freeSlot(w) // clears its caches (workerslots.go)
}

// forceRemove takes a draining worker out of the fleet at its grace deadline: it kills its
// requests, aborts pulls from and into it, cancels its transfers and discards its pass (
// docs/model.md#scale-in, #precise-rules), then removes it.
func (e *engine) forceRemove(w *worker) {
	e.settle(w, e.now) // the tokens its stretch emitted so far count
	w.stretchLeft = 0
	w.forced = true
	if w.nReq > 0 || w.busy || w.ownTransfers > 0 {
		e.touch(w)
	}
	// Pulls from it: the targets carry on without those blocks.
	for _, p := range append([]*pull(nil), w.outPulls...) {
		e.abortPull(p, true)
	}
	w.moving = nil
	for _, tr := range w.transfers {
		tr.cancelled = true
	}
	var migrate []*request
	for _, r := range forceRemovalVictims(w) {
		if r.pull != nil {
			e.abortPull(r.pull, false)
		}
		if r.migrations < e.s.Router.MigrationLimit && e.active > 0 {
			migrate = append(migrate, r)
			continue
		}
		e.kill(w, r)
	}
	w.transfers = nil
	w.ownTransfers = 0
	w.busy = false
	e.passVer[w.slot]++ // discard the pass in flight
	w.batch = nil
	w.running = nil
	w.pre, w.fresh = queue{}, queue{}
	w.loading = 0
	e.remove(w)
	for _, r := range migrate {
		e.migrate(w, r)
	}
}

// forceRemovalVictims lists the requests a forced removal of w kills, in arrival order: waiting,
// running, and loading through its H2D transfers.
func forceRemovalVictims(w *worker) []*request {
	var victims []*request
	for q := w.pre.head; q != nil; q = q.next {
		victims = append(victims, q)
	}
	for q := w.fresh.head; q != nil; q = q.next {
		victims = append(victims, q)
	}
	victims = append(victims, w.running...)
	for _, tr := range w.transfers {
		if tr.kind == trH2D {
			victims = append(victims, tr.r)
		}
	}
	// Input order (docs/model.md#model-3: a removed worker's requests are migrated in input order): the
	// position in the scenario for scripted requests, the order of arrival otherwise.
	sort.Slice(victims, func(i, j int) bool { return victims[i].order < victims[j].order })
	return victims
}

func (e *engine) kill(w *worker, r *request) {
	if r.firstToken < 0 {
		e.pendPrefill[w.slot] -= int64(r.pending)
	}
	e.setState(r, rsKilled)
	r.done = e.now
	w.nReq--
	w.killed++
	e.killedN++
	if e.slo != nil {
		e.slo.killedRequest(r)
	}
	e.src.ended(&r.arrival, e.now, false)
	e.release(r)
}

// stepScaleIn is step 6: actions at this instant in scenario order, then removal checks.
func (e *engine) stepScaleIn() bool {
	changed := false
	for e.nextAct < len(e.actions) {
		i := e.actions[e.nextAct]
		a := e.s.ScaleIn[i]
		if msToNS(a.AtMS) > e.now {
			break
		}
		e.nextAct++
		e.events++
		row := &e.actRows[i]
		var chosen []*worker
		if len(a.Workers) > 0 {
			ids := append([]int(nil), a.Workers...)
			sort.Ints(ids)
			for _, id := range ids {
				w := e.byID(id)
				if w == nil || w.state != StateActive {
					row.Skipped = append(row.Skipped, id)
					continue
				}
				chosen = append(chosen, w)
			}
		} else {
			chosen = e.selectWorkers(a.Count, a.Select)
		}
		for _, w := range chosen {
			e.markDraining(w, a.GraceMS)
			row.Drained = append(row.Drained, int(w.id))
		}
		sort.Ints(row.Drained)
		if len(chosen) > 0 {
			changed = true
		}
	}
	if e.as != nil && e.stepAutoscaler() {
		changed = true
	}
	if changed {
		e.changed()
		e.stepRemovals()
	}
	return changed
}

// selectWorkers picks count active workers by policy, ties to the highest id; at least one
// worker always stays active.
func (e *engine) selectWorkers(count int, policy string) []*worker {
	var act []*worker
	for _, w := range e.ws {
		if w.state == StateActive {
			act = append(act, w)
		}
	}
	score := func(w *worker) int {
		switch policy {
		case SelectLeastLoaded:
			return w.nReq
		case SelectLeastCached:
			n := w.g1.Keyed()
			if w.g2 != nil {
				n += w.g2.ResidentCount()
			}
			return n
		}
		return 0
	}
	sort.SliceStable(act, func(i, j int) bool {
		si, sj := score(act[i]), score(act[j])
		if si != sj {
			return si < sj
		}
		return act[i].id > act[j].id
	})
	count = min(count, len(act)-1)
	if count < 0 {
		count = 0
	}
	return act[:count]
}

func (e *engine) markDraining(w *worker, graceMS *float64) {
	w.state = StateDraining
	w.markedAt = e.now
	w.everMarked = true
	e.activeIDs = slices.DeleteFunc(e.activeIDs, func(slot int32) bool { return slot == w.slot })
	e.noteLoad(w) // no longer a candidate
	kvcache.Detach(w.g1, w.g2)
	e.active--
	e.drainingN++
	if graceMS != nil {
		w.hasGrace = true
		w.graceAt = addNS(e.now, msToNS(*graceMS))
		w.graceVer++
		e.graces.push(event{t: w.graceAt, seq: int64(w.id), kind: evGrace, ver: w.graceVer, w: w})
	}
	i := sort.Search(len(e.draining), func(i int) bool { return e.draining[i].id > w.id })
	e.draining = append(e.draining, nil)
	copy(e.draining[i+1:], e.draining[i:])
	e.draining[i] = w
}
