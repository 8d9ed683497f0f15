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
	// cands lists the stamped workers; groupRun > 0 is the G1 run of the unlisted group of the
	// workers that hold groupKey in G1 (overlaps).
	cands    []int32
	groupKey uint64
	groupRun int32
	// walked: the last routing decision walked the prompt (kv_aware), so overlapOf holds every
	// candidate's runs as Prefix would find them at that instant
	walked bool
	// memo remembers, by a prompt's first key, how far the last walk from it kept every G1
	// holder of that key (overlaps' levels of the unlisted group): while none of those keys
	// changes holders (Holders.Watch), a prompt with the same key at that level keeps them all
	// as far, and its walk starts there. A system prompt of 16 blocks shared by the fleet was
	// 16 lookups of every routing decision of the day preset.
	memo     [kvcache.Watchers]walkMemo
	memoNext int
	// walks that started from the memo, and walks that found theirs changed (for tests)
	memoHits, memoStale int
}

// memoSlot returns the place of key0's walk in memo, or, if none, the place it takes (the
// places are taken in turn).
func (x *routeScratch) memoSlot(key0 uint64) int {
	for i := range x.memo {
		if x.memo[i].key0 == key0 {
			return i
		}
	}
	i := x.memoNext
	x.memoNext = (i + 1) % len(x.memo)
	return i
}

// walkMemo is one remembered walk (routeScratch.memo): from first key key0, with nS G1 holders
// of fingerprint fp, every level up to ref (whose key is keyRef) had the same holders, as the
// index stood at shared generation gen.
type walkMemo struct {
	key0, keyRef, fp, gen uint64
	ref, n                int
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
//
// With group set, the workers holding the first block in G1 are not listed while every level
// keeps them all (a shared system prompt is held by most of the fleet). At the first level that
// only a few of them hold, the few are split off, and the others stay one group, of G1 run
// x.groupRun and no G2 run, known by holding block x.groupRun − 1 in G1 without a stamp of this
// decision (overlapOf). Without group every candidate is stamped and listed in x.cands.
func (e *engine) overlaps(keys []uint64, limit int, group bool) {
	x := &e.scratch
	x.begin(len(e.ws))
	x.cands, x.groupRun = x.cands[:0], 0
	if limit == 0 {
		return
	}
	S, T := x.s[:0], x.t[:0]
	nS, fpS := e.g1x.Count(keys[0])
	implicit := group // S is the set of G1 holders of keys[ref], not listed
	ref := 0
	if !implicit {
		S = e.g1x.Append(S, keys[0])
		for _, w := range S {
			x.stamp[w] = x.cur
		}
		x.cands = append(x.cands, S...)
	}
	// Workers holding the first block in G2 but not in G1 start a G2 run at block 0; none
	// when both tiers have the same holders.
	if n2, fp2 := e.g2x.Count(keys[0]); n2 > 0 && (n2 != nS || fp2 != fpS) {
		x.u = e.g2x.AppendOnly(x.u[:0], keys[0])
		for _, w := range x.u {
			if x.candidate(w) {
				x.g1[w] = 0
				T = append(T, w)
				x.cands = append(x.cands, w)
			}
		}
	}
	start, memo, slot, n0, fp0 := 1, (*walkMemo)(nil), 0, nS, fpS
	if implicit && len(T) == 0 && nS >= 2 {
		slot = x.memoSlot(keys[0])
		m := &x.memo[slot]
		if m.key0 == keys[0] && m.gen == e.g1x.WatchGen(slot) && m.n == nS && m.fp == fpS && m.ref < limit && keys[m.ref] == m.keyRef {
			ref, start = m.ref, m.ref+1
			x.memoHits++
		} else {
			memo = m
			if m.key0 == keys[0] && m.gen != e.g1x.WatchGen(slot) {
				x.memoStale++
			}
		}
	}
	for j := start; j < limit && (len(S)+len(T) > 0 || implicit && nS > 0); j++ {
		k := keys[j]
		if len(T) > 0 {
			T = e.keepG2(T, k, j)
		}
		if implicit {
			n, fp := e.g1x.Count(k)
			if n == nS && fp == fpS {
				ref = j
				continue // every surviving worker holds this block
			}
			if n2, _ := e.g2x.Count(k); 4*(n+n2) > nS {
				implicit = false // many still hold it: list them and go on as without group
				S = e.g1x.Append(S, keys[ref])
				for _, w := range S {
					x.stamp[w] = x.cur
				}
				x.cands = append(x.cands, S...)
			} else {
				S, T, fpS = e.splitGroup(keys[ref], k, j, S, T)
				implicit = false
				x.groupKey, x.groupRun = keys[ref], int32(j)
				continue
			}
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
	if memo != nil {
		// Every level of the group had its nS ≥ 2 holders: watched, they tell when it changes.
		*memo = walkMemo{key0: keys[0], keyRef: keys[ref], fp: fp0, gen: e.g1x.Watch(slot, keys[:ref+1]), ref: ref, n: n0}
	}
	if implicit && nS > 0 {
		x.groupKey, x.groupRun = keys[ref], int32(limit) // every level kept them all
	}
	for _, w := range S {
		x.g1[w], x.g2[w] = int32(limit), 0
	}
	for _, w := range T {
		x.g2[w] = int32(limit) - x.g1[w]
	}
	x.s, x.t = S, T
}

// splitGroup handles level j of the walk while the surviving set is every G1 holder of prev (the
// previous block) and few workers hold k: those of them that hold prev in G1 are stamped,
// either surviving (k in G1) or starting their G2 run at j (k resident in G2 only); the rest of
// the set stays unlisted, the group. It returns the new S, T and S's fingerprint.
func (e *engine) splitGroup(prev, k uint64, j int, S, T []int32) ([]int32, []int32, uint64) {
	x := &e.scratch
	fp := uint64(0)
	x.u = e.g1x.Append(x.u[:0], k)
	for _, w := range x.u {
		if e.ws[w].g1.Holds(prev) && x.candidate(w) {
			S = append(S, w)
			fp ^= kvcache.WorkerPrint(w)
			x.cands = append(x.cands, w)
		}
	}
	x.u = e.g2x.AppendOnly(x.u[:0], k)
	for _, w := range x.u {
		if e.ws[w].g1.Holds(prev) && x.candidate(w) {
			x.g1[w] = int32(j)
			T = append(T, w)
			x.cands = append(x.cands, w)
		}
	}
	return S, T, fp
}

// overlapOf returns w's G1 run and the G2 run continuing it, as the last overlaps found them.
func (e *engine) overlapOf(w int32) (g1, g2 int32) {
	x := &e.scratch
	switch {
	case x.stamp[w] == x.cur:
		return x.g1[w], x.g2[w]
	case x.groupRun > 0 && e.ws[w].g1.Holds(x.groupKey):
		return x.groupRun, 0
	}
	return 0, 0
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

// route picks the target of an arriving request (docs/model.md#routing, #routing-details).
func (e *engine) route(r *request) *worker {
	e.scratch.walked = false
	if w := e.byID(r.routeTo); w != nil && w.state == StateActive && w.role != roleDecode {
		return w
	}
	switch e.s.Router.Policy {
	case PolicyRoundRobin:
		return e.nextRoundRobin() // active prefill workers only, with pools (activeIDs)
	case PolicyLeastLoaded:
		if e.loads.tree != nil && !e.scanRoutes {
			e.refreshLoads()
			if w, _, ok := e.loads.tree.min(); ok {
				return e.ws[w] // fewest requests, lowest id
			}
		}
		var best *worker
		for _, slot := range e.activeIDs { // by id
			if w := e.ws[slot]; best == nil || w.nReq < best.nReq {
				best = w
			}
		}
		return best
	}
	return e.routeKVAware(r)
}

// routeKVAware picks the lowest cost, ties to the lowest id:
// cost = prefill_load_scale × max(pending_prefill_blocks + prompt_blocks − overlap, 0) + used_blocks.
//
// With the routing structure (routeloads.go) it evaluates the workers the walk listed, then
// visits the others in increasing key order, each with its overlap (the group's run or none),
// until the next one's cost cannot be below the best: key + scale × (prompt_blocks − run) is a
// lower bound of it, exact where the structure applies. Without it, it scans every active worker.
func (e *engine) routeKVAware(r *request) *worker {
	pb := int64(ceilDiv(r.promptTokens, e.s.Fleet.BlockSize))
	e.scratch.walked = true
	tree := e.loads.tree
	if tree != nil && !e.scanRoutes {
		e.refreshLoads()
		tree = e.loads.tree // nil if a count outgrew exact arithmetic
	}
	if tree == nil || e.scanRoutes || pb >= exactBlocks {
		e.overlaps(r.keys, r.reuse, false)
		best, bestCost := int32(-1), math.Inf(1)
		for _, id := range e.activeIDs {
			if cost := e.kvCost(id, pb); cost < bestCost {
				best, bestCost = id, cost
			}
		}
		return e.ws[best]
	}
	e.overlaps(r.keys, r.reuse, true)
	x := &e.scratch
	best, bestCost := int32(-1), math.Inf(1)
	better := func(id int32, cost float64) bool { return cost < bestCost || cost == bestCost && e.lowerID(id, best) }
	for _, id := range x.cands {
		if cost := e.kvCost(id, pb); better(id, cost) {
			best, bestCost = id, cost
		}
	}
	scale := e.s.Router.PrefillLoadScale
	bound := float64(scale*float64(pb)) - float64(scale*float64(x.groupRun))
	tree.begin()
	for {
		id, key, ok := tree.peek()
		if !ok || !better(id, key+bound) {
			break // this one and every later one cost at least key + bound
		}
		tree.next()
		if x.stamp[id] == x.cur {
			continue // listed: evaluated above
		}
		if cost := e.kvCost(id, pb); better(id, cost) {
			best, bestCost = id, cost
		}
	}
	return e.ws[best]
}

// kvCost is worker id's kv_aware cost for a prompt of pb blocks, its overlap as the last walk
// found it, evaluated as written in doubles.
func (e *engine) kvCost(id int32, pb int64) float64 {
	g1, g2 := e.overlapOf(id)
	overlap := float64(g1) + float64(e.s.Router.HostHitWeight*float64(g2))
	d := float64(e.pendPrefill[id]+pb) - overlap
	if d < 0 {
		d = 0
	}
	return float64(e.s.Router.PrefillLoadScale*d) + float64(e.usedBlocks[id])
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
	U = slices.DeleteFunc(U, func(w int32) bool { return w == t.slot || e.ws[w].g2.Run(keys, 0, local) < local })
	defer func() { x.s = U }()
	if len(U) == 0 {
		return -1
	}
	// A level held by every worker still in U (and perhaps t) keeps them all: O(1) by count and
	// fingerprint, as in overlaps.
	fpU, fpT := uint64(0), kvcache.WorkerPrint(t.slot)
	for _, w := range U {
		fpU ^= kvcache.WorkerPrint(w)
	}
	for j := local + 1; j < limit; j++ {
		k := keys[j]
		if n, fp := e.g2x.Count(k); n == len(U) && fp == fpU || n == len(U)+1 && fp == fpU^fpT {
			continue
		}
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
		if len(kept) < len(U) {
			fpU = 0
			for _, w := range kept {
				fpU ^= kvcache.WorkerPrint(w)
			}
		}
		U = append(U[:0], kept...)
	}
	best := U[0]
	for _, w := range U[1:] {
		if e.lowerID(w, best) {
			best = w
		}
	}
	return best
}

// enqueue attaches a hint to a request routed to w (m of its blocks already on w) and puts it at
// the back of w's waiting queue: the end of an arrival's routing and of a migration's.
func (e *engine) enqueue(r *request, w *worker, m int) {
	if e.hints {
		if h := e.hintSource(r.keys, r.reuse, w, m); h >= 0 {
			r.hint = e.ws[h].id
			e.kv.Hints++
		}
	}
	if e.onRoute != nil {
		e.onRoute(r, w, r.hint)
	}
	r.w = w
	w.fresh.pushBack(r)
	w.nReq++
	e.touch(w)
	e.markDirty(w)
}

// arrive routes a new request and queues it on its target.
func (e *engine) arrive(a arrival) {
	bs := e.s.Fleet.BlockSize
	r := e.newRequest()
	*r = request{arrival: a, idx: e.nextIdx, hint: -1, outcome: ocNone, firstToken: -1, done: -1,
		prompt: int32(a.promptTokens), output: int32(a.outputTokens), blocks: r.blocks}
	e.nextIdx++
	if r.order < 0 {
		r.order = r.idx
	}
	e.total++
	e.events++
	r.reuse = min((a.promptTokens-1)/bs, len(a.keys))
	w := e.route(r)
	k1, k2 := e.routedPrefix(r, w)
	r.pending = ceilDiv(a.promptTokens, bs) - (k1 + k2)
	e.pendPrefill[w.slot] += int64(r.pending)
	r.state = rsWaiting
	e.waitingN++
	e.enqueue(r, w, k1+k2)
	if e.s.Report.PerRequest {
		e.rows = append(e.rows, r)
	}
}

// routedPrefix interrupts the target's stretch (its next pass scans its queue) and returns its
// prefix of the request (kvcache.Prefix): the runs the routing walk found for it, when the
// router walked the prompt, which saves a second probe of every block (issue 35: 7 % of a
// day). Interrupting a stretch changes nothing in the caches (its passes only decode, and
// settle only counts their tokens), so the walk's runs hold after it too.
func (e *engine) routedPrefix(r *request, w *worker) (k1, k2 int) {
	e.interrupt(w)
	if e.scratch.walked {
		g1, g2 := e.overlapOf(w.slot)
		return int(g1), int(g2)
	}
	return kvcache.Prefix(w.g1, w.g2, r.keys, r.reuse)
}
