package sim

// The request: its states, its hint outcome, and the queues it waits in (docs/model.md#passes, #precise-rules).

type reqState uint8

const (
	rsWaiting reqState = iota
	rsLoading
	rsPulling
	rsRunning
	rsCompleted
	rsKilled
	rsFailed // model 5: its handoff failed (docs/model.md#model-5)
)

// outcome codes for a request's hint; -1 is null.
const (
	ocNone int8 = iota - 1
	ocSuccess
	ocPartial
	ocMiss
	ocNotNeeded
	ocRejectedDraining
	ocRejectedRemoved
	ocAborted
)

var outcomeNames = [...]string{OutcomeSuccess, OutcomePartial, OutcomeMiss, OutcomeNotNeeded,
	OutcomeRejectedDraining, OutcomeRejectedRemoved, OutcomeAborted}

// request is one request inside the engine.
type request struct {
	// Read in every pass of its worker: kept together in the first 64 bytes (a request is
	// visited once per pass, and with thousands of workers each visit is a cache miss per line).
	blocks     []int32 // G1 slots by block position
	firstToken int64   // -1 until the first token
	computed   int32   // tokens computed of target
	target     int32   // tokens to compute: prompt + tokens emitted before this admission
	emitted    int32
	prompt     int32 // arrival.promptTokens
	output     int32 // arrival.outputTokens
	passTokens int32
	passEmit   bool

	arrival
	idx   int64
	reuse int // F: the reusable prefix limit (docs/model.md#precise-rules)
	w     *worker
	state reqState

	hint       int32 // hinted source worker, -1 for none
	hintLooked bool
	outcome    int8
	pull       *pull
	landed     []int32 // this worker's G2 slots that a landed pull pinned for it
	pullLo     int     // block positions [pullLo, pullHi) arrived by its own pull
	pullHi     int

	admitted bool
	firstAdm int64 // admission sequence of the first admission (queue order after preemption)
	admSeq   int64
	restore  []int32 // G2 slots pinned by an H2D restore in flight
	restLo   int     // first block position restored

	done        int64
	preemptions int
	migrations  int
	g1, g2, kv  int // tokens reused at first admission
	pending     int // pending prefill blocks added to its worker at routing

	// Model 5 (handoff.go): its last handoff (outstanding while not ended), and whether this
	// pass completes its context on a prefill worker.
	ho          *handoff
	passHandoff bool

	prev, next *request // waiting queue links
	queued     bool
	preempted  bool // queued in the preempted segment
}

// queue is an intrusive doubly linked list of waiting requests.
type queue struct{ head, tail *request }

func (q *queue) pushBack(r *request) {
	r.prev, r.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = r
	} else {
		q.head = r
	}
	q.tail = r
	r.queued = true
}

// insertBefore puts r before at (at == nil: at the back).
func (q *queue) insertBefore(r, at *request) {
	if at == nil {
		q.pushBack(r)
		return
	}
	r.next, r.prev = at, at.prev
	if at.prev != nil {
		at.prev.next = r
	} else {
		q.head = r
	}
	at.prev = r
	r.queued = true
}

func (q *queue) remove(r *request) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		q.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		q.tail = r.prev
	}
	r.prev, r.next, r.queued = nil, nil, false
}
