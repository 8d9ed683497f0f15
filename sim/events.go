package sim

const (
	evTransfer  uint8 = iota // H2D or D2H completion
	evPullStart              // a pull's latency ends
	evPullLand               // a pull's last byte arrives
	evPass                   // a pass ends
	evGrace                  // a grace deadline
	evLease                  // a handoff's fixed lease ends (model 5; seq is the handoff's)
	evFixed                  // a prefill worker's fixed drain deadline (model 5)
	evPassCheck              // a checkpoint of a stretch whose later pass ends are not computed yet (pass.go)
)

// event is a timed item in one of the engine's heaps; stale items are skipped when popped.
type event struct {
	t    int64
	seq  int64
	kind uint8
	ver  uint32
	w    *worker
	tr   *transfer
	p    *pull
}

// eventHeap is a binary min-heap by (t, seq).
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = event{}
	s = s[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// stale reports whether an event no longer applies.
func (e *event) stale() bool {
	switch e.kind {
	case evTransfer:
		return e.tr.cancelled
	case evPullStart: // a pull record is reused with a new seq (recycle.go)
		return e.p.ended || e.p.seq != e.seq
	case evPullLand:
		return e.p.ended || e.p.seq != e.seq || !e.p.moving || e.p.ver != e.ver
	case evGrace:
		return e.w.state != StateDraining || e.ver != e.w.graceVer
	}
	return false
}

// top drops stale items and returns the earliest time, if any.
func (h *eventHeap) top() (int64, bool) {
	for len(*h) > 0 {
		if (*h)[0].stale() {
			h.pop()
			continue
		}
		return (*h)[0].t, true
	}
	return 0, false
}
