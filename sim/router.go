package sim

import (
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// routeScratch holds per-worker scratch values of one routing decision, reset by stamp.
type routeScratch struct {
	stamp []uint32 // == cur: the worker is a candidate of this decision
	cur   uint32
	g1    []int32  // candidate's G1 run (while in the G2 phase: where its G2 run starts)
	g2    []int32  // candidate's G2 run continuing it
	mark  []uint32 // == a level: the worker holds the block that level marked
	lvl   uint32   // the last level markHolders used
	// Reused slices: s and t keep the backing arrays of overlaps' S (workers still in their
	// G1 run) and T (workers in their G2 run) between decisions; u receives a block's holders.
	s, t, u []int32
}

func (x *routeScratch) begin(n int) {
	if len(x.stamp) < n {
		x.stamp = make([]uint32, n)
		x.g1 = make([]int32, n)
		x.g2 = make([]int32, n)
		x.mark = make([]uint32, n)
	}
	x.cur++
}

// candidate stamps w as a candidate of this decision; its runs are set when its walk ends.
func (x *routeScratch) candidate(w int32) bool {
	if x.stamp[w] == x.cur {
		return false
	}
	x.stamp[w] = x.cur
	return true
}

// markHolders marks every holder of k with a new level and returns it.
func (x *routeScratch) markHolders(idx *kvcache.Holders, k uint64) uint32 {
	x.lvl++
	lvl := x.lvl
	x.u = idx.Append(x.u[:0], k)
	for _, w := range x.u {
		x.mark[w] = lvl
	}
	return lvl
}

// overlaps finds, for every active worker holding the prompt's first block in G1 or G2, its G1
// run and the resident G2 run continuing it (both stopping at limit), into the scratch. It walks
// the prompt once, level by level, over the block index (which holds active workers only): a
// level whose holder set equals the surviving set (same size and fingerprint) costs O(1), so the
// cost follows the changes in who holds the prefix, not workers × prompt.
func (e *engine) overlaps(keys []uint64, limit int) {
	x := &e.scratch
	x.begin(len(e.ws))
	if limit == 0 {
		return
	}
	S, T := e.g1x.Append(x.s[:0], keys[0]), x.t[:0]
	nS, fpS := e.g1x.Count(keys[0])
	for _, w := range S {
		x.stamp[w] = x.cur
	}
	// Workers holding the first block in G2 but not in G1 start a G2 run at block 0; none
	// when both tiers have the same holders.
	if n2, fp2 := e.g2x.Count(keys[0]); n2 > 0 && (n2 != nS || fp2 != fpS) {
		x.u = e.g2x.Append(x.u[:0], keys[0])
		for _, w := range x.u {
			if x.candidate(w) {
				x.g1[w] = 0
				T = append(T, w)
			}
		}
	}
	for j := 1; j < limit && len(S)+len(T) > 0; j++ {
		k := keys[j]
		if len(T) > 0 {
			T = e.keepG2(T, k, j)
		}
		if len(S) == 0 {
			continue
		}
		if n, fp := e.g1x.Count(k); n == len(S) && fp == fpS {
			continue // every surviving worker holds this block
		}
		in1 := x.markHolders(e.g1x, k)
		in2 := x.markHolders(e.g2x, k) // overwrites in1 for workers holding both: check G1 first
		kept := S[:0]
		for _, w := range S {
			if m := x.mark[w]; m == in1 || (m == in2 && e.ws[w].g1.Holds(k)) {
				kept = append(kept, w)
				continue
			}
			fpS ^= kvcache.WorkerPrint(w)
			x.g1[w] = int32(j)
			if x.mark[w] == in2 {
				T = append(T, w)
			} else {
				x.g2[w] = 0
			}
		}
		S = kept
	}
	for _, w := range S {
		x.g1[w], x.g2[w] = int32(limit), 0
	}
	for _, w := range T {
		x.g2[w] = int32(limit) - x.g1[w]
	}
	x.s, x.t = S, T
}

// keepG2 keeps the workers of T whose G2 holds k resident; the others end their G2 run at j.
func (e *engine) keepG2(T []int32, k uint64, j int) []int32 {
	x := &e.scratch
	n, _ := e.g2x.Count(k)
	var lvl uint32
	byMark := n > 0 && len(T) > 8 && n < 4*len(T)
	if byMark {
		lvl = x.markHolders(e.g2x, k)
	}
	kept := T[:0]
	for _, w := range T {
		var holds bool
		switch {
		case n == 0:
		case byMark:
			holds = x.mark[w] == lvl
		default:
			_, holds = e.ws[w].g2.ResidentSlot(k)
		}
		if holds {
			kept = append(kept, w)
		} else {
			x.g2[w] = int32(j) - x.g1[w]
		}
	}
	return kept
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
	best := int32(-1)
	bestCost := math.Inf(1)
	for _, id := range e.activeIDs {
		overlap := 0.0
		if x.stamp[id] == x.cur {
			overlap = float64(x.g1[id]) + float64(hw*float64(x.g2[id]))
		}
		d := float64(e.pendPrefill[id]+pb) - overlap
		if d < 0 {
			d = 0
		}
		cost := float64(scale*d) + float64(e.usedBlocks[id])
		if cost < bestCost {
			best, bestCost = id, cost
		}
	}
	return e.ws[best]
}

// hintSource returns the active worker other than t with the longest run of the prompt's
// leading blocks resident in its G2, if that run is longer than t's local prefix; ties go to
// the lowest id. It returns -1 for no hint.
//
// A source must hold block `local` (the first block t lacks), so the candidates are that block's
// G2 holders; each is checked for the blocks before it, then the survivors walk on together.
func (e *engine) hintSource(keys []uint64, limit int, t *worker, local int) int32 {
	if local >= limit {
		return -1
	}
	x := &e.scratch
	x.begin(len(e.ws))
	U := e.g2x.Append(x.s[:0], keys[local])
	U = slices.DeleteFunc(U, func(w int32) bool { return w == t.id || e.ws[w].g2.Run(keys, 0, local) < local })
	defer func() { x.s = U }()
	if len(U) == 0 {
		return -1
	}
	for j := local + 1; j < limit; j++ {
		k := keys[j]
		var lvl uint32
		byMark := len(U) > 8
		if byMark {
			lvl = x.markHolders(e.g2x, k)
		}
		kept := x.t[:0]
		for _, w := range U {
			var holds bool
			if byMark {
				holds = x.mark[w] == lvl
			} else {
				_, holds = e.ws[w].g2.ResidentSlot(k)
			}
			if holds {
				kept = append(kept, w)
			}
		}
		x.t = kept
		if len(kept) == 0 {
			break // the longest run is j, held by every worker still in U
		}
		U = append(U[:0], kept...)
	}
	best := U[0]
	for _, w := range U[1:] {
		best = min(best, w)
	}
	return best
}

// arrive routes a new request and queues it on its target.
func (e *engine) arrive(a *arrival) {
	bs := e.s.Fleet.BlockSize
	r := &request{arrival: *a, idx: e.nextIdx, hint: -1, outcome: ocNone, firstToken: -1, done: -1,
		prompt: int32(a.promptTokens), output: int32(a.outputTokens)}
	e.nextIdx++
	if r.order < 0 {
		r.order = r.idx
	}
	e.total++
	e.events++
	r.reuse = min((a.promptTokens-1)/bs, len(a.keys))
	w := e.route(r)
	e.interrupt(w) // its next pass scans its queue
	k1, k2 := kvcache.Prefix(w.g1, w.g2, r.keys, r.reuse)
	r.pending = ceilDiv(a.promptTokens, bs) - (k1 + k2)
	e.pendPrefill[w.id] += int64(r.pending)
	if e.hints {
		if h := e.hintSource(r.keys, r.reuse, w, k1+k2); h >= 0 {
			r.hint = h
			e.kv.Hints++
		}
	}
	if e.onRoute != nil {
		e.onRoute(r, w, r.hint)
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
