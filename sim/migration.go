package sim

import "github.com/scalein-planner/scalein/sim/internal/kvcache"

// migrate moves a request that the forced removal of w would kill to another worker (
// docs/model.md#model-3 Migration, Dynamo's DYN_MIGRATION_LIMIT): at the removal instant it is routed again as
// an ordinary arrival (a new hint may be attached), joins the back of its target's waiting
// queue, and on admission recomputes its prompt and the tokens it had emitted, as a preempted
// request does. Its arrival, first-token instant and emitted tokens are kept.
//
// forceRemove calls it after w is removed, so w is no candidate; it has checked that a worker
// is active.
func (e *engine) migrate(w *worker, r *request) {
	w.nReq-- // w's pending prefill was zeroed by its removal
	// What it held on w is gone with w's caches (w was cleared): G1 blocks, landed entries,
	// restore pins, and the blocks of an earlier pull.
	r.blocks = r.blocks[:0]
	r.landed, r.restore = nil, nil
	r.pullLo, r.pullHi = 0, 0
	r.passTokens, r.passEmit = 0, false
	r.computed = 0
	r.preempted = false
	r.prev, r.next, r.queued = nil, nil, false
	if r.state == rsRunning {
		e.setState(r, rsWaiting)
	} else {
		// waiting, loading or pulling: all count as waiting
		r.state = rsWaiting
	}
	r.migrations++
	e.migratedN++
	e.inst.migrated++

	t := e.route(r)
	e.interrupt(t) // its next pass scans its queue
	k1, k2 := kvcache.Prefix(t.g1, t.g2, r.keys, r.reuse)
	// Pending prefill counts until the first token: a request that already emitted one adds none.
	if r.firstToken < 0 {
		r.pending = ceilDiv(r.promptTokens, e.s.Fleet.BlockSize) - (k1 + k2)
		e.pendPrefill[t.slot] += int64(r.pending)
	} else {
		r.pending = 0
	}
	r.hint, r.hintLooked = -1, false
	e.enqueue(r, t, k1+k2)
}
