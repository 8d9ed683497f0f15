package sim

import (
	"slices"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// The prefill and decode pools (docs/model.md#model-5): their workers, routing a handoff to a
// decode worker, and the scan of a decode worker's queue.

// Worker roles inside the engine.
const (
	roleAggregated uint8 = iota
	rolePrefill
	roleDecode
)

var roleNames = [...]string{"", RolePrefill, RoleDecode}

// Handoff failure causes, indexes into pdState.failed (causeNames order).
const (
	causeLeaseExpired = iota
	causeSourceRemoved
	causeSourceSkipped
	causeForced
	causeDecodeRemoved
)

var causeNames = [...]string{CauseLeaseExpired, CauseSourceRemoved, CauseSourceSkipped, CauseForced, CauseDecodeRemoved}

// pdState is the engine's model-5 state; nil for an aggregated scenario.
type pdState struct {
	d         *Disaggregation
	fleets    [3]Fleet // by role: the pools' workers as fleets (roleAggregated unused)
	ttlNS     int64    // fixed lease; -1 with heartbeat
	fixedNS   int64    // prefill_drain.fixed_ms
	recompute bool
	mode      string // prefill_drain.mode

	leased     map[int64]*handoff // fixed lease: the open handoffs by seq, for their expiry events
	timers     eventHeap          // lease expiries (evLease) and fixed drain deadlines (evFixed)
	expireNow  []*handoff         // re-routed holds whose lease ended by the instant of the re-route
	bufDue     []*handoff
	interrupts []*worker // decode workers sent a handoff in this step 2

	// gauges by role
	active, draining, starting [3]int64

	handoffs, landed, recomputed, failedN int64
	failed                                [len(causeNames)]int64
	transfer                              []int64 // landed handoffs' admission → landing, ns

	scalers []*scaler // one per pool with an autoscaler, prefill first (pool_autoscalers.go)

	// the sums of removed workers whose slot a later worker took (goneRowPD)
	goneHeld, goneHeldDrain int64
	goneNS                  [3]int64
}

func newPDState(s *Scenario) *pdState {
	d := s.Disaggregation
	pd := &pdState{d: d, ttlNS: -1, fixedNS: msToNS(d.PrefillDrain.FixedMS),
		recompute: d.LoadFailurePolicy == LoadFailureRecompute, mode: d.PrefillDrain.Mode}
	pd.fleets[rolePrefill] = d.Prefill.Fleet(s.Fleet)
	pd.fleets[roleDecode] = d.Decode.Fleet(s.Fleet)
	if d.Lease.Mode == LeaseFixed {
		pd.ttlNS = msToNS(d.Lease.TTLMS)
	}
	return pd
}

// newPoolWorker makes worker id of a role, active.
func (e *engine) newPoolWorker(id int32, role uint8) *worker {
	f := &e.pd.fleets[role]
	w := &worker{id: id, slot: id, state: StateActive, startedAt: -1, activeAt: -1, role: role, f: f,
		g1: kvcache.NewGPU(f.GPUBlocks, id, e.index, &e.usedBlocks[id])}
	if role == rolePrefill {
		if f.HostBlocks > 0 {
			w.g2 = kvcache.NewHost(f.HostBlocks, id, e.index)
		}
		w.ph = &prefillHolds{refs: make([]int32, f.GPUBlocks), tLast: e.now}
	}
	return w
}

// routeDecode picks the active decode worker with the most free blocks, ties to the fewest
// requests, then the lowest id; nil when none is active.
func (e *engine) routeDecode() *worker {
	var best *worker
	bestFree := 0
	for _, w := range e.ws {
		if w.role != roleDecode || w.state != StateActive {
			continue
		}
		free := w.f.GPUBlocks - int(e.usedBlocks[w.slot])
		if best == nil || free > bestFree || free == bestFree && (w.nReq < best.nReq || w.nReq == best.nReq && w.id < best.id) {
			best, bestFree = w, free
		}
	}
	return best
}

// endStepPasses interrupts the stretches of the decode workers that got a handoff during step 2
// (after every pass of the instant has ended, so none is ended twice).
func (e *engine) endStepPasses() {
	pd := e.pd
	for _, d := range pd.interrupts {
		e.interrupt(d)
	}
	pd.interrupts = pd.interrupts[:0]
}

// scanDecode scans a decode worker's queue (docs/model.md#model-5 step 4): first the requests
// that hold blocks there (pulling ones are passed over; landed and recomputing ones need a slot),
// then preempted requests, then arrivals (a handoff's first admission starts its pull; another
// request is admitted as on an aggregated worker). It stops at the first request that does not
// fit, and meets requests only while the budget lasts.
func (e *engine) scanDecode(w *worker, batch []*request, budget int) ([]*request, int, bool) {
	bs := e.s.Fleet.BlockSize
	seqs := w.f.MaxNumSeqs
	changed := false
	for r := w.held.head; r != nil && budget > 0; {
		next := r.next
		if r.state != rsWaiting {
			r = next
			continue
		}
		if len(w.running)+w.loading >= seqs {
			return batch, budget, changed
		}
		changed = true
		w.held.remove(r)
		e.runOnDecode(w, r)
		if r.computed >= r.target {
			r.passTokens, r.passEmit = 0, true
			budget--
			batch = append(batch, r)
		} else {
			batch, budget = addChunk(batch, r, budget)
		}
		r = next
	}
	r := w.pre.head
	if r == nil {
		r = w.fresh.head
	}
	for r != nil && budget > 0 {
		next := r.next
		if next == nil && r.preempted {
			next = w.fresh.head
		}
		if r.state != rsWaiting {
			r = next
			continue
		}
		c := ceilDiv(int(r.prompt+r.emitted), bs)
		if len(w.running)+w.loading >= seqs || !w.g1.Fits(c) {
			break
		}
		changed = true
		if r.holding() {
			e.admitHandoff(w, r, c)
			r = next
			continue
		}
		// An ordinary admission: a preempted request, or a handoff that failed before its
		// admission under recompute; it computes its context here.
		if r.preempted {
			w.pre.remove(r)
			r.preempted = false
		} else {
			w.fresh.remove(r)
		}
		if n := ceilDiv(int(r.prompt+r.output), bs); cap(r.blocks) < n {
			r.blocks = make([]int32, 0, n)
		}
		r.blocks = w.g1.Acquire(r.blocks[:0], c)
		r.computed, r.target = 0, r.prompt+r.emitted
		e.runOnDecode(w, r)
		batch, budget = addChunk(batch, r, budget)
		r = next
	}
	return batch, budget, changed
}

// runOnDecode makes a request admitted on decode worker w running (last in admission order).
func (e *engine) runOnDecode(w *worker, r *request) {
	r.admSeq = e.admSeq
	e.admSeq++
	e.setState(r, rsRunning)
	w.running = append(w.running, r)
}

// markHandoffs turns the emissions of a prefill worker's batch into handoffs: the pass that
// completes a request's context emits no token there.
func markHandoffs(batch []*request) {
	for _, r := range batch {
		if r.passEmit {
			r.passEmit, r.passHandoff = false, true
		}
	}
}

// activePrefill reports whether a prefill worker is active.
func (e *engine) activePrefill() bool { return e.pd.active[rolePrefill] > 0 }

// sortedByMade orders handoffs by the order they were made.
func sortedByMade(hs []*handoff) []*handoff {
	out := slices.Clone(hs)
	slices.SortFunc(out, func(a, b *handoff) int { return int(a.seq - b.seq) })
	return out
}

// initPools builds the prefill workers 0 … P−1 and the decode workers P … P+D−1.
func (e *engine) initPools() {
	e.pd = newPDState(e.s)
	d := e.s.Disaggregation
	e.latencyNS = msToNS(d.Transfer.LatencyMS)
	e.pullGBps = d.Transfer.BandwidthGBps
	for i := 0; i < d.Prefill.Workers+d.Decode.Workers; i++ {
		role := rolePrefill
		if i >= d.Prefill.Workers {
			role = roleDecode
		} else {
			e.activeIDs = append(e.activeIDs, int32(i))
		}
		e.ws = append(e.ws, e.newPoolWorker(int32(i), role))
		e.pd.active[role]++
	}
	if pa := e.s.PoolAutoscalers; pa != nil {
		for _, p := range []struct {
			a    *Autoscaler
			role uint8
		}{{pa.Prefill, rolePrefill}, {pa.Decode, roleDecode}} {
			if p.a != nil {
				c := newScaler(p.a)
				c.role = p.role
				e.pd.scalers = append(e.pd.scalers, c)
			}
		}
	}
}

// failedN counts the requests that ended failed.
func (e *engine) failedN() int64 {
	if e.pd == nil {
		return 0
	}
	return e.pd.failedN
}

// gauges are the pools' time-series gauges: prefill active, draining, starting, then decode's.
func (pd *pdState) gauges() [6]int64 {
	return [6]int64{pd.active[rolePrefill], pd.draining[rolePrefill], pd.starting[rolePrefill],
		pd.active[roleDecode], pd.draining[roleDecode], pd.starting[roleDecode]}
}

// poolRow fills a pool worker's role and held block-seconds in its row, given the instant its
// worker-seconds end, and returns its held and held-while-draining block-nanoseconds and its
// worker-nanoseconds.
func (e *engine) poolRow(row *WorkerRow, w *worker, end int64) (held, heldDrain, ns int64) {
	row.Role = roleNames[w.role]
	ns = end - max(w.startedAt, 0)
	if w.role != rolePrefill {
		row.HeldBlockSeconds, row.HeldBlockSecondsDraining = NullNumber(), NullNumber()
		return 0, 0, ns
	}
	if w.state != StateRemoved {
		w.ph.flush(end)
	}
	row.HeldBlockSeconds = NumberOf(float64(w.ph.ns) / 1e9)
	row.HeldBlockSecondsDraining = NumberOf(float64(w.ph.drainNS) / 1e9)
	return w.ph.ns, w.ph.drainNS, ns
}

// goneRowPD completes the row of a removed pool worker whose slot a later worker takes, and
// keeps its sums for the report.
func (e *engine) goneRowPD(row *WorkerRow, w *worker, end int64) {
	pd := e.pd
	h, hd, n := e.poolRow(row, w, end)
	pd.goneHeld += h
	pd.goneHeldDrain += hd
	pd.goneNS[w.role] += n
}

// report adds model 5's members to a report: summary.requests.failed, summary.disaggregation,
// gpu_hours by pool, the worker rows' role and held block-seconds.
func (e *engine) reportPD(r *Report, duration int64) {
	pd := e.pd
	failed := pd.failedN
	r.Summary.Requests.Failed = &failed
	// The rows of removed workers whose slot a later worker took were filled then (goneRowPD);
	// the rest are found by id (the rows are in id order).
	held, heldDrain, ns := pd.goneHeld, pd.goneHeldDrain, pd.goneNS
	for _, w := range e.ws {
		i, found := slices.BinarySearchFunc(r.Workers, int(w.id), func(row WorkerRow, id int) int { return row.ID - id })
		if !found { // every worker in a slot has a row (workerRows)
			continue
		}
		end := duration
		if w.state == StateRemoved {
			end = w.removedAt
		}
		h, hd, n := e.poolRow(&r.Workers[i], w, end)
		held, heldDrain = held+h, heldDrain+hd
		ns[w.role] += n
	}
	ws := PoolWorkerSeconds{Prefill: float64(ns[rolePrefill]) / 1e9, Decode: float64(ns[roleDecode]) / 1e9}
	r.Summary.GPUHours = float64(float64(ws.Prefill*float64(pd.fleets[rolePrefill].GPUsPerWorker))+
		float64(ws.Decode*float64(pd.fleets[roleDecode].GPUsPerWorker))) / 3600
	r.Summary.Workers.Initial = pd.d.Prefill.Workers + pd.d.Decode.Workers
	e.reportPoolAutoscalers(r)
	r.Summary.Disaggregation = &DisaggregationSummary{
		Handoffs: pd.handoffs, Landed: pd.landed, Recomputed: pd.recomputed,
		Failed: HandoffFailures{LeaseExpired: pd.failed[causeLeaseExpired], SourceRemoved: pd.failed[causeSourceRemoved],
			SourceSkipped: pd.failed[causeSourceSkipped], Forced: pd.failed[causeForced], DecodeRemoved: pd.failed[causeDecodeRemoved]},
		HeldBlockSeconds: float64(held) / 1e9, HeldBlockSecondsDraining: float64(heldDrain) / 1e9,
		TransferMS: distribution(pd.transfer), WorkerSeconds: ws,
	}
}

// requestRowPD adds a request row's model-5 members.
func requestRowPD(row *RequestRow, q *request) {
	row.PrefillWorker, row.HandoffWaitMS, row.TransferMS = NullNumber(), NullNumber(), NullNumber()
	if h := q.ho; h != nil {
		row.PrefillWorker = NumberOf(float64(h.src.id))
		if h.wait >= 0 {
			row.HandoffWaitMS = NumberOf(nsToMS(h.wait))
		}
		if h.transfer >= 0 {
			row.TransferMS = NumberOf(nsToMS(h.transfer))
		}
	}
	if q.state == rsFailed {
		row.Status = StatusFailed
	}
}

// roleOf is the engine's role of a scale-in action's role ("" aggregated).
func roleOf(role string) uint8 {
	switch role {
	case RolePrefill:
		return rolePrefill
	case RoleDecode:
		return roleDecode
	}
	return roleAggregated
}

// allEmitted reports whether every request of a decode-only batch has emitted a token before:
// a landed handoff emits its first token in a pass without prefill, which a stretch must not
// hide (the first token's instant is recorded at the end of its own pass).
func allEmitted(batch []*request) bool {
	for _, r := range batch {
		if r.firstToken < 0 {
			return false
		}
	}
	return true
}
