// Package web is the HTTP adapter of the Scale-in Planner: the chi router, the pages, the JSON
// API and the exports of README.md, and the cache of finished pages. The runs themselves (the
// queue of docs/deploy.md, sweeps and plans) are the runs package's, reached through RunService.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// RunService is the run service as the handlers use it: *runs.Service, or a fake in page
// tests where the job queue is not the subject.
type RunService interface {
	Submit(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error)
	Admit(sc *sim.Scenario) error
	QueueRoom(ctx context.Context, scenarios ...*sim.Scenario) error
	Estimate(sc *sim.Scenario) int64
	Reserve(ctx context.Context, bytes int64) (release func(), err error)
	NoteBigRequest()
	Progress(id string) (runs.RunState, bool)
	Follow(ctx context.Context, id string) (<-chan runs.RunState, error)
	CancelRun(ctx context.Context, id string) (live bool, err error)
	LoadSummary(ctx context.Context, run store.Run) (*runs.StoredSummary, error)
	LoadReport(ctx context.Context, id string) (*sim.Report, error)
	CreateSweep(ctx context.Context, req runs.SweepRequest) (runs.Created, error)
	Sweep(ctx context.Context, id string) (runs.SweepView, error)
	CancelSweep(ctx context.Context, id string) error
	CreatePlan(ctx context.Context, req runs.PlanRequest) (runs.Created, error)
	Plan(ctx context.Context, id string) (runs.PlanView, error)
	CancelPlan(ctx context.Context, id string) error
	MaxPlanRuns() int
	Retrying(ctx context.Context, n int) ([]runs.RetryingRun, error)
	JobStates(ctx context.Context) (map[string]int, error)
	Limits() runs.Config
}

// Config is everything New needs. Zero values take the documented defaults.
type Config struct {
	// Runs is the run service (runs.New); Store is the store it was built on.
	Runs   RunService
	Store  *store.Store
	Logger *slog.Logger
	// RunsPerMinute limits run creation per client IP (default 30).
	RunsPerMinute int
	// BigBodies is how many request bodies above 1 MiB are parsed at once (default 2).
	BigBodies int
	// MaxCalibrationBytes caps the calibration inputs stored in all, uncompressed (default 2 GiB).
	MaxCalibrationBytes int64
	// Access is who may reach the server and what they may do (auth.go); the zero value is
	// the single-user server.
	Access Access
	// GPUHourPrice turns GPU-hours into money on the run, compare and plan pages (default
	// DefaultGPUHourPrice; a page's ?price= overrides it).
	GPUHourPrice float64
	// Currency is written with every cost ("$2.50", "2.50 EUR"); "" writes the amount alone.
	Currency string
}

const (
	defaultRunsPerMinute = 30
	defaultBigBodies     = 2
)

// Server is the web application: routes, middleware, pages, the JSON API, exports and the
// page cache, over the run service.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *store.Store
	runs    RunService
	assets  *assetTable
	pages   *pageCache
	bodies  *bigBodies
	handler http.Handler
	now     func() time.Time
	// exportGateV bounds the exports that simulate a run again (exports.go); see exports().
	exportOnce  sync.Once
	exportGateV *exportGate
	// streams counts the open progress streams of each client (page_events.go).
	streams *streamCounts
	// transforms is the per-client rate of imports (transforms.go).
	transforms *httprate.RateLimiter
	// metrics are GET /metrics' series (metrics.go).
	metrics *metrics
}

// New builds the web server over a run service. Starting and stopping the service's workers
// is the caller's (runs.Service.Start and Shutdown).
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: Config.Store is nil; open a store with store.Open first")
	}
	if cfg.Runs == nil {
		return nil, errors.New("web: Config.Runs is nil; build the run service with runs.New first")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RunsPerMinute <= 0 {
		cfg.RunsPerMinute = defaultRunsPerMinute
	}
	if cfg.BigBodies <= 0 {
		cfg.BigBodies = defaultBigBodies
	}
	if err := cfg.Access.Check(); err != nil {
		return nil, err
	}
	if cfg.GPUHourPrice <= 0 {
		cfg.GPUHourPrice = DefaultGPUHourPrice
	}
	assets, err := newAssetTable()
	if err != nil {
		return nil, fmt.Errorf("web: static assets: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		store:   cfg.Store,
		runs:    cfg.Runs,
		assets:  assets,
		pages:   newPageCache(),
		bodies:  newBigBodies(cfg.BigBodies),
		streams: newStreamCounts(),
		now:     time.Now,

		transforms: newTransformLimiter(cfg.RunsPerMinute),
	}
	s.metrics = s.newMetrics()
	s.handler = s.routes()
	return s, nil
}

// Handler is the whole application as an http.Handler.
func (s *Server) Handler() http.Handler { return s.handler }
