package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// scaler is the autoscaler of SPEC §3.15 inside the engine: samples, decisions, the
// stabilisation windows, and the workers it started that are still starting.
type scaler struct {
	cfg        *Autoscaler
	intervalNS int64
	delayNS    int64
	startupNS  int64
	upNS       int64 // scale_up_window_ms
	downNS     int64 // scale_down_window_ms
	k          int64 // the next decision is the k-th, at k × intervalNS

	sampled    bool // the sample of decision k has been taken
	sampleN    int
	sampleLoad float64

	// Recommendations kept with their instants, as two monotonic queues: up holds the
	// candidates for the minimum over the scale-up window (values increasing), down those for
	// the maximum over the scale-down window (values decreasing).
	up, down []recEntry

	starting []*worker // started and not yet active nor cancelled, in start order
	stopped  bool
	rows     []Decision
}

type recEntry struct {
	t int64
	v int
}

func newScaler(a *Autoscaler, fleetWorkers int) *scaler {
	c := &scaler{cfg: a, intervalNS: msToNS(a.IntervalMS), delayNS: msToNS(a.MetricDelayMS),
		startupNS: msToNS(a.StartupMS), upNS: msToNS(a.ScaleUpWindowMS), downNS: msToNS(a.ScaleDownWindowMS), k: 1}
	// The history starts with (0, fleet.workers).
	c.up = []recEntry{{0, fleetWorkers}}
	c.down = []recEntry{{0, fleetWorkers}}
	return c
}

func (c *scaler) decisionAt() int64 { return c.k * c.intervalNS }
func (c *scaler) sampleAt() int64   { return c.k*c.intervalNS - c.delayNS }

// next is the earliest instant the autoscaler needs: a sample, a decision or a startup end.
func (c *scaler) next() (int64, bool) {
	if c.stopped {
		return 0, false
	}
	t := c.decisionAt()
	if !c.sampled {
		t = c.sampleAt()
	}
	if len(c.starting) > 0 {
		t = min(t, c.starting[0].activeAt)
	}
	return t, true
}

// record adds a recommendation at t and returns the minimum over the scale-up window and the
// maximum over the scale-down window, both including it.
func (c *scaler) record(t int64, v int) (up, down int) {
	for len(c.up) > 0 && c.up[len(c.up)-1].v >= v {
		c.up = c.up[:len(c.up)-1]
	}
	c.up = append(c.up, recEntry{t, v})
	for c.up[0].t < t-c.upNS {
		c.up = c.up[1:]
	}
	for len(c.down) > 0 && c.down[len(c.down)-1].v <= v {
		c.down = c.down[:len(c.down)-1]
	}
	c.down = append(c.down, recEntry{t, v})
	for c.down[0].t < t-c.downNS {
		c.down = c.down[1:]
	}
	return c.up[0].v, c.down[0].v
}

// stepActivations follows step 2 (SPEC §3.15 event order): starting workers whose startup ends
// become active, by id, with empty caches.
func (e *engine) stepActivations() bool {
	c := e.as
	if c.stopped || len(c.starting) == 0 || c.starting[0].activeAt > e.now {
		return false
	}
	n := 0
	for n < len(c.starting) && c.starting[n].activeAt <= e.now {
		n++
	}
	due := c.starting[:n] // in start order, which is id order
	for _, w := range due {
		e.activate(w)
	}
	c.starting = append(c.starting[:0], c.starting[n:]...)
	e.changed()
	return true
}

// activate makes a starting worker active with empty caches.
func (e *engine) activate(w *worker) {
	f := e.s.Fleet
	w.g1 = kvcache.NewGPU(f.GPUBlocks, w.id, e.index, &e.usedBlocks[w.id])
	if f.HostBlocks > 0 {
		w.g2 = kvcache.NewHost(f.HostBlocks, w.id, e.index)
	}
	w.state = StateActive
	w.activeAt = e.now
	e.startingN--
	e.active++
	e.insertActive(w.id)
	e.noteLoad(w) // a routing candidate from now on
}

func (e *engine) insertActive(id int32) {
	i, _ := slices.BinarySearch(e.activeIDs, id)
	e.activeIDs = slices.Insert(e.activeIDs, i, id)
}

// stepAutoscaler runs in step 6 after the scale-in actions: the metric sample due at this
// instant, then the decision due at this instant. It reports whether the fleet changed.
func (e *engine) stepAutoscaler() bool {
	c := e.as
	if c == nil || c.stopped {
		return false
	}
	if !c.sampled && c.sampleAt() <= e.now {
		c.sampled = true
		c.sampleN, c.sampleLoad = e.sample()
		e.events++
	}
	if !c.sampled || c.decisionAt() > e.now {
		return false
	}
	changed := e.decide()
	c.k++
	c.sampled = false
	e.events++
	if changed {
		e.changed()
	}
	return changed
}

// sample is step 1 of a decision: the active workers and their total load. It walks the active
// workers once per sample (not per request).
func (e *engine) sample() (n int, load float64) {
	n = len(e.activeIDs)
	if e.as.cfg.Metric == MetricKVUsage {
		var used int64
		for _, id := range e.activeIDs {
			used += int64(e.usedBlocks[id])
		}
		return n, float64(used) / float64(e.s.Fleet.GPUBlocks)
	}
	var reqs int64
	for _, id := range e.activeIDs {
		reqs += int64(e.ws[id].nReq)
	}
	return n, float64(reqs)
}

// decide is one autoscaler decision at e.now (SPEC §3.15 steps 2–5). It reports whether the
// fleet changed.
func (e *engine) decide() bool {
	c := e.as
	a := c.cfg
	n, load := c.sampleN, c.sampleLoad
	current := int(e.active + e.startingN)
	row := Decision{TMS: nsToMS(e.now), N: n, Load: load, Current: current,
		Drained: []int{}, Cancelled: []int{}, Reactivated: []int{}, Started: []int{}}

	ratio := math.Inf(1)
	if n > 0 {
		ratio = (load / float64(n)) / a.Target
	}
	within := math.Abs(ratio-1) <= a.Tolerance
	var rec int
	if within {
		rec = current
	} else {
		rec = int(math.Min(math.Ceil(load/a.Target), float64(MaxWorkers+1)))
	}
	clamped := min(max(rec, a.MinWorkers), a.MaxWorkers)
	atBound := clamped != rec
	rec = clamped
	row.Recommendation = rec

	up, down := c.record(e.now, rec)
	desired := current
	switch {
	case up > current:
		desired = up
	case down < current:
		desired = down
	}
	row.Desired = desired

	switch {
	case desired > current:
		row.Reason = ReasonScaleUp
	case desired < current:
		row.Reason = ReasonScaleDown
	case within:
		row.Reason = ReasonWithinTolerance
	case atBound:
		row.Reason = ReasonAtBound
	case rec != current:
		row.Reason = ReasonStabilized
	default:
		row.Reason = ReasonNoChange
	}

	changed := false
	if desired < current {
		k := current - desired
		if a.MaxRemovePerTick != nil {
			k = min(k, *a.MaxRemovePerTick)
		}
		for k > 0 && len(c.starting) > 0 {
			w := c.starting[len(c.starting)-1]
			c.starting = c.starting[:len(c.starting)-1]
			e.cancelStart(w)
			row.Cancelled = append(row.Cancelled, int(w.id))
			k--
			changed = true
		}
		if k > 0 {
			for _, w := range e.selectWorkers(k, a.Select) {
				e.markDraining(w, a.GraceMS)
				row.Drained = append(row.Drained, int(w.id))
				changed = true
			}
		}
	} else if desired > current {
		k := desired - current
		if a.MaxAddPerTick != nil {
			k = min(k, *a.MaxAddPerTick)
		}
		if a.ReuseDraining && k > 0 {
			cands := slices.Clone(e.draining)
			// The most recently marked first, ties to the lowest id.
			sort.SliceStable(cands, func(i, j int) bool {
				if cands[i].markedAt != cands[j].markedAt {
					return cands[i].markedAt > cands[j].markedAt
				}
				return cands[i].id < cands[j].id
			})
			for _, w := range cands[:min(k, len(cands))] {
				e.reactivate(w)
				row.Reactivated = append(row.Reactivated, int(w.id))
				k--
				changed = true
			}
		}
		for ; k > 0; k-- {
			w := e.startWorker()
			if w == nil {
				break
			}
			row.Started = append(row.Started, int(w.id))
			changed = true
		}
	}
	c.rows = append(c.rows, row)
	return changed
}

// cancelStart removes a starting worker at once; it was never active.
func (e *engine) cancelStart(w *worker) {
	w.state = StateRemoved
	w.removedAt = e.now
	e.startingN--
}

// reactivate makes a draining worker active again (reuse_draining): its grace deadline is
// cancelled, it keeps its caches and requests, and the router may route to it and name it in
// hints again.
func (e *engine) reactivate(w *worker) {
	e.draining = slices.DeleteFunc(e.draining, func(x *worker) bool { return x == w })
	w.state = StateActive
	w.hasGrace = false
	w.graceVer++
	w.reactivations++
	kvcache.Attach(w.g1, w.g2, e.index)
	e.drainingN--
	e.active++
	e.insertActive(w.id)
	e.markDirty(w)
}

// startWorker starts a cold worker with the next id; it is starting for startup_ms.
func (e *engine) startWorker() *worker {
	id := len(e.ws)
	if id >= kvcache.MaxWorkers {
		if e.fail == nil {
			e.fail = fmt.Errorf("%w: the autoscaler started more than %d workers in one run; lengthen its windows or raise its interval", ErrLimit, kvcache.MaxWorkers-e.s.Fleet.Workers)
		}
		return nil
	}
	w := &worker{id: int32(id), state: StateStarting, startedAt: e.now, activeAt: e.now + e.as.startupNS}
	e.ws = append(e.ws, w)
	e.pendPrefill = append(e.pendPrefill, 0)
	e.passVer = append(e.passVer, 0)
	if len(e.usedBlocks) == cap(e.usedBlocks) {
		// The caches count their used blocks in this array: move every count to the new one.
		grown := make([]int32, len(e.usedBlocks), 2*cap(e.usedBlocks)+8)
		copy(grown, e.usedBlocks)
		for _, x := range e.ws[:id] {
			if x.g1 != nil {
				x.g1.Rebind(&grown[x.id])
			}
		}
		e.usedBlocks = grown
	}
	e.usedBlocks = append(e.usedBlocks, 0)
	e.index.Grow(len(e.ws))
	e.startingN++
	e.as.starting = append(e.as.starting, w)
	e.peakWorkers = max(e.peakWorkers, int(e.active+e.startingN+e.drainingN))
	return w
}

// stopCheck is the end-of-run rule: once an instant has been processed with no arrival still to
// come and no request in the system, no later sample, decision or startup happens.
func (e *engine) stopCheck() {
	if e.as.stopped || e.waitingN+e.running > 0 {
		return
	}
	if _, ok := e.src.peek(); !ok {
		e.as.stopped = true
	}
}
