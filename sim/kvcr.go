package sim

// stage runs KVCR staging for a request's hint at its lookup (docs/model.md#kvcr, #kvcr-details).
// It reports whether a pull started (the request is then pulling).
func (e *engine) stage(w *worker, r *request, k1, k2 int) bool {
	m := k1 + k2
	src := e.byID(int(r.hint)) // nil: removed, its slot taken by a later worker
	switch {
	case m >= r.reuse:
		r.outcome = ocNotNeeded
		e.kv.NotNeeded++
		return false
	case src == nil || src.state == StateRemoved:
		r.outcome = ocRejectedRemoved
		e.kv.RejectedRemoved++
		e.inst.rejected++
		return false
	case src.state == StateDraining && e.guard:
		r.outcome = ocRejectedDraining
		e.kv.RejectedDraining++
		e.inst.rejected++
		return false
	}
	// Reserving room never evicts entries of this request's blocks 0 … m−1.
	protect := func(key uint64, depth int32) bool { return int(depth) < m && r.keys[depth] == key }
	srcSlots, dstSlots := e.takeSlots(), e.takeSlots()
	for p := m; p < r.reuse; p++ {
		ss, ok := src.g2.ResidentSlot(r.keys[p])
		if !ok || w.g2.Holds(r.keys[p]) {
			break
		}
		ds := w.g2.Reserve(r.keys[p], p, protect)
		if ds < 0 {
			break
		}
		srcSlots = append(srcSlots, ss)
		dstSlots = append(dstSlots, ds)
	}
	j := len(dstSlots)
	if j == 0 {
		e.keepSlots(srcSlots)
		e.keepSlots(dstSlots)
		r.outcome = ocMiss
		e.kv.Miss++
		return false
	}
	for _, s := range srcSlots {
		src.g2.Pin(s)
	}
	p := e.newPull()
	*p = pull{seq: e.seq, src: src, dst: w, r: r, srcSlots: srcSlots, dstSlots: dstSlots, lo: m,
		bytes: float64(int64(j) * e.blockBytes), fromDraining: src.state == StateDraining}
	e.seq++
	r.pull = p
	if m+j == r.reuse {
		r.outcome = ocSuccess
		e.kv.Success++
	} else {
		r.outcome = ocPartial
		e.kv.Partial++
	}
	e.kv.Staged++
	e.kv.Blocks += int64(j)
	e.kv.Bytes += int64(j) * e.blockBytes
	if p.fromDraining {
		e.kv.StagedFromDraining++
	}
	e.inst.staged++
	src.pullsServed++
	w.pullsReceived++
	src.outPulls = append(src.outPulls, p)
	e.setState(r, rsPulling)
	e.transfers.push(event{t: addNS(e.now, e.latencyNS), seq: p.seq, kind: evPullStart, p: p})
	return true
}

// reshare recomputes the processor-sharing rates of a source's moving pulls at e.now
// (docs/model.md#precise-rules Arithmetic): each moving pull first loses rate_old × (t − t_last) bytes, then
// gets bandwidth / n and the landing instant t + max(0, ceil(remaining / rate)).
func (e *engine) reshare(src *worker) {
	n := len(src.moving)
	if n == 0 {
		return
	}
	rate := e.s.KVCR.BandwidthGBps / float64(n)
	for _, p := range src.moving {
		if p.rate > 0 && p.tLast != e.now {
			p.remaining -= float64(p.rate * float64(e.now-p.tLast))
		}
		p.rate = rate
		p.tLast = e.now
		p.landAt = addNS(e.now, transferNS(p.remaining, rate))
		p.ver++
		e.transfers.push(event{t: p.landAt, seq: p.seq, kind: evPullLand, ver: p.ver, p: p})
	}
}

func removePull(s []*pull, p *pull) []*pull {
	for i, x := range s {
		if x == p {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// land completes a pull: the target's entries become resident (pinned by the request until its
// next lookup), the source's pins are released whatever its state, and the request waits again
// in its original queue position.
func (e *engine) land(p *pull) {
	p.ended, p.moving = true, false
	src, dst, r := p.src, p.dst, p.r
	src.moving = removePull(src.moving, p)
	src.outPulls = removePull(src.outPulls, p)
	for _, s := range p.dstSlots {
		dst.g2.Pin(s)
		dst.g2.MakeResident(s, e.now)
	}
	unpinAll(src.g2, p.srcSlots, e.now)
	r.landed = p.dstSlots
	r.pullLo, r.pullHi = p.lo, p.lo+len(p.dstSlots)
	r.pull = nil
	p.dstSlots = nil // the request's now
	e.keepPull(p)
	e.setState(r, rsWaiting)
	e.inst.landed++
	e.touch(dst)
	e.markDirty(dst)
	e.markDirty(src)
}

// abortPull ends a pull whose source or target is force-removed (docs/model.md#scale-in Grace).
func (e *engine) abortPull(p *pull, sourceGone bool) {
	p.ended = true
	wasMoving := p.moving
	p.moving = false
	src, dst, r := p.src, p.dst, p.r
	src.moving = removePull(src.moving, p)
	src.outPulls = removePull(src.outPulls, p)
	e.kv.Aborted++
	r.outcome = ocAborted
	r.pull = nil
	if sourceGone {
		// The target releases its pending entries and carries on without those blocks.
		for _, s := range p.dstSlots {
			dst.g2.Drop(s)
		}
		r.hint = -1
		e.setState(r, rsWaiting)
		e.markDirty(dst)
		e.keepPull(p)
		return
	}
	unpinAll(src.g2, p.srcSlots, e.now)
	e.keepPull(p)
	if wasMoving {
		e.reshare(src)
	}
	e.markDirty(src)
}

// pull is one KVCR pull of blocks from src's G2 into dst's G2.
type pull struct {
	seq          int64
	src, dst     *worker
	r            *request
	srcSlots     []int32
	dstSlots     []int32
	lo           int // first block position pulled
	bytes        float64
	remaining    float64
	rate         float64
	tLast        int64
	landAt       int64
	ver          uint32
	moving       bool
	ended        bool
	fromDraining bool
}
