package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// scaler is the autoscaler inside the engine (docs/model.md#autoscaler, #model-3): the samples, the
// Kubernetes controller of package podautoscaler that decides, and the workers it started that
// are still starting. The engine turns workers into pods and carries out each change.
type scaler struct {
	cfg        *Autoscaler
	ctl        *podautoscaler.Controller
	intervalNS int64
	delayNS    int64
	startupNS  int64
	pendingNS  int64
	k          int64 // the next decision is the k-th, at k × intervalNS

	sampled bool // the sample of decision k has been taken
	smp     workerSample

	offered *offeredRate // the metric offered_rate; nil with another metric

	starting []*worker // started and not yet active nor cancelled, in start order
	stopped  bool
	role     uint8 // the pool it scales (model 5); roleAggregated for the fleet
	rows     []Decision
	counts   AutoscalerSummary
}

// workerSample is what one walk over the active workers at a sampling instant gathers, enough
// for every metric and source: the active workers, and the requests and used blocks on them
// (sums and maxima; kvMilli sums the per-worker milli-unit samples).
type workerSample struct {
	n                   int
	reqs, maxReqs       int64
	used, maxUsed       int64
	kvMilli             int64
	held, maxHeld       int64 // handoffs_held (model 5)
	waiting, running    int64
	maxWait, maxRunning int64
	offered             int64 // offered_rate, in milli-units
}

func newScaler(a *Autoscaler) *scaler {
	return &scaler{cfg: a, ctl: podautoscaler.New(a.ControllerSettings()), intervalNS: msToNS(a.IntervalMS),
		delayNS: msToNS(a.MetricDelayMS), startupNS: msToNS(a.StartupMS), pendingNS: msToNS(a.PendingMS), k: 1}
}

// ControllerSettings turns the scenario's fields into the controller's (docs/model.md#autoscaler): the
// behavior with Kubernetes' defaults filled, the model-3 shorthand translated, or none (the
// legacy path).
func (a *Autoscaler) ControllerSettings() podautoscaler.Settings {
	st := podautoscaler.Settings{
		TargetMilli:       int64(math.Round(a.Target * 1000)),
		Tolerance:         a.Tolerance,
		DownscaleWindowNS: msToNS(a.DownscaleWindowMS),
		MinReplicas:       a.MinWorkers,
		MaxReplicas:       a.MaxWorkers,
	}
	if a.Source == SourceExternal {
		st.Source = podautoscaler.SourceExternal
	}
	switch {
	case a.Behavior != nil:
		st.Behavior = &podautoscaler.Behavior{
			Up:   a.Behavior.ScaleUp.rules(0, podautoscaler.DefaultUpPolicies(), a.Tolerance),
			Down: a.Behavior.ScaleDown.rules(st.DownscaleWindowNS, podautoscaler.DefaultDownPolicies(), a.Tolerance),
		}
	case a.UsesShorthand():
		period := msToNS(a.IntervalMS)
		up := podautoscaler.Rules{Tolerance: a.Tolerance, Policies: []podautoscaler.Policy{{Type: podautoscaler.PolicyPods, Value: a.MaxWorkers, PeriodNS: period}}}
		down := podautoscaler.Rules{Tolerance: a.Tolerance, WindowNS: st.DownscaleWindowNS,
			Policies: []podautoscaler.Policy{{Type: podautoscaler.PolicyPercent, Value: 100, PeriodNS: period}}}
		if a.ScaleUpWindowMS != nil {
			up.WindowNS = msToNS(*a.ScaleUpWindowMS)
		}
		if a.ScaleDownWindowMS != nil {
			down.WindowNS = msToNS(*a.ScaleDownWindowMS)
		}
		if k := a.MaxAddPerTick.Ptr(); k != nil {
			up.Policies[0].Value = *k
		}
		if k := a.MaxRemovePerTick.Ptr(); k != nil {
			down.Policies[0] = podautoscaler.Policy{Type: podautoscaler.PolicyPods, Value: *k, PeriodNS: period}
		}
		st.Behavior = &podautoscaler.Behavior{Up: up, Down: down}
	}
	return st
}

// rules fills one direction's unset fields with Kubernetes' defaults.
func (r *ScalingRules) rules(windowNS int64, policies []podautoscaler.Policy, tolerance float64) podautoscaler.Rules {
	out := podautoscaler.Rules{WindowNS: windowNS, Policies: policies, Tolerance: tolerance}
	if r == nil {
		return out
	}
	if r.WindowMS != nil {
		out.WindowNS = *r.WindowMS * 1_000_000
	}
	switch r.Select {
	case SelectPolicyMin:
		out.Select = podautoscaler.SelectMin
	case SelectPolicyDisabled:
		out.Select = podautoscaler.SelectDisabled
	}
	if len(r.Policies) > 0 {
		out.Policies = make([]podautoscaler.Policy, len(r.Policies))
		for i, p := range r.Policies {
			t := podautoscaler.PolicyPods
			if p.Type == PolicyTypePercent {
				t = podautoscaler.PolicyPercent
			}
			out.Policies[i] = podautoscaler.Policy{Type: t, Value: p.Value, PeriodNS: p.PeriodMS * 1_000_000}
		}
	}
	if r.Tolerance != nil {
		out.Tolerance = *r.Tolerance
	}
	return out
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

// stepActivations follows step 2 (docs/model.md#model-3 event order): starting workers whose startup ends
// become active, by id, with empty caches.
func (e *engine) stepActivations() bool {
	return e.activateDue(e.as)
}

// activateDue makes c's starting workers whose startup ended active, by id.
func (e *engine) activateDue(c *scaler) bool {
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
	if e.pd != nil {
		f := *w.f
		w.g1 = kvcache.NewGPU(f.GPUBlocks, w.slot, e.index, &e.usedBlocks[w.slot])
		e.activatedPD(w)
		if f.HostBlocks > 0 && w.role != roleDecode {
			w.g2 = kvcache.NewHost(f.HostBlocks, w.slot, e.index)
		}
	} else {
		w.g1, w.g2 = e.newCaches(w.slot) // workerslots.go
	}
	w.state = StateActive
	w.activeAt = e.now
	e.startingN--
	e.active++
	if w.role != roleDecode {
		e.insertActive(w)
	}
	e.noteLoad(w) // a routing candidate from now on
}

// stepAutoscaler runs in step 6 after the scale-in actions: the metric sample due at this
// instant, then the decision due at this instant. It reports whether the fleet changed.
func (e *engine) stepAutoscaler() bool {
	c := e.as
	if c == nil || c.stopped {
		return false
	}
	e.sampleDue(c)
	return e.decideDue(c)
}

// sampleDue takes c's sample if it is due.
func (e *engine) sampleDue(c *scaler) {
	if !c.stopped && !c.sampled && c.sampleAt() <= e.now {
		c.sampled = true
		c.smp = e.sample(c)
		e.events++
	}
}

// decideDue makes c's decision if it is due; it reports whether the fleet changed.
func (e *engine) decideDue(c *scaler) bool {
	if c.stopped || !c.sampled || c.decisionAt() > e.now {
		return false
	}
	changed := e.decide(c)
	c.k++
	c.sampled = false
	e.events++
	if changed {
		e.changed()
	}
	return changed
}

// sample walks the active workers once at a sampling instant and gathers what every metric
// needs (docs/model.md#autoscaler "Samples").
func (e *engine) sample(c *scaler) workerSample {
	if e.pd != nil {
		smp := e.samplePool(c.role)
		if c.offered != nil {
			smp.offered = c.offered.sample(c.sampleAt())
		}
		return smp
	}
	smp := workerSample{n: len(e.activeIDs)}
	g := int64(e.s.Fleet.GPUBlocks)
	for _, slot := range e.activeIDs {
		smp.add(e.ws[slot], int64(e.usedBlocks[slot]), g)
	}
	if c.offered != nil {
		smp.offered = c.offered.sample(c.sampleAt())
	}
	return smp
}

// add counts one active worker in the sample: its requests (running and waiting) and its used
// blocks, g being its pool's gpu_blocks.
func (smp *workerSample) add(w *worker, used, g int64) {
	reqs, run := int64(w.nReq), int64(len(w.running))
	smp.reqs += reqs
	smp.maxReqs = max(smp.maxReqs, reqs)
	smp.running += run
	smp.maxRunning = max(smp.maxRunning, run)
	smp.waiting += reqs - run
	smp.maxWait = max(smp.maxWait, reqs-run)
	smp.used += used
	smp.maxUsed = max(smp.maxUsed, used)
	smp.kvMilli += ceilDiv64(1000*used, g)
}

// milli is the metric the controller reads from a sample, in milli-units (docs/model.md#autoscaler): the sum
// of the ready pods' samples for a Pods metric, or the aggregate of the per-worker values
// (exact rationals) for an External one.
func (a *Autoscaler) milli(smp workerSample, gpuBlocks int64) int64 {
	var sum, most int64 // request counts
	switch a.Metric {
	case MetricRequestsWaiting:
		sum, most = smp.waiting, smp.maxWait
	case MetricRequestsRunning:
		sum, most = smp.running, smp.maxRunning
	case MetricHandoffsHeld:
		sum, most = smp.held, smp.maxHeld
	case MetricOfferedRate:
		return smp.offered // one value for the whole target (External only)
	case MetricKVUsage:
		if a.Source != SourceExternal {
			return smp.kvMilli
		}
		switch a.Aggregate {
		case AggregateAvg:
			return ceilDiv64(1000*smp.used, gpuBlocks*int64(max(smp.n, 1)))
		case AggregateMax:
			return ceilDiv64(1000*smp.maxUsed, gpuBlocks)
		}
		return ceilDiv64(1000*smp.used, gpuBlocks)
	default:
		sum, most = smp.reqs, smp.maxReqs
	}
	if a.Source == SourceExternal {
		switch a.Aggregate {
		case AggregateAvg:
			return ceilDiv64(1000*sum, int64(max(smp.n, 1)))
		case AggregateMax:
			return 1000 * most
		}
	}
	return 1000 * sum
}

// decide is one autoscaler decision at e.now: the workers become pods, the controller decides,
// and the engine carries out the change (docs/model.md#autoscaler step 5, #model-3 step 4). It reports whether
// the fleet changed.
func (e *engine) decide(c *scaler) bool {
	a := c.cfg
	active, startingN, gpuBlocks := e.active, e.startingN, int64(e.s.Fleet.GPUBlocks)
	if e.pd != nil {
		active, startingN = e.pd.active[c.role], e.pd.starting[c.role]
		gpuBlocks = int64(e.pd.fleets[c.role].GPUBlocks)
	}
	current := int(active + startingN)
	pending := 0
	for _, w := range c.starting {
		if e.now-w.startedAt < c.pendingNS {
			pending++
		}
	}
	smp := podautoscaler.Sample{
		Ready:   c.smp.n,
		Unready: pending,
		// Starting workers past Pending, and workers that became active since the sample.
		Missing: (int(startingN) - pending) + (int(active) - c.smp.n),
		Milli:   a.milli(c.smp, gpuBlocks),
	}
	d := c.ctl.Decide(e.now, current, smp)
	row := Decision{TMS: nsToMS(e.now), Ready: d.Ready, Unready: d.Unready, Missing: d.Missing,
		Usage: d.Usage, Ratio: d.Ratio, NewRatio: d.NewRatio, Rec: d.Rec, Stab: d.Stab, Up: d.Up,
		Down: d.Down, Limit: d.Limit, Current: current, Desired: d.Desired, Reason: d.Reason,
		Drained: []int{}, Cancelled: []int{}, Reactivated: []int{}, Started: []int{}, Role: roleNames[c.role]}
	c.counts.add(row)

	changed := false
	if d.Desired < current {
		k := current - d.Desired
		for k > 0 && len(c.starting) > 0 {
			w := c.starting[len(c.starting)-1]
			c.starting = c.starting[:len(c.starting)-1]
			e.cancelStart(w)
			row.Cancelled = append(row.Cancelled, int(w.id))
			k--
			changed = true
		}
		if k > 0 {
			for _, w := range e.selectWorkers(k, a.Select, c.role) {
				e.markDraining(w, a.GraceMS)
				row.Drained = append(row.Drained, int(w.id))
				changed = true
			}
		}
	} else if d.Desired > current {
		k := d.Desired - current
		if a.ReuseDraining && k > 0 {
			cands := slices.DeleteFunc(slices.Clone(e.draining), func(w *worker) bool { return w.role != c.role })
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
			w := e.startWorker(c)
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
	if e.pd != nil {
		e.pd.starting[w.role]--
	}
	e.freeSlot(w)
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
	if e.pd != nil {
		e.reactivatedPD(w)
	}
	if w.role != roleDecode {
		e.insertActive(w)
	}
	e.markDirty(w)
}

// startWorker starts a cold worker of c's pool with the next id (in a slot a removed worker
// gave back, if any: workerslots.go); it is starting for startup_ms.
func (e *engine) startWorker(c *scaler) *worker {
	w := &worker{state: StateStarting, startedAt: e.now, activeAt: e.now + c.startupNS, f: &e.s.Fleet, role: c.role}
	if !e.takeSlot(w) {
		return nil
	}
	if e.pd != nil {
		w.f = &e.pd.fleets[c.role]
		e.pd.starting[c.role]++
		if c.role == rolePrefill {
			w.ph = &prefillHolds{refs: make([]int32, w.f.GPUBlocks), tLast: e.now}
		}
	}
	e.startingN++
	c.starting = append(c.starting, w)
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

// FleetOutsideBounds is the warning for a scenario whose fleet.workers lies outside its
// autoscaler's [min_workers, max_workers] ("" when it does not, or has no autoscaler): the run
// starts there and the first decision moves it (above_max / below_min), which is rarely the
// night that was meant.
func FleetOutsideBounds(s *Scenario) string {
	a := s.Autoscaler
	if a == nil || (s.Fleet.Workers >= a.MinWorkers && s.Fleet.Workers <= a.MaxWorkers) {
		return ""
	}
	to, reason := a.MaxWorkers, "above max_workers"
	if s.Fleet.Workers < a.MinWorkers {
		to, reason = a.MinWorkers, "below min_workers"
	}
	return fmt.Sprintf("fleet.workers %d lies outside the autoscaler's bounds [%d, %d]: the night starts with %d workers and the first decision moves the fleet to %d (%s); set fleet.workers to the replicas you run at the start",
		s.Fleet.Workers, a.MinWorkers, a.MaxWorkers, s.Fleet.Workers, to, reason)
}
