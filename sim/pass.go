package sim

import (
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// ceilDiv is ceil(a / b) for non-negative a and positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// startPass builds a batch on an idle worker (docs/model.md#passes, #the-pass) and starts the
// pass if it has work. It reports whether anything changed.
func (e *engine) startPass(w *worker) bool {
	e.noteLoad(w) // admissions, decode growth and preemptions change its used blocks
	changed := false
	batch, budget := w.batch[:0], w.f.MaxBatchedTokens
	// A step with nothing to look at is not called (startPass runs millions of times a run).
	if len(w.running) > 0 {
		changed = e.growDecodes(w)
		batch, budget = batchRunning(batch, w.running, budget)
	}
	if w.role == roleDecode {
		var admitted bool
		batch, _, admitted = e.scanDecode(w, batch, budget)
		changed = changed || admitted
	} else if w.pre.head != nil || w.fresh.head != nil {
		var admitted bool
		batch, admitted = e.scanQueue(w, batch, budget)
		changed = changed || admitted
	}
	w.batch = batch
	if len(batch) == 0 {
		return changed
	}
	if w.role == rolePrefill {
		markHandoffs(batch)
	}
	P, D, K := batchShape(batch)
	dur := msToNS(w.f.Timing.PassMS(P, D, K))
	w.busy = true
	e.touch(w)
	if e.opt.Pass != nil {
		e.recordPass(w, P, D, K, dur)
	}
	w.passStart, w.passEnd, w.passK, w.continued = e.now, addNS(e.now, dur), K, false
	w.stretchLeft = 0
	// Zero-length passes would end at this same instant, one per repetition of it (#precise-rules), which
	// a stretch cannot tell apart by time: they are simulated one by one. Later passes of a
	// stretch are no shorter (K only grows).
	if P == 0 && dur > 0 && w.nReq == len(w.running) && e.opt.Pass == nil && !e.perPass && (w.role != roleDecode || allEmitted(batch)) {
		w.stretchLeft = stretchLen(w, e.s.Fleet.BlockSize) - 1
	}
	e.schedulePass(w)
	e.events++
	return true
}

// schedulePass puts the end of w's pass in flight, or of the last pass of its stretch, on the
// heap; an earlier event of w becomes stale.
//
// A stretch's pass ends are computed lazily (issue 35, second round): most stretches are cut by
// an arrival or a completion long before their last pass, so the heap first gets a checkpoint
// at the end of the stretch's first few passes (evPassCheck), which computes more of them when
// it reaches the top of the heap (passTop, stepPasses). The ends are computed in order by the
// same arithmetic as one by one, and kept in w.ends for settle, so the stretch's last pass ends
// at the same instant as when the whole stretch was computed here at its start.
func (e *engine) schedulePass(w *worker) {
	e.passVer[w.slot]++
	if w.stretchLeft == 0 {
		e.passes.push(event{t: w.passEnd, seq: int64(w.slot), kind: evPass, ver: e.passVer[w.slot], w: w})
		return
	}
	w.ends, w.endAt = w.ends[:0], 0
	e.pushStretch(w, firstStretchEnds)
}

// firstStretchEnds is how many pass ends of a stretch are computed when it starts; each
// checkpoint then doubles what is computed.
const firstStretchEnds = 16

// pushStretch computes up to n more pass ends of w's stretch and puts the last computed on the
// heap: the stretch's last pass, or a checkpoint when more are left to compute.
func (e *engine) pushStretch(w *worker, n int) {
	total := w.endAt + w.stretchLeft // passes of the stretch after its first
	w.extendEnds(min(n, total-len(w.ends)))
	kind := evPass
	if len(w.ends) < total {
		kind = evPassCheck
	}
	e.passes.push(event{t: w.ends[len(w.ends)-1], seq: int64(w.slot), kind: kind, ver: e.passVer[w.slot], w: w})
}

// extendStretch handles a checkpoint of w's stretch that reached the top of the heap: it computes
// as many pass ends again as it has and moves the event to the last of them.
func (e *engine) extendStretch(w *worker) {
	e.pushStretch(w, len(w.ends))
}

// extendEnds computes the ends of the next n passes of w's stretch after those in w.ends (each
// decode reads one more token: K grows by D a pass), as endPass and startPass would pass by pass.
func (w *worker) extendEnds(n int) {
	t := w.f.Timing
	D := len(w.batch)
	end, K := w.passEnd, w.passK // the stretch's first pass (nothing settled before any end is computed)
	if len(w.ends) > 0 {
		end, K = w.ends[len(w.ends)-1], w.endsK
	}
	// Timing.PassMS(0, D, K) term by term, its decode term (the same every pass) taken once.
	base := 0.0
	base += t.DecodeMS + float64(t.DecodeMSPerSeq*float64(D))
	for range n {
		K += D
		d := base
		if K > 0 {
			d += float64(t.DecodeMSPer1kKVTokens*float64(K)) / 1000
		}
		end = addNS(end, msToNS(d))
		w.ends = append(w.ends, end)
	}
	w.endsK = K
}

// Stretches: passes computed instead of simulated.
//
// A worker whose requests all run and all decode (nothing waiting, loading, pulling or in
// prefill) repeats the same batch, pass after pass, until a request needs a G1 block to grow
// or completes: nothing else on the worker changes in between except each request's emitted
// count, and nothing outside reads those counts. Such a run of passes is a stretch: the pass
// that starts it is started as usual, and the heap gets one event, at the end of its last pass.
// The passes in between are computed by the arithmetic rule (docs/model.md#arithmetic) for a pass, per pass, in
// doubles and rounded to nanoseconds as written: P = 0, D = the batch's size, and K growing by
// D a pass (each decode reads one more emitted token), so each ends exactly when the engine
// would have ended it pass by pass. What would cut a stretch short calls interrupt at the
// instant it happens (an arrival or a migrated request routed to the worker); a forced removal
// calls settle, which brings the requests' counts up to date. Nothing else that can happen to a
// worker mid-stretch changes its passes: transfers and pulls touch G2 only, marking it draining
// or active again changes whether it is routed to, and the autoscaler's samples read its
// requests and used blocks, which a stretch does not change.

// stretchLen is how many passes, starting with the one w just started, repeat its batch: up to
// the first pass whose start needs a new G1 block for some request, or the pass in which some
// request emits its last token, whichever comes first.
func stretchLen(w *worker, bs int) int {
	n := math.MaxInt
	for _, r := range w.batch {
		left := int(r.output - r.emitted)                      // passes until it completes
		grow := len(r.blocks)*bs - int(r.prompt+r.emitted) + 1 // the pass whose start needs a block
		n = min(n, left, grow)
	}
	return n
}

// settle applies the passes of w's stretch that ended by instant t, as endPass would have one
// by one: each request of the batch emits a token; none completes and none needs a block.
func (e *engine) settle(w *worker, t int64) {
	if w.stretchLeft == 0 || w.passEnd > t {
		return
	}
	D := len(w.batch)
	n := int32(0)
	for w.stretchLeft > 0 && w.passEnd <= t {
		if w.endAt == len(w.ends) {
			w.extendEnds(min(max(len(w.ends), firstStretchEnds), w.stretchLeft))
		}
		n++
		w.stretchLeft--
		w.passK += D
		w.passStart = w.passEnd
		w.passEnd = w.ends[w.endAt]
		w.endAt++
	}
	for _, r := range w.batch {
		r.emitted += n
	}
	e.tokens.Output += int64(n) * int64(D)
	w.continued = true
	w.lastWork = max(w.lastWork, w.passStart)
}

// interrupt ends w's stretch at the current instant, because something is about to change what
// its next pass does: the passes that ended by now are settled; if the last of them ended at
// this very instant and this instant's pass starts (step 4) are still to come, the worker is
// idle now, as it would be after step 2; otherwise the pass in flight ends with its own event.
func (e *engine) interrupt(w *worker) {
	if w.stretchLeft == 0 {
		return
	}
	e.settle(w, e.now)
	if w.continued && w.passStart == e.now && e.startsAt != e.now {
		for _, r := range w.batch {
			r.passTokens, r.passEmit = 0, false
		}
		w.batch = w.batch[:0]
		w.busy = false
		w.stretchLeft = 0
		e.passVer[w.slot]++
		e.markDirty(w)
		return
	}
	w.stretchLeft = 0
	e.schedulePass(w)
}

// growDecodes gives every decoding request of w the G1 block its next token needs, in
// admission order, preempting the latest admitted requests when G1 is full. It reports whether
// anything changed.
func (e *engine) growDecodes(w *worker) bool {
	bs := e.s.Fleet.BlockSize
	changed := false
	for i := 0; i < len(w.running); i++ {
		r := w.running[i]
		if r.computed < r.target {
			continue
		}
		need := ceilDiv(int(r.prompt+r.emitted), bs)
		for len(r.blocks) < need {
			if s := w.g1.Take(); s >= 0 {
				r.blocks = append(r.blocks, s)
				changed = true
				continue
			}
			victim := w.running[len(w.running)-1]
			e.preempt(w, victim)
			changed = true
			if victim == r {
				break
			}
		}
	}
	return changed
}

// batchRunning appends the running requests to batch: every decode (one token each), then
// prefill chunks while the token budget lasts. It returns the batch and the budget left.
func batchRunning(batch, running []*request, budget int) ([]*request, int) {
	for _, r := range running {
		if r.computed >= r.target {
			r.passTokens, r.passEmit = 0, true
			budget--
			batch = append(batch, r)
		}
	}
	for _, r := range running {
		if r.computed < r.target && budget > 0 {
			batch, budget = addChunk(batch, r, budget)
		}
	}
	return batch, budget
}

// addChunk appends r to batch with the next chunk of its prefill that fits the budget and
// returns the budget left.
func addChunk(batch []*request, r *request, budget int) ([]*request, int) {
	n := min(int(r.target-r.computed), budget)
	r.passTokens, r.passEmit = int32(n), int(r.computed)+n == int(r.target)
	return append(batch, r), budget - n
}

// scanQueue scans w's waiting queue, preempted requests first, while the budget lasts: it
// releases landed pins, stages hinted pulls, and admits requests in order until one does not
// fit (head-of-line blocking); admitted requests that run now join the batch. It reports
// whether anything changed.
func (e *engine) scanQueue(w *worker, batch []*request, budget int) ([]*request, bool) {
	bs := e.s.Fleet.BlockSize
	changed := false
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
		k1, k2 := kvcache.Prefix(w.g1, w.g2, r.keys, r.reuse)
		if len(r.landed) > 0 {
			unpinAll(w.g2, r.landed, e.now)
			e.keepSlots(r.landed)
			r.landed = nil
			changed = true
		}
		if r.hint >= 0 && !r.hintLooked {
			r.hintLooked = true
			changed = true
			if e.stage(w, r, k1, k2) {
				r = next
				continue
			}
		}
		total := int(r.prompt + r.emitted)
		need := ceilDiv(total, bs) - k1
		if len(w.running)+w.loading >= w.f.MaxNumSeqs || !w.g1.Fits(need) {
			break // head-of-line blocking
		}
		changed = true
		e.admit(w, r, k1, k2, need)
		if k2 == 0 {
			batch, budget = addChunk(batch, r, budget)
		}
		r = next
	}
	return batch, changed
}

// batchShape counts what a pass's duration depends on: P, the prompt tokens computed; D, the
// requests that emit a token; K, the tokens of KV the decoding requests read (their prompt and
// emitted tokens).
func batchShape(batch []*request) (P, D, K int) {
	for _, r := range batch {
		P += int(r.passTokens)
		if r.passEmit {
			D++
			if r.passTokens == 0 {
				K += int(r.prompt + r.emitted) // decodes: reads its whole KV
			}
		}
	}
	return P, D, K
}

// PassMS is the duration in milliseconds of a pass that computes P prompt tokens, emits D
// tokens, and whose decodes read K tokens of KV (docs/model.md#precise-rules "Arithmetic"), evaluated as written
// in doubles; the simulator rounds it to whole nanoseconds.
func (t Timing) PassMS(P, D, K int) float64 {
	d := 0.0
	if P > 0 {
		d += t.PrefillMS + float64(t.PrefillMSPer1kTokens*float64(P))/1000
	}
	if D > 0 {
		d += t.DecodeMS + float64(t.DecodeMSPerSeq*float64(D))
	}
	if K > 0 {
		d += float64(t.DecodeMSPer1kKVTokens*float64(K)) / 1000
	}
	return d
}

// recordPass reports a starting pass to RunOptions.Pass.
func (e *engine) recordPass(w *worker, P, D, K int, dur int64) {
	n := 0
	for _, r := range w.batch {
		if r.passTokens > 0 {
			n++
		}
	}
	e.opt.Pass(PassRecord{Worker: int(w.id), StartNS: e.now, EndNS: e.now + dur,
		PrefillRequests: n, PrefillTokens: P, DecodeRequests: D, DecodeKVTokens: K})
}

// admit takes a request into a sequence slot with its G1 blocks: it runs, or with k2 > 0 it
// loads its G2 prefix through one H2D transfer first.
func (e *engine) admit(w *worker, r *request, k1, k2, need int) {
	bs := e.s.Fleet.BlockSize
	if r.preempted {
		w.pre.remove(r)
		r.preempted = false
	} else {
		w.fresh.remove(r)
	}
	// Room once for every block it will hold (its last token needs none).
	if n := ceilDiv(int(r.prompt+r.output), bs); cap(r.blocks) < n {
		r.blocks = make([]int32, 0, n)
	}
	r.blocks = w.g1.Acquire(r.blocks[:0], need)
	r.admSeq = e.admSeq
	e.admSeq++
	r.computed = int32(k1 * bs)
	r.target = r.prompt + r.emitted
	if !r.admitted {
		r.admitted = true
		r.firstAdm = r.admSeq
		kv := 0
		for p := k1; p < k1+k2; p++ {
			if p >= r.pullLo && p < r.pullHi {
				kv++
			}
		}
		r.g1, r.kv, r.g2 = k1*bs, kv*bs, (k2-kv)*bs
		e.tokens.Prompt += int64(r.promptTokens)
		e.tokens.G1Reused += int64(r.g1)
		e.tokens.G2Reused += int64(r.g2)
		e.tokens.KVCRPulled += int64(r.kv)
		e.tokens.Recomputed += int64(r.promptTokens - r.g1 - r.g2 - r.kv)
	}
	if k2 == 0 {
		e.setState(r, rsRunning)
		w.running = append(w.running, r)
		return
	}
	e.setState(r, rsLoading)
	w.loading++
	r.restLo = k1
	r.restore = e.takeSlots()
	for p := k1; p < k1+k2; p++ {
		s, _ := w.g2.ResidentSlot(r.keys[p])
		w.g2.Pin(s)
		r.restore = append(r.restore, s)
	}
	tr := e.newTransfer()
	*tr = transfer{kind: trH2D, w: w, r: r}
	e.queueTransfer(w, tr, int64(k2)*e.blockBytes)
}

// preempt frees a running request's blocks and puts it back at the front of the queue, among
// preempted requests in the order of their first admission.
func (e *engine) preempt(w *worker, v *request) {
	w.running = slices.DeleteFunc(w.running, func(x *request) bool { return x == v })
	releaseBlocks(w, v.blocks, e.now)
	v.blocks = v.blocks[:0]
	v.preemptions++
	e.preemptions++
	e.setState(v, rsWaiting)
	at := w.pre.head
	for at != nil && at.firstAdm < v.firstAdm {
		at = at.next
	}
	w.pre.insertBefore(v, at)
	v.preempted = true
}

// endPass handles the end of a pass, request by request in batch order (docs/model.md#precise-rules).
func (e *engine) endPass(w *worker) {
	bs := e.s.Fleet.BlockSize
	if w.stretchLeft > 0 { // the event of a stretch's last pass: the passes before it end first
		for _, r := range w.batch {
			r.emitted += int32(w.stretchLeft)
		}
		e.tokens.Output += int64(w.stretchLeft) * int64(len(w.batch))
		w.stretchLeft = 0
	}
	w.busy = false
	e.touch(w)
	for _, r := range w.batch {
		if r.passTokens > 0 {
			old := int(r.computed)
			r.computed += r.passTokens
			lo := old / bs
			hi := min(int(r.computed)/bs, len(r.keys))
			if w.role == roleDecode {
				hi = lo // decode workers key nothing
			}
			if lo < hi {
				w.prefetchKeys(r.keys[lo:hi])
			}
			// Each block is keyed in G1 and, write-through, reserved in G2 unless G2 holds it,
			// until G2 has no room; the two tiers' steps do not affect each other, so one loop
			// does both while the block's entry is at hand.
			var slots []int32
			through := w.g2 != nil && lo < hi
			if through {
				slots = e.takeSlots()
			}
			for j := lo; j < hi; j++ {
				held := kvcache.KeyThrough(w.g1, w.g2, r.blocks[j], r.keys[j], j)
				if !through || held {
					continue
				}
				s := w.g2.Reserve(r.keys[j], j, nil)
				if s < 0 {
					through = false
					continue
				}
				slots = append(slots, s)
			}
			if len(slots) > 0 {
				tr := e.newTransfer()
				*tr = transfer{kind: trD2H, w: w, slots: slots}
				e.queueTransfer(w, tr, int64(len(slots))*e.blockBytes)
			} else {
				e.keepSlots(slots)
			}
		}
		if r.passEmit {
			r.emitted++
			if r.firstToken < 0 {
				r.firstToken = e.now
				e.ttft = append(e.ttft, e.now-r.atNS)
				e.ttftAt = append(e.ttftAt, e.now)
				e.pendPrefill[w.slot] -= int64(r.pending)
			}
			e.tokens.Output++
			if r.emitted >= r.output {
				e.complete(w, r)
			}
		}
		r.passTokens, r.passEmit = 0, false
		if r.passHandoff {
			r.passHandoff = false
			e.makeHandoff(w, r)
		}
	}
	w.batch = w.batch[:0]
	e.markDirty(w)
}

// prefetchKeys prefetches the entries of keys about to be keyed in G1 and G2, and those of the
// G2 entries their write-through will evict.
func (w *worker) prefetchKeys(keys []uint64) {
	for _, k := range keys {
		w.g1.Prefetch(k)
	}
	if w.g2 != nil {
		w.g2.PrefetchVictims(len(keys))
	}
}

func (e *engine) complete(w *worker, r *request) {
	w.running = slices.DeleteFunc(w.running, func(x *request) bool { return x == r })
	releaseBlocks(w, r.blocks, e.now)
	e.setState(r, rsCompleted)
	r.done = e.now
	w.nReq--
	w.completed++
	e.completedN++
	e.inst.completed++
	e.e2e = append(e.e2e, e.now-r.atNS)
	if e.slo != nil {
		e.slo.completed(r, e.now)
	}
	e.src.ended(&r.arrival, e.now, true)
	e.release(r)
	e.keepRequest(r)
}

// release drops what a finished request no longer needs.
func (e *engine) release(r *request) {
	if e.s.Report.PerRequest {
		r.blocks = nil // only its row is read
	}
	r.keys = nil
	r.landed = nil
	r.restore = nil
}

// releaseBlocks drops a request's G1 references deepest block first: the eviction order does
// not depend on it (distinct depths), but the LRU queue then only appends.
func releaseBlocks(w *worker, blocks []int32, now int64) {
	for i := len(blocks) - 1; i >= 0; i-- {
		w.g1.Release(blocks[i], now)
	}
}

// unpinAll releases G2 pins deepest entry first (see releaseBlocks).
func unpinAll(c *kvcache.Host, slots []int32, now int64) {
	for i := len(slots) - 1; i >= 0; i-- {
		c.Unpin(slots[i], now)
	}
}
