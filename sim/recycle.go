package sim

// Records the engine reuses instead of allocating one per request, lane transfer or pull, each
// with its slot lists: most of a run's allocations were these (docs/performance.md, issue 18).
//
// Who may still hold a record once it is kept for reuse:
//   - A transfer is kept when it finishes: its single event has just been popped, its worker
//     dropped it from its lane, and nothing else names it. A cancelled transfer is never
//     kept (its event is still on the heap), so the collector takes it.
//   - A pull is kept when it lands or is aborted, and events of that life may still be on the
//     transfer heap (a start event of a pull aborted during its latency, land events a
//     reshare made stale). A kept pull stays ended, so they are skipped; once reused, the
//     pull has a new seq, and an event whose seq differs from its pull's is stale
//     (event.stale).
//   - A request is kept when it completes, unless the report keeps it for its row: it has
//     left its worker's running list and batch (endPass clears its pass fields after
//     complete, before the batch is reset and before any arrival of the instant), no live pull
//     or transfer names it, and its session source has read its arrival. It keeps its
//     block list's room for the next request; a killed request is left to the collector
//     (a cancelled restore still names it).
//   - A slot list is kept by whoever ends its last owner: a D2H transfer's when it finishes,
//     a pull's source list when it ends, its target list when it is aborted or, after landing
//     (the request then owns it as its landed entries), when the request's next scan releases
//     those pins; a restore's when its H2D transfer finishes. Lists a migrated or ended
//     request drops are left to the collector.
//
// A kept record keeps its other fields until it is filled again (see keepTransfer): nothing
// reads a kept record, and a kept pull or transfer may still name a worker or a request.

// takeSlots returns an empty slot list, with room from an earlier use if one is kept.
func (e *engine) takeSlots() []int32 {
	n := len(e.spareSlots)
	if n == 0 {
		return nil
	}
	s := e.spareSlots[n-1]
	e.spareSlots = e.spareSlots[:n-1]
	return s
}

// keepSlots keeps a slot list that nothing refers to any more for takeSlots.
func (e *engine) keepSlots(s []int32) {
	if cap(s) > 0 && !e.noRecycle {
		e.spareSlots = append(e.spareSlots, s[:0])
	}
}

// newPull returns a pull record to fill, reused if one is kept.
func (e *engine) newPull() *pull {
	n := len(e.sparePulls)
	if n == 0 {
		return new(pull)
	}
	p := e.sparePulls[n-1]
	e.sparePulls = e.sparePulls[:n-1]
	return p
}

// keepPull keeps an ended pull and its slot lists; the target list is nil if its request
// took it. The record keeps its seq and stays ended, for the events still naming it; its
// other fields stay until it is filled again (see keepTransfer).
func (e *engine) keepPull(p *pull) {
	if e.noRecycle {
		return
	}
	e.keepSlots(p.srcSlots)
	e.keepSlots(p.dstSlots)
	p.srcSlots, p.dstSlots = nil, nil
	e.sparePulls = append(e.sparePulls, p)
}

// newTransfer returns a transfer record to fill, reused if one is kept.
func (e *engine) newTransfer() *transfer {
	n := len(e.spareTransfers)
	if n == 0 {
		return new(transfer)
	}
	tr := e.spareTransfers[n-1]
	e.spareTransfers = e.spareTransfers[:n-1]
	return tr
}

// keepTransfer keeps a finished transfer and its slot list. Its other fields are left as they
// are until it is filled again: clearing would cost write barriers while the collector marks,
// and what they name (a worker, a request) is no larger than the record.
func (e *engine) keepTransfer(tr *transfer) {
	if e.noRecycle {
		return
	}
	e.keepSlots(tr.slots)
	tr.slots = nil
	e.spareTransfers = append(e.spareTransfers, tr)
}

// newRequest returns a request record to fill, reused if one is kept; its block list is
// empty, with the room of its earlier use.
func (e *engine) newRequest() *request {
	n := len(e.spareRequests)
	if n == 0 {
		return new(request)
	}
	r := e.spareRequests[n-1]
	e.spareRequests = e.spareRequests[:n-1]
	return r
}

// keepRequest keeps a completed request that no report row names.
func (e *engine) keepRequest(r *request) {
	if e.noRecycle || e.s.Report.PerRequest {
		return
	}
	r.blocks = r.blocks[:0] // the rest is overwritten when it is filled again (see keepTransfer)
	e.spareRequests = append(e.spareRequests, r)
}
