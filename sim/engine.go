package sim

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

func byWorkerID(a, b *worker) int { return cmp.Compare(a.id, b.id) }

// Default run limits.
const (
	DefaultMaxEvents    = 4_000_000_000
	DefaultMaxVirtualMS = 30 * 24 * 3600 * 1000.0 // 30 days
)

type engine struct {
	s   *Scenario
	opt RunOptions
	now int64
	ws  []*worker // by slot (workerslots.go): a removed worker stays until its slot is taken again
	gen workerSlots
	// index is the fleet's block index; g1x and g2x are its views of each tier's holders.
	index    *kvcache.Index
	g1x, g2x *kvcache.Holders
	src      source

	nextIdx int64
	seq     int64 // one global sequence for transfers and pulls (docs/model.md#precise-rules)
	admSeq  int64
	rr      int

	transfers eventHeap
	passes    eventHeap
	graces    eventHeap
	actions   []int // indexes into s.ScaleIn, by (at, index)
	nextAct   int
	actRows   []ScaleInRow

	draining   []*worker // by id
	dirty      []*worker
	dirtySpare []*worker
	passVer    []uint32 // per worker: version of its pass in flight; a stale event differs

	blockBytes int64
	latencyNS  int64
	pullGBps   float64 // kvcr.bandwidth_gbps, or with pools transfer.bandwidth_gbps
	guard      bool
	hints      bool

	// gauges
	active, drainingN, startingN int64
	waitingN, running            int64

	// results
	kv          KVCRCounts
	tokens      TokenCounts
	preemptions int64
	total       int64
	completedN  int64
	killedN     int64
	migratedN   int64
	ttft        []int64
	ttftAt      []int64
	e2e         []int64
	rows        []*request
	lastChange  int64
	events      int64
	ts          *seriesRecorder
	slo         *sloTracker // nil without an slo
	instChanged bool
	inst        instantCounters

	scratch routeScratch
	loads   routeLoads
	// scanRoutes (tests) routes by scanning every active worker, as before the routing structure.
	scanRoutes bool
	// per-worker load the kv_aware router reads for every active worker, kept contiguous
	pendPrefill []int64 // pending prefill blocks (docs/model.md#precise-rules Routing details)
	usedBlocks  []int32 // distinct G1 blocks held by the worker's requests
	activeIDs   []int32 // the slots of the active workers, by id

	// reusable buffers of the steps
	bufLands, bufH2D, bufD2H, bufStarts []event
	bufDue, bufReshare                  []*worker
	// records and slot lists kept for reuse (recycle.go)
	spareRequests  []*request
	sparePulls     []*pull
	spareTransfers []*transfer
	spareSlots     [][]int32
	// noRecycle (tests) allocates every record and slot list afresh, as before recycle.go.
	noRecycle bool

	// perPass (tests) simulates every pass with an event of its own, as before stretches.
	perPass bool
	// startsAt is the last instant whose step 4 (pass starts) has begun.
	startsAt int64

	// as is the autoscaler (nil without one); fail stops the run with an error.
	as          *scaler
	pd          *pdState // model 5's pools (pools.go); nil when aggregated
	fail        error
	peakWorkers int

	// afterInstant, when set (tests), is called after every instant.
	afterInstant func()
	// onRoute, when set (tests), is called after each kv_aware overlap walk and hint choice.
	onRoute func(r *request, target *worker, hint int32)
}

// instantCounters accumulates the time-series counters of the current instant.
type instantCounters struct {
	staged, landed, rejected, completed, migrated int64
	hoLanded, hoFailed                            int64 // model 5: handoffs landed and failed
}

func (e *engine) changed() {
	e.instChanged = true
	e.lastChange = e.now
}

// Run simulates the scenario and returns its report. Cancelling ctx stops it promptly with
// ctx.Err().
func Run(ctx context.Context, s *Scenario, opt RunOptions) (*Report, error) {
	start := time.Now()
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	if opt.MaxVirtualMS <= 0 {
		opt.MaxVirtualMS = DefaultMaxVirtualMS
	}
	e, err := newEngine(s, opt)
	if err != nil {
		return nil, err
	}
	if ss, ok := e.src.(*sessionSource); ok && ss.feed != nil {
		defer ss.feed.close()
	}
	if err := e.loop(ctx); err != nil {
		return nil, err
	}
	rep := e.report()
	rep.Sim = &SimStats{Events: e.events, WallMS: float64(time.Since(start).Microseconds()) / 1000}
	if opt.Progress != nil {
		opt.Progress(1)
	}
	return rep, nil
}

func newEngine(s *Scenario, opt RunOptions) (*engine, error) {
	n0 := s.InitialWorkers()
	idx := kvcache.NewIndex(n0)
	e := &engine{s: s, opt: opt, index: idx, g1x: idx.Holders(kvcache.G1), g2x: idx.Holders(kvcache.G2)}
	f := s.Fleet
	f.Workers = n0
	if f.Workers < 1 || f.BlockSize < 1 || f.GPUBlocks < 1 || f.MaxNumSeqs < 1 || f.MaxBatchedTokens < f.MaxNumSeqs {
		return nil, fmt.Errorf("sim: scenario is not validated (fleet %+v); use sim.Parse", f)
	}
	e.blockBytes = int64(f.BlockSize) * f.BytesPerToken
	e.latencyNS = msToNS(s.KVCR.LatencyMS)
	e.pullGBps = s.KVCR.BandwidthGBps
	e.guard = s.KVCR.RejectDrainingSources
	e.hints = s.KVCR.Enabled && s.Router.Hints && f.HostBlocks > 0
	e.startsAt = -1
	e.pendPrefill = make([]int64, f.Workers)
	e.passVer = make([]uint32, f.Workers)
	e.usedBlocks = make([]int32, f.Workers)
	e.peakWorkers = f.Workers
	if s.Autoscaler != nil {
		e.as = newScaler(s.Autoscaler)
		// Room for the workers it may start before the counts array must move.
		e.usedBlocks = make([]int32, f.Workers, max(f.Workers, s.Autoscaler.MaxWorkers)+8)
	}
	if s.Disaggregation != nil {
		e.initPools()
	} else {
		for i := 0; i < f.Workers; i++ {
			e.activeIDs = append(e.activeIDs, int32(i))
			w := &worker{id: int32(i), slot: int32(i), state: StateActive, startedAt: -1, activeAt: -1, f: &s.Fleet,
				g1: kvcache.NewGPU(f.GPUBlocks, int32(i), idx, &e.usedBlocks[i])}
			if f.HostBlocks > 0 {
				w.g2 = kvcache.NewHost(f.HostBlocks, int32(i), idx)
			}
			e.ws = append(e.ws, w)
		}
	}
	e.active = int64(f.Workers)
	e.gen.initial(f.Workers)
	e.loads = newRouteLoads(s)
	for _, w := range e.ws {
		e.noteLoad(w)
	}
	switch s.Workload.Type {
	case WorkloadRequests:
		e.src = newScriptedSource(s)
	case WorkloadSessions:
		if s.Workload.Sessions == nil {
			return nil, fmt.Errorf("sim: sessions workload without its settings; use sim.Parse")
		}
		ss := newSessionSource(s)
		if opt.SpareCore {
			ss.startFeed()
		}
		e.src = ss
	case WorkloadTrace:
		rows, err := s.loadTrace(opt.Traces)
		if err != nil {
			return nil, err
		}
		e.src = newTraceSource(s, rows)
	default:
		return nil, fmt.Errorf("sim: unknown workload type %q", s.Workload.Type)
	}
	e.reserveResults()
	if e.as != nil && s.Autoscaler.Metric == MetricOfferedRate {
		e.as.offered = newOfferedRate(s, e.src, s.Autoscaler.IntervalMS)
	}
	if e.pd != nil {
		for _, c := range e.pd.scalers {
			a := s.PoolAutoscalers.Prefill
			if c.role == roleDecode {
				a = s.PoolAutoscalers.Decode
			}
			if a.Metric == MetricOfferedRate {
				c.offered = newOfferedRate(s, e.src, a.IntervalMS)
			}
		}
	}
	for i := range s.ScaleIn {
		e.actions = append(e.actions, i)
		e.actRows = append(e.actRows, ScaleInRow{AtMS: nsToMS(msToNS(s.ScaleIn[i].AtMS)), Drained: []int{}, Skipped: []int{}})
	}
	sort.SliceStable(e.actions, func(a, b int) bool {
		return msToNS(s.ScaleIn[e.actions[a]].AtMS) < msToNS(s.ScaleIn[e.actions[b]].AtMS)
	})
	e.ts = newSeriesRecorder(int64(f.Workers))
	if e.pd != nil {
		e.ts.initial.pd = e.pd.gauges()
		e.ts.pd = true
	}
	e.slo = newSLOTracker(s.SLO)
	return e, nil
}

// passTop drops discarded passes and returns the earliest pass end, if any.
func (e *engine) passTop() (int64, bool) {
	for len(e.passes) > 0 {
		if ev := &e.passes[0]; e.passVer[ev.seq] != ev.ver {
			e.passes.pop()
			continue
		} else if ev.kind == evPassCheck {
			e.extendStretch(e.passes.pop().w)
			continue
		}
		return e.passes[0].t, true
	}
	return 0, false
}

// nextInstant is the earliest pending event time.
func (e *engine) nextInstant() (int64, bool) {
	t, ok := int64(math.MaxInt64), false
	consider := func(v int64, has bool) {
		if has && v < t {
			t, ok = v, true
		}
	}
	consider(e.transfers.top())
	consider(e.passTop())
	consider(e.graces.top())
	consider(e.src.peek())
	if e.nextAct < len(e.actions) {
		consider(msToNS(e.s.ScaleIn[e.actions[e.nextAct]].AtMS), true)
	}
	if e.as != nil {
		consider(e.as.next())
	}
	if e.pd != nil {
		consider(e.pd.timers.top())
		for _, c := range e.pd.scalers {
			consider(c.next())
		}
	}
	return t, ok
}

// yieldEvery is how much work a simulation does before it yields its processor to the other
// goroutines of its process (runtime.Gosched). A server that simulates in process at its own
// priority (serve -sim-nice 0) has one Go processor per core, and a run holds one for as long
// as it runs: without a yield, a request whose goroutine is ready waits until the runtime
// preempts the run, up to 10 ms, at every step that gives up its processor (each database
// call), and two runs on two cores make every page wait so (the soak test of issue 29). A yield
// costs well under a microsecond when nothing waits (0.02-0.03 % of the benchmarks' time,
// docs/performance.md, "Soak"); the results do not depend on it.
const yieldEvery = time.Millisecond

func (e *engine) loop(ctx context.Context) error {
	maxNS := msToNS(e.opt.MaxVirtualMS)
	lastProgress := time.Now()
	lastYield := lastProgress
	for iter := 0; ; iter++ {
		t, ok := e.nextInstant()
		if !ok {
			break
		}
		if t > maxNS {
			return fmt.Errorf("%w: virtual time passed %.0f ms; shorten the workload or raise the limit", ErrLimit, e.opt.MaxVirtualMS)
		}
		e.now = t
		e.instant()
		if e.fail != nil {
			return e.fail
		}
		// About every yieldEvery of work the simulation lets the other goroutines of its process
		// run (yieldEvery's comment says why); the clock is read every 64 instants, each a few
		// microseconds.
		if iter&63 == 0 && !e.opt.OwnThread {
			if now := time.Now(); now.Sub(lastYield) >= yieldEvery {
				runtime.Gosched()
				lastYield = now
			}
		}
		if iter&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if e.events > e.opt.MaxEvents {
				return fmt.Errorf("%w: more than %d events; shrink the workload or the fleet", ErrLimit, e.opt.MaxEvents)
			}
			if e.opt.Progress != nil && time.Since(lastProgress) > 250*time.Millisecond {
				lastProgress = time.Now()
				if tot := e.src.total(); tot > 0 {
					e.opt.Progress(math.Min(0.99, float64(e.completedN+e.killedN)/float64(tot)))
				}
			}
		}
	}
	if n := e.total - e.completedN - e.killedN - e.failedN(); n > 0 {
		return fmt.Errorf("sim: internal error: %d requests neither completed, killed nor failed at %v ms", n, nsToMS(e.now))
	}
	return nil
}

// instant processes everything at e.now in the order of docs/model.md#one-instant, repeating until nothing
// changes.
func (e *engine) instant() {
	e.instChanged = false
	// A step with nothing due changes nothing: testing the transfer and pass queues and the
	// draining list here saves those steps' calls (an instant runs every step at least twice,
	// the second time mostly for nothing).
	for {
		c := false
		if e.pd != nil || len(e.transfers) > 0 && e.transfers[0].t <= e.now {
			c = e.stepTransfers()
		}
		if len(e.passes) > 0 && e.passes[0].t <= e.now {
			c = e.stepPasses() || c
		}
		if e.as != nil {
			c = e.stepActivations() || c
		} else if e.pd != nil && len(e.pd.scalers) > 0 {
			c = e.stepActivationsPD() || c
		}
		c = e.stepArrivals() || c
		c = e.stepPassStarts() || c
		if len(e.draining) > 0 {
			c = e.stepRemovals() || c
		}
		c = e.stepScaleIn() || c
		if !c {
			break
		}
	}
	if e.as != nil {
		e.stopCheck()
	} else if e.pd != nil {
		e.stopCheckPD()
	}
	if e.afterInstant != nil {
		e.afterInstant()
	}
	if e.instChanged {
		g := gauges{active: e.active, draining: e.drainingN, waiting: e.waitingN, running: e.running, starting: e.startingN}
		if e.pd != nil {
			g.pd = e.pd.gauges()
		}
		e.ts.record(e.now, g, e.inst)
		e.inst = instantCounters{}
	}
}

func (e *engine) markDirty(w *worker) {
	e.noteLoad(w)
	if !w.dirty {
		w.dirty = true
		e.dirty = append(e.dirty, w)
	}
}

// touch records that the worker has work at this instant (for pin_wait_ms).
func (e *engine) touch(w *worker) {
	w.lastWork = e.now
	w.hadWork = true
}

// stepTransfers is step 1: pull landings, H2D, D2H (each in queue order), then pulls whose
// latency ends start moving; sources whose set of moving pulls changed recompute shares once.
func (e *engine) stepTransfers() bool {
	if len(e.transfers) == 0 || e.transfers[0].t > e.now {
		return e.pd != nil && e.expireLeases()
	}
	lands, h2d, d2h, starts := e.bufLands[:0], e.bufH2D[:0], e.bufD2H[:0], e.bufStarts[:0]
	defer func() { e.bufLands, e.bufH2D, e.bufD2H, e.bufStarts = lands, h2d, d2h, starts }()
	for len(e.transfers) > 0 && e.transfers[0].t <= e.now {
		ev := e.transfers.pop()
		if ev.stale() {
			continue
		}
		switch {
		case ev.kind == evPullLand:
			lands = append(lands, ev)
		case ev.kind == evPullStart:
			starts = append(starts, ev)
		case ev.tr.kind == trH2D:
			h2d = append(h2d, ev)
		default:
			d2h = append(d2h, ev)
		}
	}
	if len(lands)+len(h2d)+len(d2h)+len(starts) == 0 {
		return e.pd != nil && e.expireLeases()
	}
	bySeq := func(s []event) {
		if len(s) > 1 {
			slices.SortFunc(s, func(a, b event) int { return cmp.Compare(a.seq, b.seq) })
		}
	}
	bySeq(lands)
	bySeq(h2d)
	bySeq(d2h)
	bySeq(starts)
	reshare := e.bufReshare[:0]
	defer func() { e.bufReshare = reshare }()
	for _, ev := range lands {
		src := ev.p.src // land keeps the record for reuse
		if ev.p.handoff {
			e.landHandoff(ev.p)
		} else {
			e.land(ev.p)
		}
		reshare = append(reshare, src)
	}
	for _, ev := range h2d {
		e.finishH2D(ev.tr)
	}
	for _, ev := range d2h {
		e.finishD2H(ev.tr)
	}
	if e.pd != nil {
		e.expireLeases()
	}
	for _, ev := range starts {
		p := ev.p
		p.moving = true
		p.tLast = e.now
		p.remaining = p.bytes
		p.src.moving = append(p.src.moving, p)
		reshare = append(reshare, p.src)
	}
	for _, w := range reshare {
		e.reshare(w)
	}
	e.events += int64(len(lands) + len(h2d) + len(d2h) + len(starts))
	e.changed()
	return true
}

// stepPasses is step 2: pass completions by worker id.
func (e *engine) stepPasses() bool {
	if len(e.passes) == 0 || e.passes[0].t > e.now {
		return false
	}
	due := e.bufDue[:0]
	defer func() { e.bufDue = due }()
	for len(e.passes) > 0 && e.passes[0].t <= e.now {
		ev := e.passes.pop()
		if e.passVer[ev.seq] != ev.ver {
			continue
		}
		if ev.kind == evPassCheck { // not an end: the stretch goes on (pass.go)
			e.extendStretch(ev.w)
			continue
		}
		due = append(due, ev.w)
	}
	if len(due) == 0 {
		return false
	}
	slices.SortFunc(due, byWorkerID)
	for _, w := range due {
		e.endPass(w)
	}
	if e.pd != nil {
		e.endStepPasses()
	}
	e.events += int64(len(due))
	e.changed()
	return true
}

// stepArrivals is step 3: arrivals in input order, routed at arrival.
func (e *engine) stepArrivals() bool {
	any := false
	for {
		t, ok := e.src.peek()
		if !ok || t > e.now {
			break
		}
		e.arrive(e.src.pop())
		any = true
	}
	if any {
		e.changed()
	}
	return any
}

// stepPassStarts is step 4: the scan on every idle active or draining worker, by id. Only
// workers whose state changed since their last scan can get a different result.
func (e *engine) stepPassStarts() bool {
	e.startsAt = e.now
	if len(e.dirty) == 0 {
		return false
	}
	ws := e.dirty
	e.dirty = e.dirtySpare[:0]
	defer func() { e.dirtySpare = ws[:0] }()
	slices.SortFunc(ws, byWorkerID)
	changed := false
	for _, w := range ws {
		w.dirty = false
		if w.busy || w.state == StateRemoved {
			continue
		}
		if e.startPass(w) {
			changed = true
		}
	}
	if changed {
		e.changed()
	}
	return changed
}

func (e *engine) setState(r *request, s reqState) {
	waitingLike := func(s reqState) bool { return s == rsWaiting || s == rsLoading || s == rsPulling }
	if waitingLike(r.state) {
		e.waitingN--
	} else if r.state == rsRunning {
		e.running--
	}
	if waitingLike(s) {
		e.waitingN++
	} else if s == rsRunning {
		e.running++
	}
	r.state = s
}
