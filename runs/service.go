package runs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// Config is everything New needs. Zero values take the documented defaults.
type Config struct {
	Store  *store.Store
	Logger *slog.Logger
	// Workers is how many runs this process executes at once (default runtime.NumCPU()).
	Workers int
	// NoWorkers makes the process serve without working runs (serve -workers 0): worker
	// processes on the same PostgreSQL database work them.
	NoWorkers bool
	// QueueSize bounds the runs waiting for a worker (default 64); past it, submissions get
	// ErrQueueFull.
	QueueSize int
	// RescueAfter is how long a run may stay running before its worker is presumed dead and the
	// run is given to another worker (River's RescueStuckJobsAfter). It must exceed RunTimeout,
	// so a live worker's run is never taken from under it (default RunTimeout + 5 minutes).
	RescueAfter time.Duration
	// WorkerName identifies this process in the runs it works (default "host:pid").
	WorkerName string
	// MaxEvents and MaxVirtualMS are passed to every sim.Run (0 = the simulator's defaults).
	MaxEvents    int64
	MaxVirtualMS float64
	// RunTimeout is a run's wall-time limit (default 10 minutes).
	RunTimeout time.Duration
	// MaxSweepPoints bounds a sweep (default 256); MaxPlanRuns bounds a plan's runs (default 64).
	MaxSweepPoints int
	MaxPlanRuns    int
	// MaxRunMemory is the per-run memory budget: a scenario whose estimate exceeds it is refused
	// at submit time, and a run during which the heap grows past it is stopped. MaxTotalMemory
	// bounds the estimates of the runs this process runs at once. Defaults: DefaultMemoryBudgets.
	MaxRunMemory, MaxTotalMemory int64
	// MaxAttempts is how many times a run is started in all; a run still unfinished after that
	// many starts (its process died each time) is failed (default DefaultMaxAttempts).
	MaxAttempts int
	// DriveRescan is how often a process on PostgreSQL looks for sweeps and plans that no
	// process drives (their driver died) and checks it still holds its leases (default 5 s).
	DriveRescan time.Duration
	// QuotaQueuedRuns bounds the runs one user may have queued or running (-quota-queued-runs;
	// 0: no quota). A plan driven here submits its candidates within its owner's remaining quota
	// and waits for room, as it waits for room in the queue (plan_driver.go).
	QuotaQueuedRuns int
	// Simulate is the simulator as the queue sees it (default sim.Run); tests pass a fake that
	// blocks, to hold runs running.
	Simulate RunFunc
	// SimNice is how many nice levels below the process's the threads that simulate runs and
	// encode their reports run (Linux; -sim-nice, default DefaultSimNice there; 0 leaves
	// them at the process's priority). See nice.go. A process that sets it should give the Go
	// runtime a processor to spare per concurrent run (cmd/scalein raises GOMAXPROCS): a run
	// then keeps its processor without yielding it (sim.RunOptions.OwnThread).
	SimNice int
}

const (
	defaultQueueSize    = 64
	defaultRunTimeout   = 10 * time.Minute
	defaultRescueMargin = 5 * time.Minute
	// minRescueMargin is how much longer than a run's wall-time limit RescueAfter must be: longer
	// than a job may last (the wait for memory, the run, the slack; queue.go) by one more slack.
	minRescueMargin = budgetWait + 2*jobTimeoutSlack
)

// RunFunc is the simulator as the queue sees it.
type RunFunc func(ctx context.Context, s *sim.Scenario, opt sim.RunOptions) (*sim.Report, error)

// Service turns scenarios into queued runs and runs into reports, feeds sweeps and drives
// plans (doc.go). The web server and the worker process each hold one.
type Service struct {
	cfg   Config
	stats simStats // what this process simulated (stats.go)
	log   *slog.Logger
	store *store.Store
	live  *liveRuns
	jobs  *jobQueue
	run   RunFunc
	now   func() time.Time

	budget *memoryBudget
	// lostAttempts are attempts lost to a database outage, given back at the next start (outage.go).
	lostAttempts lostAttempts
	// heapBytes and liveHeapBytes read the heap for the backstop; tests replace them.
	heapBytes, liveHeapBytes func() int64

	// watchers are the background loops (the memory backstop) that end with runsCtx.
	watchers sync.WaitGroup
	// runsCtx is the parent of every run's context; stopRuns cancels them all at shutdown.
	runsCtx  context.Context
	stopRuns context.CancelCauseFunc

	// awaiting are the runs this process's plans wait for (await.go).
	awaiting awaitedRuns

	// warnNiceOnce logs once that simulations could not be given a lower priority (nice.go).
	warnNiceOnce sync.Once

	mu      sync.Mutex
	started bool
	stopped bool

	// drives are the sweeps fed and plans run in this process (drive.go), by lease key;
	// driving waits for them.
	drives  map[string]*drive
	driving sync.WaitGroup
	// locks make one process drive each sweep and plan (lease.go); driveRescan is how often a
	// server on PostgreSQL looks for ones nobody drives.
	locks       *store.DriveLocks
	driveRescan time.Duration
	// resumeFailed are the sweeps whose remaining points could not be expanded (logged once).
	resumeFailed map[string]bool
	// check makes every check before anything is stored (check.go); estimates is its memory
	// estimates by scenario id (estimate_cache.go).
	check     *Checker
	estimates *estimateCache
	// followPoll is how often the poller of a run followed through the store reads its row
	// (follow.go); tests shorten it.
	followPoll time.Duration
	// reader reads the stored summaries and reports of done runs (summary.go).
	reader *Reader
}

// New checks the configuration, creates the job queue's tables if needed and builds the
// service. It does not start working runs: call Start for that.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("runs: Config.Store is nil; open a store with store.Open first")
	}
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	run := cfg.Simulate
	if run == nil {
		run = sim.Run
	}
	runsCtx, stopRuns := context.WithCancelCause(context.Background())
	check := &Checker{cfg: cfg, traces: cfg.Store, estimates: newEstimateCache()}
	s := &Service{
		cfg:      cfg,
		log:      cfg.Logger,
		store:    cfg.Store,
		live:     newLiveRuns(),
		run:      run,
		now:      time.Now,
		runsCtx:  runsCtx,
		stopRuns: stopRuns,

		budget:        newMemoryBudget(cfg.MaxTotalMemory),
		heapBytes:     heapObjectsBytes,
		liveHeapBytes: liveHeapBytes,
		drives:        map[string]*drive{},
		locks:         cfg.Store.DriveLocks(),
		check:         check,
		estimates:     check.estimates,
		reader:        NewReader(cfg.Store, cfg.Logger),
		driveRescan:   cfg.DriveRescan,
		followPoll:    followPoll,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.jobs, err = newJobQueue(ctx, s); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return s, nil
}

// withDefaults fills the zero fields of a Config with their defaults and checks the limits
// against each other.
func withDefaults(cfg Config) (Config, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NoWorkers {
		if cfg.Store.Dialect() != store.DialectPostgres {
			return cfg, errors.New("runs: serving without workers (-workers 0) needs a PostgreSQL database (-db postgres://…) that worker processes (scalein worker) share; with SQLite, let serve work the runs")
		}
		cfg.Workers = 0
	} else if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.WorkerName == "" {
		cfg.WorkerName = defaultWorkerName()
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = defaultQueueSize
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = defaultRunTimeout
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = cfg.RunTimeout + defaultRescueMargin
	}
	if cfg.RescueAfter < cfg.RunTimeout+minRescueMargin {
		return cfg, fmt.Errorf("runs: the rescue delay (-rescue-after %s) must exceed the run wall-time limit (-run-timeout %s) by at least %s, or a live worker's long run would be given to another worker", cfg.RescueAfter, cfg.RunTimeout, minRescueMargin)
	}
	if cfg.MaxSweepPoints <= 0 {
		cfg.MaxSweepPoints = whatif.DefaultMaxPoints
	}
	if cfg.MaxPlanRuns <= 0 {
		cfg.MaxPlanRuns = whatif.DefaultMaxPlanRuns
	}
	perRun, total := DefaultMemoryBudgets()
	if cfg.MaxRunMemory <= 0 {
		cfg.MaxRunMemory = perRun
	}
	if cfg.MaxTotalMemory <= 0 {
		cfg.MaxTotalMemory = max(total, cfg.MaxRunMemory)
	}
	// A server that works no runs (-workers 0) applies -max-run-memory at admission for its
	// workers and -max-total-memory to its own exports and uploads: the two need not nest.
	if cfg.MaxRunMemory > cfg.MaxTotalMemory && !cfg.NoWorkers {
		return cfg, fmt.Errorf("runs: the per-run memory budget (%s) is above the total budget (%s); lower -max-run-memory or raise -max-total-memory",
			sim.FormatBytes(cfg.MaxRunMemory), sim.FormatBytes(cfg.MaxTotalMemory))
	}
	if cfg.DriveRescan <= 0 {
		cfg.DriveRescan = defaultDriveRescan
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	return cfg, nil
}

// Start starts working runs (unless the server has no workers). Runs a previous process left
// queued stay queued as jobs; runs stored before the job queue existed get their jobs now.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.stopped {
		s.mu.Unlock()
		return errors.New("runs: Start called twice or after Shutdown")
	}
	s.started = true
	s.mu.Unlock()

	n, err := s.store.RequeueOrphans(ctx, s.jobs.enqueue)
	if err != nil {
		return fmt.Errorf("runs: start: %w", err)
	}
	if n > 0 {
		s.log.Info("runs without a job queued again", "count", n)
	}
	if err := s.jobs.start(ctx, s.store); err != nil {
		return fmt.Errorf("runs: start: %w", err)
	}
	s.watchers.Go(func() { s.watchMemory(s.runsCtx) })
	if err := s.resumePlans(ctx); err != nil {
		return fmt.Errorf("runs: start: resume plans: %w", err)
	}
	if err := s.resumeSweeps(ctx); err != nil {
		return fmt.Errorf("runs: start: resume sweeps: %w", err)
	}
	if s.store.Dialect() == store.DialectPostgres {
		s.watchers.Go(func() { s.rescanDrives(s.runsCtx) })
	}
	return nil
}

// Shutdown stops taking work and cancels the running runs, which go back to queued in the store
// (and their jobs to River's queue) so that another start finishes them. It waits for the
// workers until ctx is done.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.stopRuns(errShuttingDown)
	if err := s.jobs.stop(ctx); err != nil {
		return fmt.Errorf("runs: shutdown: runs still stopping: %w", err)
	}
	done := make(chan struct{})
	go func() {
		s.driving.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.locks.Reset() // releases the drive locks: another process takes the sweeps and plans over
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runs: shutdown: plans still stopping: %w", ctx.Err())
	}
}

// WorkerName is "host:pid" (or Config.WorkerName): how runs worked here name their worker.
func (s *Service) WorkerName() string { return s.cfg.WorkerName }

// Limits is the configuration with its defaults filled in, as the queue page shows it.
func (s *Service) Limits() Config { return s.cfg }

// IsFinal says whether a run (or sweep, or plan) in status has ended: done, failed or cancelled.
func IsFinal(status string) bool {
	return status == store.StatusDone || status == store.StatusFailed || status == store.StatusCancelled
}
