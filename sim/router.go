package sim

import "math"

// routeScratch holds per-worker scratch values of one routing decision, reset by stamp.
type routeScratch struct {
	stamp []uint32
	cur   uint32
	g1    []int32
	g2    []int32
	cands []int32
}

func (x *routeScratch) begin(n int) {
	if len(x.stamp) < n {
		x.stamp = make([]uint32, n)
		x.g1 = make([]int32, n)
		x.g2 = make([]int32, n)
	}
	x.cur++
	x.cands = x.cands[:0]
}

// overlaps finds, for every active worker that holds the prompt's first block in G1 or G2,
// its G1 run and the resident G2 run that continues it (both stopping at limit). Candidates
// come from the block index, so the cost follows the workers that hold the prefix, not the
// fleet size.
func (e *engine) overlaps(keys []uint64, limit int) {
	x := &e.scratch
	x.begin(len(e.ws))
	if limit == 0 {
		return
	}
	add := func(ids []int32) {
		for _, id := range ids {
			if x.stamp[id] == x.cur || e.ws[id].state != StateActive {
				continue
			}
			x.stamp[id] = x.cur
			x.cands = append(x.cands, id)
		}
	}
	add(e.g1x.holders[keys[0]])
	add(e.g2x.holders[keys[0]])
	for _, id := range x.cands {
		w := e.ws[id]
		k1 := w.g1.run(keys, limit)
		k2 := 0
		if w.g2 != nil {
			k2 = w.g2.run(keys, k1, limit)
		}
		x.g1[id], x.g2[id] = int32(k1), int32(k2)
	}
}

// localPrefix is a worker's k1 + k2 for a prompt.
func (e *engine) localPrefix(w *worker, keys []uint64, limit int) (int, int) {
	k1 := w.g1.run(keys, limit)
	k2 := 0
	if w.g2 != nil {
		k2 = w.g2.run(keys, k1, limit)
	}
	return k1, k2
}

// route picks the target of an arriving request (SPEC §3.9, §3.14 "Routing details").
func (e *engine) route(r *request) *worker {
	if r.routeTo >= 0 && r.routeTo < len(e.ws) && e.ws[r.routeTo].state == StateActive {
		return e.ws[r.routeTo]
	}
	switch e.s.Router.Policy {
	case PolicyRoundRobin:
		n := len(e.ws)
		for i := 0; i < n; i++ {
			w := e.ws[(e.rr+i)%n]
			if w.state == StateActive {
				e.rr = int(w.id) + 1
				return w
			}
		}
	case PolicyLeastLoaded:
		var best *worker
		for _, w := range e.ws {
			if w.state == StateActive && (best == nil || w.nReq < best.nReq) {
				best = w
			}
		}
		return best
	default:
		return e.routeKVAware(r)
	}
	return nil
}

// routeKVAware picks the lowest cost, ties to the lowest id:
// cost = prefill_load_scale × max(pending_prefill_blocks + prompt_blocks − overlap, 0) + used_blocks.
func (e *engine) routeKVAware(r *request) *worker {
	e.overlaps(r.keys, r.reuse)
	x := &e.scratch
	scale := e.s.Router.PrefillLoadScale
	hw := e.s.Router.HostHitWeight
	pb := int64(ceilDiv(r.promptTokens, e.s.Fleet.BlockSize))
	var best *worker
	bestCost := math.Inf(1)
	for _, w := range e.ws {
		if w.state != StateActive {
			continue
		}
		overlap := 0.0
		if x.stamp[w.id] == x.cur {
			overlap = float64(x.g1[w.id]) + float64(hw*float64(x.g2[w.id]))
		}
		cost := float64(scale*math.Max(float64(w.pendingPrefill+pb)-overlap, 0)) + float64(w.g1.used())
		if cost < bestCost {
			best, bestCost = w, cost
		}
	}
	return best
}

// hintSource returns the active worker other than t with the longest run of the prompt's
// leading blocks resident in its G2, if that run is longer than t's local prefix; ties go to
// the lowest id. It returns -1 for no hint.
func (e *engine) hintSource(keys []uint64, limit int, t *worker, local int) int32 {
	if limit == 0 {
		return -1
	}
	best, bestRun := int32(-1), local
	for _, id := range e.g2x.holders[keys[0]] {
		w := e.ws[id]
		if w == t || w.state != StateActive {
			continue
		}
		run := w.g2.run(keys, 0, limit)
		if run > bestRun || (run == bestRun && run > local && id < best) {
			best, bestRun = id, run
		}
	}
	return best
}

// arrive routes a new request and queues it on its target.
func (e *engine) arrive(a *arrival) {
	bs := e.s.Fleet.BlockSize
	r := &request{arrival: a, idx: e.nextIdx, hint: -1, outcome: ocNone, firstToken: -1, done: -1}
	e.nextIdx++
	if a.order < 0 {
		a.order = r.idx
	}
	e.total++
	e.events++
	r.reuse = min((a.promptTokens-1)/bs, len(a.keys))
	w := e.route(r)
	k1, k2 := e.localPrefix(w, r.keys, r.reuse)
	r.pending = ceilDiv(a.promptTokens, bs) - (k1 + k2)
	w.pendingPrefill += int64(r.pending)
	if e.hints {
		if h := e.hintSource(r.keys, r.reuse, w, k1+k2); h >= 0 {
			r.hint = h
			e.kv.Hints++
		}
	}
	r.w = w
	r.state = rsWaiting
	e.waitingN++
	w.fresh.pushBack(r)
	w.nReq++
	e.touch(w)
	e.markDirty(w)
	if e.s.Report.PerRequest {
		e.rows = append(e.rows, r)
	}
}
