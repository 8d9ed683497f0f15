package sim

import "github.com/scalein-planner/scalein/sim/internal/kvcache"

type reqState uint8

const (
	rsWaiting reqState = iota
	rsLoading
	rsPulling
	rsRunning
	rsCompleted
	rsKilled
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
	reuse int // F: the reusable prefix limit (SPEC §3.14)
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

// worker is one serving instance.
type worker struct {
	id      int32
	state   string
	g1      *kvcache.GPU
	g2      *kvcache.Host // nil without a host cache
	pre     queue         // preempted requests, by first admission
	fresh   queue         // other waiting requests, by arrival
	running []*request    // by admission sequence
	loading int
	nReq    int // waiting, loading, pulling or running here

	busy  bool
	batch []*request
	// The pass in flight (pass.go): its bounds and K, and for a stretch of decode passes the
	// passes still to come after it without an event of their own.
	passStart, passEnd int64
	passK              int
	stretchLeft        int
	continued          bool // the pass in flight continues a stretch: no scan started it
	loadDirty          bool // its routing key may be stale (routeloads.go)

	h2dFree, d2hFree int64
	ownTransfers     int
	transfers        []*transfer // own transfers in flight
	moving           []*pull     // pulls from this worker whose bytes are moving
	outPulls         []*pull     // pulls from this worker, staged and not ended

	markedAt, removedAt, graceAt, lastWork int64
	hasGrace, forced, dirty, hadWork       bool
	// Model 3 (SPEC §3.15): a started worker's instants (-1 for the initial fleet, and
	// activeAt -1 until it becomes active), how often it was made active again, whether it was
	// ever marked draining, and the version of its grace deadline (a reactivation cancels it).
	startedAt, activeAt        int64
	reactivations              int64
	everMarked                 bool
	graceVer                   uint32
	completed, killed          int64
	pullsServed, pullsReceived int64
}

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
