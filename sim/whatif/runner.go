package whatif

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/sim"
)

// Run statuses an Outcome reports.
const (
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Outcome is what the planner and sweeps read from one run.
type Outcome struct {
	ScenarioID string       `json:"scenario_id"`
	RunID      string       `json:"run_id,omitempty"`
	Status     string       `json:"status"`
	Error      string       `json:"error,omitempty"`
	Digest     string       `json:"digest,omitempty"`
	Headline   []sim.Figure `json:"headline,omitempty"`
	// Workers is the report's per-worker rows; the planner reads it from its baseline run only.
	Workers []sim.WorkerRow `json:"-"`
	// Fleet is what a tune plan reads from a run with an autoscaler (zero before model 3).
	Fleet FleetFigures `json:"-"`
	// Reused is true when the run had been simulated before this request asked for it.
	Reused bool `json:"-"`
}

// FleetFigures are a run's fleet-size figures (docs/model.md#model-3): what an autoscaler setting costs.
type FleetFigures struct {
	GPUHours float64 `json:"gpu_hours"`
	// FleetChanges counts the autoscaler decisions that drained, cancelled, reactivated or
	// started a worker: how much the fleet churned.
	FleetChanges int   `json:"fleet_changes"`
	Migrated     int64 `json:"requests_migrated"`
	PeakWorkers  int   `json:"peak_workers"`
	// E2EMeanMS is the mean end-to-end latency of the completed requests (nil: none completed):
	// with the arrival rate it gives the requests in flight (Little's law), which a diagnose
	// plan's ideal fleet scales on (diagnose.go).
	E2EMeanMS *float64 `json:"e2e_mean_ms,omitempty"`
}

// FleetFiguresOf reads the fleet figures from a report (the runners of the command line and
// of the server both use it).
func FleetFiguresOf(rep *sim.Report) FleetFigures {
	f := FleetFigures{GPUHours: rep.Summary.GPUHours, Migrated: rep.Summary.Requests.Migrated, PeakWorkers: rep.Summary.Workers.Peak,
		E2EMeanMS: rep.Summary.E2EMS.Mean}
	if rep.Autoscaler != nil {
		for _, d := range rep.Autoscaler.Decisions {
			if len(d.Drained)+len(d.Cancelled)+len(d.Reactivated)+len(d.Started) > 0 {
				f.FleetChanges++
			}
		}
	}
	return f
}

// Runner simulates scenarios and returns their outcomes in the same order. A run that fails is
// an Outcome with status "failed", not an error; the error is for the runner itself failing (or
// ctx ending). Implementations may run the scenarios in parallel and reuse identical runs, and
// must allow concurrent calls from several goroutines sharing the same slots: the planner asks
// for independent runs as soon as it knows them (docs/planning.md, "Scheduling").
type Runner interface {
	Run(ctx context.Context, scenarios []*sim.Scenario) ([]Outcome, error)
}

// AheadRunner is a Runner that lets a plan start runs ahead of need (issue 35): it says how
// many runs it simulates at once, so a plan keeps that many in flight and no more, and it is
// told of each run the plan started ahead of need and then did not use, so its usage figures
// leave that run out. A capacity search on such a runner starts the probes of the rounds it
// may reach while a slot would otherwise idle (docs/planning.md, "Probes ahead of need");
// on any other runner it goes round by round. The command line's LocalRunner is one; the
// server's queue is not, so a plan there submits only the runs it uses.
type AheadRunner interface {
	Runner
	Slots() int
	// Unused says the caller started the run of this scenario ahead of need and will not
	// use it; the caller has cancelled its context.
	Unused(scenarioID string)
}

// LocalRunner simulates in this process, up to Parallel runs at once over all concurrent calls
// (0: one per CPU), and remembers every outcome by scenario id so an identical scenario is
// simulated once, even when two calls ask for it at the same time.
type LocalRunner struct {
	Parallel int
	Options  sim.RunOptions
	// Progress, if set, is called after each run with how many runs are done and how many have
	// been asked for so far, over every call (the total grows as a plan asks for more).
	Progress func(done, total int)

	mu       sync.Mutex
	memo     map[string]Outcome
	inflight map[string]*flight
	queue    []*flight // runs waiting for a slot, first asked first run
	busy     int       // slots taken
	done     int
	total    int
	// what Usage reports
	simulated int
	runTime   time.Duration
	// runs started ahead of need and not used (Unused), left out of simulated and runTime
	unused     map[string]bool          // in flight, flagged
	lastTook   map[string]time.Duration // the time of each scenario's last finished run
	wasted     int
	wastedTime time.Duration
}

// Usage says how many runs this runner has simulated and the wall time they took together
// (a slot's time in each); with the slot count and the wall time of the whole request it says
// how busy the slots were: runTime ÷ (slots × wall). Runs a plan started ahead of need and
// did not use (Unused) are left out; Wasted counts them.
func (l *LocalRunner) Usage() (simulated int, runTime time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.simulated, l.runTime
}

// Wasted says how many runs (or parts of runs, for those cancelled while simulating) were
// started ahead of need and not used, and the slot time they took.
func (l *LocalRunner) Wasted() (runs int, runTime time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wasted, l.wastedTime
}

// Unused implements AheadRunner: the run of this scenario, in flight or finished last, counts
// as wasted rather than used.
func (l *LocalRunner) Unused(scenarioID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.inflight[scenarioID]; ok {
		if l.unused == nil {
			l.unused = map[string]bool{}
		}
		l.unused[scenarioID] = true
		return
	}
	if took, ok := l.lastTook[scenarioID]; ok {
		delete(l.lastTook, scenarioID)
		l.simulated--
		l.runTime -= took
		l.wasted++
		l.wastedTime += took
	}
}

// Slots is the number of runs the runner simulates at once.
func (l *LocalRunner) Slots() int {
	if l.Parallel <= 0 {
		return runtime.NumCPU()
	}
	return l.Parallel
}

// flight is one run, queued or being simulated; every caller asking for the same scenario waits
// on it.
type flight struct {
	ctx   context.Context
	sc    *sim.Scenario
	id    string
	ended chan struct{}
	out   Outcome
}

// Run implements Runner: it starts every scenario (in order, so earlier ones take free slots
// first), then waits for each.
func (l *LocalRunner) Run(ctx context.Context, scenarios []*sim.Scenario) ([]Outcome, error) {
	ids := make([]string, len(scenarios))
	for i, sc := range scenarios {
		ids[i] = sc.ID()
	}
	return l.RunIDs(ctx, scenarios, ids)
}

// RunIDs is Run for scenarios whose ID() the caller has computed already (ids, in the same
// order): a planner knows its candidates' ids, and hashing a scenario of 20,000 scripted
// requests again costs a tenth of its run.
func (l *LocalRunner) RunIDs(ctx context.Context, scenarios []*sim.Scenario, ids []string) ([]Outcome, error) {
	flights := make([]*flight, len(scenarios))
	reused := make([]bool, len(scenarios))
	for i, sc := range scenarios {
		flights[i], reused[i] = l.start(ctx, sc, ids[i])
	}
	out := make([]Outcome, len(scenarios))
	for i, f := range flights {
		for {
			select {
			case <-f.ended:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			// A run cancelled by another caller's context is asked for again by this one.
			if f.out.Status != StatusCancelled || ctx.Err() != nil {
				break
			}
			var again bool
			f, again = l.start(ctx, scenarios[i], ids[i])
			reused[i] = reused[i] && again
		}
		out[i] = f.out
		out[i].Reused = reused[i]
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// start returns the flight of the scenario, queueing it unless it is remembered or already
// queued or running. reused says whether another request asked for it first.
func (l *LocalRunner) start(ctx context.Context, sc *sim.Scenario, id string) (*flight, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.memo == nil {
		l.memo, l.inflight = map[string]Outcome{}, map[string]*flight{}
	}
	if o, ok := l.memo[id]; ok {
		f := &flight{ended: make(chan struct{}), out: o}
		close(f.ended)
		return f, true
	}
	if f, ok := l.inflight[id]; ok {
		return f, true
	}
	f := &flight{ctx: ctx, sc: sc, id: id, ended: make(chan struct{})}
	l.inflight[id] = f
	l.queue = append(l.queue, f)
	l.total++
	if l.busy < l.Slots() {
		l.busy++
		go l.work()
	}
	return f, false
}

// work takes queued runs in order until the queue is empty, then frees its slot.
func (l *LocalRunner) work() {
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.busy--
			l.mu.Unlock()
			return
		}
		f := l.queue[0]
		l.queue = l.queue[1:]
		l.mu.Unlock()

		var took time.Duration
		if f.ctx.Err() != nil {
			f.out = Outcome{ScenarioID: f.id, RunID: f.id, Status: StatusCancelled, Error: "cancelled"}
		} else {
			start := time.Now()
			f.out = runOne(f.ctx, f.sc, f.id, l.Options)
			took = time.Since(start)
		}
		l.mu.Lock()
		switch {
		case took > 0 && l.unused[f.id]:
			l.wasted++
			l.wastedTime += took
		case took > 0:
			l.simulated++
			l.runTime += took
			if l.lastTook == nil {
				l.lastTook = map[string]time.Duration{}
			}
			l.lastTook[f.id] = took
		}
		delete(l.unused, f.id)
		delete(l.inflight, f.id)
		if f.out.Status == StatusDone {
			l.memo[f.id] = f.out
		}
		l.done++
		if l.Progress != nil {
			l.Progress(l.done, l.total)
		}
		l.mu.Unlock()
		close(f.ended)
	}
}

// runOne simulates sc, whose ID() is id.
func runOne(ctx context.Context, sc *sim.Scenario, id string, opt sim.RunOptions) Outcome {
	o := Outcome{ScenarioID: id, RunID: id}
	opt.ScenarioID = id
	rep, err := sim.Run(ctx, sc, opt)
	switch {
	case errors.Is(err, context.Canceled):
		o.Status, o.Error = StatusCancelled, "cancelled"
	case err != nil:
		o.Status, o.Error = StatusFailed, fmt.Sprintf("the run failed: %v", err)
	default:
		o.Status, o.Digest, o.Headline, o.Workers = StatusDone, rep.Digest, StoredHeadline(rep), rep.Workers
		o.Fleet = FleetFiguresOf(rep)
	}
	return o
}

// figure returns the value of the headline figure with this key, or nil.
func figure(h []sim.Figure, key string) *float64 {
	for _, f := range h {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// StoredHeadline is the headline a run keeps for sweeps and plans: sim.Headline, and for a run
// with an autoscaler its fleet figures too (GPU-hours, peak and final workers, migrations), so
// a sweep over autoscaler settings can chart GPU-hours; for a run with an slo its attainment.
func StoredHeadline(rep *sim.Report) []sim.Figure {
	figs := sim.Headline(rep)
	if rep.Autoscaler != nil {
		figs = append(figs, sim.AutoscalerFigures(rep)...)
	}
	if rep.Summary.SLO != nil {
		figs = append(figs, sim.SLOFigures(rep)...)
	}
	return figs
}
