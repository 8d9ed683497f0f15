// Package web is the HTTP adapter of the Scale-in Planner: the chi router, the pages and the
// JSON API of SPEC §5, and the bounded run queue of SPEC §6.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
	// Workers is how many runs execute at once (default runtime.NumCPU()).
	Workers int
	// QueueSize bounds the runs waiting for a worker (default 64); past it, submissions get 429.
	QueueSize int
	// MaxEvents and MaxVirtualMS are passed to every sim.Run (0 = the simulator's defaults).
	MaxEvents    int64
	MaxVirtualMS float64
	// RunTimeout is a run's wall-time limit (default 10 minutes).
	RunTimeout time.Duration
	// RunsPerMinute limits run creation per client IP (default 30).
	RunsPerMinute int
	// MaxRunMemory is the per-run memory budget: a scenario whose estimate exceeds it is refused
	// at submit time, and a run during which the heap grows past it is stopped. MaxTotalMemory
	// bounds the estimates of the runs running at once. Defaults: DefaultMemoryBudgets.
	MaxRunMemory, MaxTotalMemory int64
	// MaxAttempts is how many times a run is started in all; a run found interrupted (running
	// when the process died) after that many starts is failed (default DefaultMaxAttempts).
	MaxAttempts int
	// BigBodies is how many request bodies above 1 MiB are parsed at once (default 2).
	BigBodies int
	// MaxSweepPoints bounds a sweep (default 256); MaxPlanRuns bounds a plan's runs (default 64).
	MaxSweepPoints int
	MaxPlanRuns    int
}

const (
	defaultQueueSize     = 64
	defaultRunTimeout    = 10 * time.Minute
	defaultRunsPerMinute = 30
	defaultBigBodies     = 2
)

// runFunc is the simulator as the queue sees it; tests replace it with a fake that blocks.
type runFunc func(ctx context.Context, s *sim.Scenario, opt sim.RunOptions) (*sim.Report, error)

// Server is the web application: handler, run queue and its workers.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *store.Store
	queue   *runQueue
	assets  *assetTable
	pages   *pageCache
	handler http.Handler
	run     runFunc
	now     func() time.Time

	budget *memoryBudget
	bodies *bigBodies
	// heapBytes and liveHeapBytes read the heap for the backstop; tests replace them.
	heapBytes, liveHeapBytes func() int64

	// runsCtx is the parent of every run's context; stopRuns cancels them all at shutdown.
	runsCtx  context.Context
	stopRuns context.CancelCauseFunc
	workers  sync.WaitGroup

	mu      sync.Mutex
	started bool
	stopped bool

	// planCancels stops the plans running in this process; plansRunning waits for them.
	planCancels  map[string]context.CancelCauseFunc
	plansRunning sync.WaitGroup
}

// New checks the configuration and builds the server. It does not start running work: call
// Start for that.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: Config.Store is nil; open a store with store.Open first")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = defaultQueueSize
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = defaultRunTimeout
	}
	if cfg.RunsPerMinute <= 0 {
		cfg.RunsPerMinute = defaultRunsPerMinute
	}
	perRun, total := DefaultMemoryBudgets()
	if cfg.MaxRunMemory <= 0 {
		cfg.MaxRunMemory = perRun
	}
	if cfg.MaxTotalMemory <= 0 {
		cfg.MaxTotalMemory = max(total, cfg.MaxRunMemory)
	}
	if cfg.MaxRunMemory > cfg.MaxTotalMemory {
		return nil, fmt.Errorf("web: the per-run memory budget (%s) is above the total budget (%s); lower -max-run-memory or raise -max-total-memory",
			sim.FormatBytes(cfg.MaxRunMemory), sim.FormatBytes(cfg.MaxTotalMemory))
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BigBodies <= 0 {
		cfg.BigBodies = defaultBigBodies
	}
	if cfg.MaxSweepPoints <= 0 {
		cfg.MaxSweepPoints = whatif.DefaultMaxPoints
	}
	if cfg.MaxPlanRuns <= 0 {
		cfg.MaxPlanRuns = whatif.DefaultMaxPlanRuns
	}
	assets, err := newAssetTable()
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	runsCtx, stopRuns := context.WithCancelCause(context.Background())
	s := &Server{
		cfg:    cfg,
		log:    cfg.Logger,
		store:  cfg.Store,
		queue:  newRunQueue(cfg.QueueSize),
		assets: assets,
		pages:  newPageCache(),
		run:    sim.Run,
		now:    time.Now,
		budget: newMemoryBudget(cfg.MaxTotalMemory),
		bodies: newBigBodies(cfg.BigBodies),

		heapBytes:     heapObjectsBytes,
		liveHeapBytes: liveHeapBytes,
		runsCtx:       runsCtx,
		stopRuns:      stopRuns,

		planCancels: map[string]context.CancelCauseFunc{},
	}
	s.handler = s.routes()
	return s, nil
}

// Handler is the whole application as an http.Handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Start starts the run workers and queues again every run a previous process left queued or
// running (runs are deterministic, so running them again loses nothing).
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.stopped {
		s.mu.Unlock()
		return errors.New("web: Start called twice or after Shutdown")
	}
	s.started = true
	s.mu.Unlock()

	unfinished, err := s.store.UnfinishedRuns(ctx)
	if err != nil {
		return fmt.Errorf("web: start: list unfinished runs: %w", err)
	}
	for _, r := range unfinished {
		again, err := s.recoverRun(ctx, r)
		if err != nil {
			return fmt.Errorf("web: start: %w", err)
		}
		if again {
			s.queue.pushRecovered(r.ID)
		}
	}
	if len(unfinished) > 0 {
		s.log.Info("runs recovered from a previous process", "count", len(unfinished))
	}
	for range s.cfg.Workers {
		s.workers.Add(1)
		go s.worker()
	}
	s.workers.Go(func() { s.watchMemory(s.runsCtx) })
	if err := s.resumePlans(ctx); err != nil {
		return fmt.Errorf("web: start: resume plans: %w", err)
	}
	return nil
}

// Shutdown stops taking work and cancels the running runs, which go back to queued in the store
// so that the next Start finishes them. It waits for the workers until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.queue.close()
	s.stopRuns(errShuttingDown)
	done := make(chan struct{})
	go func() {
		s.workers.Wait()
		s.plansRunning.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("web: shutdown: runs still stopping: %w", ctx.Err())
	}
}
