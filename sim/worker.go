package sim

import "github.com/scalein-planner/scalein/sim/internal/kvcache"

// worker is one serving instance.
type worker struct {
	id      int32 // the report's id: never reused, in start order
	slot    int32 // where the engine's per-worker tables and the block index hold it (workerslots.go)
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
	// A stretch's pass ends computed so far (schedulePass): ends[i] is the end of its pass i+1,
	// endAt how many of them settle has passed, endsK the K of the last one computed.
	ends      []int64
	endAt     int
	endsK     int
	continued bool // the pass in flight continues a stretch: no scan started it
	loadDirty bool // its routing key may be stale (routeloads.go)

	h2dFree, d2hFree int64
	ownTransfers     int
	transfers        []*transfer // own transfers in flight
	moving           []*pull     // pulls from this worker whose bytes are moving
	outPulls         []*pull     // pulls from this worker, staged and not ended

	markedAt, removedAt, graceAt, lastWork int64
	hasGrace, forced, dirty, hadWork       bool
	// Model 3 (docs/model.md#model-3): a started worker's instants (-1 for the initial fleet, and
	// activeAt -1 until it becomes active), how often it was made active again, whether it was
	// ever marked draining, and the version of its grace deadline (a reactivation cancels it).
	startedAt, activeAt        int64
	reactivations              int64
	everMarked                 bool
	graceVer                   uint32
	completed, killed          int64
	pullsServed, pullsReceived int64

	// Model 5 (pools.go): the worker's role and its pool's values (the fleet's when aggregated),
	// a decode worker's requests that hold blocks there (pulling, landed, recomputing; by
	// admission), and a prefill worker's holds.
	role uint8
	f    *Fleet
	held queue
	ph   *prefillHolds
}
