package sim

import "slices"

// What happens to a prompt's KV between its prefill worker and its decode worker
// (docs/model.md#model-5): the handoff made at the end of the prefill pass, the blocks the
// prefill worker holds for it, its pull (admission on the decode worker, transfer over the
// prefill worker's link, landing), its hold limit (lease) and its failures.

// handoff is one request's prompt KV held on a prefill worker until a decode worker has read it.
type handoff struct {
	seq      int64 // made order
	r        *request
	src, dst *worker
	blocks   []int32 // src's G1 slots the hold references
	made     int64
	expire   int64 // fixed lease: made + ttl; -1 with heartbeat
	started  bool  // admitted on dst: its pull started
	admitted int64 // the admission that started the pull
	p        *pull
	ended    bool
	wait     int64 // made → its decode admission, or its failure before one (ns; -1 until then)
	transfer int64 // admission → landing (ns; -1 unless it landed)
}

// holding reports whether the request has an outstanding handoff (made, neither landed nor
// failed).
func (r *request) holding() bool { return r.ho != nil && !r.ho.ended }

// prefillHolds is a prefill worker's holds and its held block-nanoseconds.
type prefillHolds struct {
	refs     []int32 // per G1 slot: holds referencing it
	h        int64   // H: distinct slots referenced by a hold
	open     []*handoff
	n        int // outstanding holds
	tLast    int64
	ns       int64 // Σ H × dt
	drainNS  int64 // Σ H × dt over draining intervals
	draining bool
}

// flush integrates H up to now with the worker's state since the last change.
func (ph *prefillHolds) flush(now int64) {
	if dt := now - ph.tLast; dt > 0 && ph.h > 0 {
		ph.ns += ph.h * dt
		if ph.draining {
			ph.drainNS += ph.h * dt
		}
	}
	ph.tLast = now
}

// setDraining records a change of the worker's draining state at now.
func (ph *prefillHolds) setDraining(now int64, draining bool) {
	ph.flush(now)
	ph.draining = draining
}

// makeHandoff is step 3 of a request's path: at the end of the pass that completed its context
// on prefill worker w, the request leaves w, its blocks become held, and it is routed to the
// decode worker with the most free blocks.
func (e *engine) makeHandoff(w *worker, r *request) {
	pd := e.pd
	w.running = slices.DeleteFunc(w.running, func(x *request) bool { return x == r })
	w.nReq--
	e.pendPrefill[w.slot] -= int64(r.pending)
	r.pending = 0
	h := &handoff{seq: pd.handoffs, r: r, src: w, blocks: r.blocks, made: e.now, expire: -1, wait: -1, transfer: -1}
	r.blocks = nil
	ph := w.ph
	ph.flush(e.now)
	for _, s := range h.blocks {
		if ph.refs[s] == 0 {
			ph.h++
		}
		ph.refs[s]++
	}
	ph.open = append(ph.open, h)
	ph.n++
	pd.handoffs++
	if pd.ttlNS >= 0 {
		if pd.leased == nil {
			pd.leased = map[int64]*handoff{}
		}
		pd.leased[h.seq] = h
		h.expire = addNS(e.now, pd.ttlNS)
		pd.timers.push(event{t: h.expire, seq: h.seq, kind: evLease})
	}
	r.ho = h
	e.noteLoad(w)
	d := e.routeDecode()
	if d == nil {
		// No active decode worker (each pool keeps one active, so this does not happen): the
		// handoff fails as at a decode worker's removal, on the worker the request was on.
		h.dst = w
		r.w = w
		e.failHandoff(h, causeDecodeRemoved)
		return
	}
	e.sendToDecode(r, h, d)
}

// sendToDecode queues a request with an outstanding handoff on decode worker d, as an arrival.
func (e *engine) sendToDecode(r *request, h *handoff, d *worker) {
	h.dst = d
	r.w = d
	r.computed, r.target = 0, r.prompt+r.emitted
	e.setState(r, rsWaiting)
	d.fresh.pushBack(r)
	d.nReq++
	e.touch(d)
	e.markDirty(d)
	e.pd.interrupts = append(e.pd.interrupts, d)
}

// releaseHold drops a hold's references on its prefill worker (keyed blocks stay cached there).
func (e *engine) releaseHold(h *handoff) {
	h.ended = true
	src := h.src
	ph := src.ph
	ph.flush(e.now)
	for i := len(h.blocks) - 1; i >= 0; i-- {
		s := h.blocks[i]
		ph.refs[s]--
		if ph.refs[s] == 0 {
			ph.h--
		}
		src.g1.Release(s, e.now)
	}
	h.blocks = nil
	ph.n--
	delete(e.pd.leased, h.seq) // an ended hold is not kept for its expiry event
	if len(ph.open) > 2*ph.n+16 {
		ph.open = slices.DeleteFunc(ph.open, func(x *handoff) bool { return x.ended })
	}
	e.noteLoad(src)
	e.markDirty(src)
}

// admitHandoff is the first admission of a handoff on its decode worker: it takes its blocks (no
// slot, no budget) and starts its pull.
func (e *engine) admitHandoff(w *worker, r *request, c int) {
	h := r.ho
	w.fresh.remove(r)
	r.blocks = w.g1.Acquire(make([]int32, 0, ceilDiv(int(r.prompt+r.output), e.s.Fleet.BlockSize)), c)
	w.held.pushBack(r)
	r.admSeq = e.admSeq
	e.admSeq++
	h.started = true
	h.admitted = e.now
	if h.wait < 0 {
		h.wait = e.now - h.made
	}
	p := &pull{seq: e.seq, src: h.src, dst: w, r: r, bytes: float64(int64(c) * e.blockBytes), handoff: true}
	e.seq++
	h.p = p
	r.pull = p
	e.setState(r, rsPulling)
	e.transfers.push(event{t: addNS(e.now, e.latencyNS), seq: p.seq, kind: evPullStart, p: p})
}

// landHandoff completes a handoff's pull (step 1): the prefill worker releases the hold and the
// request waits again at its place in its decode worker's queue, its blocks kept.
func (e *engine) landHandoff(p *pull) {
	p.ended, p.moving = true, false
	src, dst, r, h := p.src, p.dst, p.r, p.r.ho
	src.moving = removePull(src.moving, p)
	r.pull = nil
	h.p = nil
	h.transfer = e.now - h.admitted
	e.pd.transfer = append(e.pd.transfer, h.transfer)
	e.releaseHold(h)
	e.pd.landed++
	e.inst.hoLanded++
	r.computed = r.target // its context is computed
	e.setState(r, rsWaiting)
	e.touch(dst)
	e.markDirty(dst)
}

// abortHandoffPull ends a handoff's pull before it lands (failure or re-route).
func (e *engine) abortHandoffPull(h *handoff) {
	p := h.p
	if p == nil {
		return
	}
	h.p = nil
	h.r.pull = nil
	p.ended = true
	if p.moving {
		p.moving = false
		p.src.moving = removePull(p.src.moving, p)
		e.reshare(p.src)
	}
}

// failHandoff ends a handoff with a cause (docs/model.md#model-5 "Load failure"): its pull is
// aborted, the hold released, and the request fails or recomputes on its decode worker.
func (e *engine) failHandoff(h *handoff, cause int) {
	pd := e.pd
	r := h.r
	e.abortHandoffPull(h)
	e.releaseHold(h)
	pd.failed[cause]++
	e.inst.hoFailed++
	if h.wait < 0 {
		h.wait = e.now - h.made
	}
	d := h.dst
	if pd.recompute && cause != causeDecodeRemoved {
		pd.recomputed++
		r.computed, r.target = 0, r.prompt+r.emitted
		if r.state == rsPulling {
			e.setState(r, rsWaiting)
		}
		e.markDirty(d)
		return
	}
	// The request ends failed on its decode worker.
	if r.queued {
		if h.started {
			d.held.remove(r)
		} else {
			d.fresh.remove(r)
		}
	}
	releaseBlocks(d, r.blocks, e.now)
	r.blocks = r.blocks[:0]
	d.nReq--
	e.setState(r, rsFailed)
	r.done = e.now
	pd.failedN++
	if e.slo != nil {
		e.slo.killedRequest(r)
	}
	e.src.ended(&r.arrival, e.now, false)
	e.release(r)
	e.markDirty(d)
}

// expireLeases fails, in the order they were made, the holds whose fixed lease ended by now
// without their pull having started (step 1, after the landings). It reports whether any did.
func (e *engine) expireLeases() bool {
	pd := e.pd
	due := pd.bufDue[:0]
	for len(pd.timers) > 0 && pd.timers[0].t <= e.now {
		ev := pd.timers.pop()
		if ev.kind == evLease {
			if h, ok := pd.leased[ev.seq]; ok {
				due = append(due, h)
			}
		}
	}
	due = append(due, pd.expireNow...)
	pd.expireNow = pd.expireNow[:0]
	any := false
	if len(due) > 1 {
		slices.SortFunc(due, func(a, b *handoff) int { return int(a.seq - b.seq) })
	}
	for _, h := range due {
		if h.ended || h.started {
			continue
		}
		e.failHandoff(h, causeLeaseExpired)
		any = true
	}
	pd.bufDue = due[:0]
	if any {
		e.changed()
	}
	return any
}
