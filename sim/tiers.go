package sim

// The G1↔G2 lanes of one worker (docs/model.md#host-cache, #precise-rules): H2D restores and D2H write-through,
// each lane a FIFO of transfers.

const (
	trH2D uint8 = iota
	trD2H
)

// transfer is one H2D or D2H lane transfer.
type transfer struct {
	kind      uint8
	seq       int64
	w         *worker
	end       int64
	r         *request // H2D: the restoring request
	slots     []int32  // D2H: pending G2 slots
	cancelled bool
}

// queueTransfer puts a transfer on the worker's FIFO lane.
func (e *engine) queueTransfer(w *worker, tr *transfer, bytes int64) {
	var gbps float64
	var free *int64
	if tr.kind == trH2D {
		gbps, free = w.f.H2DGBps, &w.h2dFree
	} else {
		gbps, free = w.f.D2HGBps, &w.d2hFree
	}
	start := max(e.now, *free)
	var dur int64
	if gbps > 0 {
		dur = transferNS(float64(bytes), gbps)
	}
	tr.end = addNS(start, dur)
	*free = tr.end
	tr.seq = e.seq
	e.seq++
	w.ownTransfers++
	w.transfers = append(w.transfers, tr)
	e.transfers.push(event{t: tr.end, seq: tr.seq, kind: evTransfer, tr: tr})
}

func (e *engine) dropTransfer(w *worker, tr *transfer) {
	w.ownTransfers--
	for i, x := range w.transfers {
		if x == tr {
			w.transfers = append(w.transfers[:i], w.transfers[i+1:]...)
			break
		}
	}
}

// finishH2D completes a restore: the restored blocks are keyed in G1, the pins released, and
// the request runs from the next pass.
func (e *engine) finishH2D(tr *transfer) {
	w, r := tr.w, tr.r
	e.dropTransfer(w, tr)
	e.touch(w)
	bs := e.s.Fleet.BlockSize
	for i := range r.restore {
		p := r.restLo + i
		w.g1.Key(r.blocks[p], r.keys[p], p)
	}
	unpinAll(w.g2, r.restore, e.now)
	r.computed = int32((r.restLo + len(r.restore)) * bs)
	e.keepSlots(r.restore)
	r.restore = nil
	e.keepTransfer(tr)
	w.loading--
	e.setState(r, rsRunning)
	// Insert by admission sequence.
	i := len(w.running)
	for i > 0 && w.running[i-1].admSeq > r.admSeq {
		i--
	}
	w.running = append(w.running, nil)
	copy(w.running[i+1:], w.running[i:])
	w.running[i] = r
	e.markDirty(w)
}

// finishD2H completes a write-through: the entries become resident.
func (e *engine) finishD2H(tr *transfer) {
	w := tr.w
	e.dropTransfer(w, tr)
	e.touch(w)
	w.g2.PrefetchSlots(tr.slots)
	for i := len(tr.slots) - 1; i >= 0; i-- {
		w.g2.MakeResident(tr.slots[i], e.now)
	}
	e.keepTransfer(tr)
	e.markDirty(w)
}
