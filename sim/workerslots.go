package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// Worker ids and slots (issue 35). A worker's id in the report is the next number at its start
// and never reused, so a run may start any number of workers over its life. What the engine
// indexes by is its slot: the per-worker tables (pending prefill, used blocks, pass versions,
// the routing tree, the router's scratch) and the block index, which packs a slot into a
// record (kvcache.MaxWorkers). A removed worker gives its slot back and a later start takes it
// again, so the tables grow with the workers alive at once (active, starting, draining), not
// with the workers ever started.
//
// A slot is given back only by a removed worker: a draining worker left the block index when
// it was marked (kvcache.Detach) and its own tables were cleared at its removal, so no record
// names the slot any more; a cancelled starting worker never had caches. Ties between workers
// ("lowest id", "highest id") compare ids, never slots: the routing tree ranks its leaves by id,
// activeIDs lists slots in id order, and the router compares the ids of the slots it holds.
//
// The removed worker stays in e.ws until its slot is taken; its report row is then kept in gone
// (a few hundred bytes), so the report lists every worker while the engine holds only those
// alive.

// MaxStartedWorkers bounds the workers one run may start: the report has a row for each.
const MaxStartedWorkers = 1_000_000

// workerSlots is the engine's slot bookkeeping.
type workerSlots struct {
	next   int32   // the next id
	free   []int32 // slots given back, taken last in first out
	slotOf []int32 // by id: the worker's slot (the slot may since hold a later worker)
	gone   []WorkerRow
	goneNS int64 // the worker-nanoseconds of the rows in gone
	// retired caches of removed workers whose slot was taken, for the next activations
	spareG1 []*kvcache.GPU
	spareG2 []*kvcache.Host
}

// initial numbers the initial fleet: worker i in slot i.
func (g *workerSlots) initial(workers int) {
	g.next = int32(workers)
	g.slotOf = make([]int32, workers)
	for i := range g.slotOf {
		g.slotOf[i] = int32(i)
	}
}

// byID returns the worker with report id id, nil if there is none or it was removed and its
// slot has been taken by a later worker.
func (e *engine) byID(id int) *worker {
	if id < 0 || id >= len(e.gen.slotOf) {
		return nil
	}
	if w := e.ws[e.gen.slotOf[id]]; int(w.id) == id {
		return w
	}
	return nil
}

// lowerID reports whether the worker in slot a has a lower id than the one in slot b.
func (e *engine) lowerID(a, b int32) bool { return e.ws[a].id < e.ws[b].id }

// insertActive lists an active worker's slot in activeIDs, in id order.
func (e *engine) insertActive(w *worker) {
	i, _ := slices.BinarySearchFunc(e.activeIDs, w.id, func(slot, id int32) int { return int(e.ws[slot].id - id) })
	e.activeIDs = slices.Insert(e.activeIDs, i, w.slot)
}

// freeSlot clears a removed worker's caches and gives its slot back. With an autoscaler a later
// worker takes the slot, and its caches the arrays of these (Retire, newCaches): a day that
// starts hundreds of workers then allocates caches for the workers alive at once only.
func (e *engine) freeSlot(w *worker) {
	if w.g1 != nil {
		if e.as != nil {
			w.g1.Retire(e.index)
			if w.g2 != nil {
				w.g2.Retire()
			}
		} else {
			w.g1.Clear()
			if w.g2 != nil {
				w.g2.Clear()
			}
		}
	}
	e.gen.free = append(e.gen.free, w.slot)
}

// newCaches makes the empty caches of a worker becoming active in slot, from retired ones if
// any are spare.
func (e *engine) newCaches(slot int32) (*kvcache.GPU, *kvcache.Host) {
	f := e.s.Fleet
	g := &e.gen
	var g1 *kvcache.GPU
	if n := len(g.spareG1); n > 0 {
		g1, g.spareG1 = g.spareG1[n-1], g.spareG1[:n-1]
		g1.Reuse(slot, e.index, &e.usedBlocks[slot])
	} else {
		g1 = kvcache.NewGPU(f.GPUBlocks, slot, e.index, &e.usedBlocks[slot])
	}
	if f.HostBlocks == 0 {
		return g1, nil
	}
	var g2 *kvcache.Host
	if n := len(g.spareG2); n > 0 {
		g2, g.spareG2 = g.spareG2[n-1], g.spareG2[:n-1]
		g2.Reuse(slot, e.index)
	} else {
		g2 = kvcache.NewHost(f.HostBlocks, slot, e.index)
	}
	return g1, g2
}

// takeSlot gives a new worker its id and a slot: one given back (the removed worker there
// leaves its row in gone), or a new one, growing the per-worker tables. It fails the run when
// the workers alive at once or the workers started exceed what the tables and the report hold.
func (e *engine) takeSlot(w *worker) bool {
	g := &e.gen
	switch {
	case int(g.next) >= MaxStartedWorkers:
		e.failOnce(fmt.Errorf("%w: the autoscaler started %d workers in one run, and the report lists each one; lengthen its windows (scale_down window_ms), raise its interval_ms or its tolerance so it changes the fleet less often", ErrLimit, g.next-int32(e.s.Fleet.Workers)))
		return false
	case len(g.free) == 0 && len(e.ws) >= kvcache.MaxWorkers:
		e.failOnce(fmt.Errorf("%w: more than %d workers alive at once (active, starting and draining): lower autoscaler.max_workers, or a shorter grace_ms so draining workers leave sooner", ErrLimit, kvcache.MaxWorkers))
		return false
	}
	w.id = g.next
	g.next++
	if n := len(g.free); n > 0 {
		w.slot = g.free[n-1]
		g.free = g.free[:n-1]
		old := e.ws[w.slot]
		if old.state != StateRemoved || (old.g1 != nil && !old.g1.Detached()) {
			e.failOnce(fmt.Errorf("sim: internal error: slot %d given back by worker %d, %s", w.slot, old.id, old.state))
			return false
		}
		row, end := workerRow(old, 0)
		if e.pd != nil {
			e.goneRowPD(&row, old, end)
		}
		g.gone = append(g.gone, row)
		g.goneNS += end - max(old.startedAt, 0)
		if old.g1 != nil && e.as != nil { // retired: a later activation takes the arrays
			g.spareG1 = append(g.spareG1, old.g1)
			if old.g2 != nil {
				g.spareG2 = append(g.spareG2, old.g2)
			}
		}
		e.ws[w.slot] = w
		if t := e.loads.tree; t != nil {
			// The slot's leaf may still hold the removed worker's key (its re-keying is pending,
			// and refreshLoads skips it now that the slot is taken): not a candidate until active.
			t.set(w.slot, w.id, math.Inf(1))
		}
	} else {
		e.growSlots(w)
	}
	g.slotOf = append(g.slotOf, w.slot)
	return true
}

func (e *engine) failOnce(err error) {
	if e.fail == nil {
		e.fail = err
	}
}

// growSlots puts w in a new slot at the end of every per-worker table.
func (e *engine) growSlots(w *worker) {
	slot := len(e.ws)
	w.slot = int32(slot)
	e.ws = append(e.ws, w)
	e.pendPrefill = append(e.pendPrefill, 0)
	e.passVer = append(e.passVer, 0)
	if len(e.usedBlocks) == cap(e.usedBlocks) {
		// The caches count their used blocks in this array: move every count to the new one.
		grown := make([]int32, len(e.usedBlocks), 2*cap(e.usedBlocks)+8)
		copy(grown, e.usedBlocks)
		for _, x := range e.ws[:slot] {
			if x.g1 != nil {
				x.g1.Rebind(&grown[x.slot])
			}
		}
		e.usedBlocks = grown
	}
	e.usedBlocks = append(e.usedBlocks, 0)
	e.index.Grow(len(e.ws))
}

// nextRoundRobin is round_robin's choice: the first active worker at or after the id following
// the last one chosen, in id order, wrapping around.
func (e *engine) nextRoundRobin() *worker {
	if len(e.activeIDs) == 0 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(e.activeIDs, int32(e.rr), func(slot, id int32) int { return int(e.ws[slot].id - id) })
	if i == len(e.activeIDs) {
		i = 0
	}
	w := e.ws[e.activeIDs[i]]
	e.rr = int(w.id) + 1
	return w
}

// workerRows appends a row per worker, by id, to rows: those of removed workers whose slot was
// taken again, kept since, and those of the workers in the slots. It returns the rows and the
// worker-nanoseconds of them all.
func (e *engine) workerRows(rows []WorkerRow, duration int64) ([]WorkerRow, int64) {
	ns := e.gen.goneNS
	rows = append(rows, e.gen.gone...)
	for _, w := range e.ws {
		row, end := workerRow(w, duration)
		ns += end - max(w.startedAt, 0)
		rows = append(rows, row)
	}
	if len(e.gen.gone) > 0 {
		slices.SortFunc(rows, func(a, b WorkerRow) int { return a.ID - b.ID })
	}
	return rows, ns
}
