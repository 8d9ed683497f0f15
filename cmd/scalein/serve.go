package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web"
)

// shutdownGrace is how long a stop waits for open requests and for running runs to be put back
// in the queue.
const shutdownGrace = 15 * time.Second

// runServe starts the web app (SPEC §4) and serves until ctx is cancelled or SIGINT/SIGTERM
// arrives; then it stops taking requests, requeues running runs and closes the store.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("SCALEIN_ADDR", "127.0.0.1:8080"), "listen address (env SCALEIN_ADDR)")
	dbPath := fs.String("db", envOr("SCALEIN_DB", "./data/scalein.db"), "SQLite database file, created if missing, or a postgres://USER:PASSWORD@HOST/DB URL (env SCALEIN_DB)")
	workers := fs.Int("workers", -1, "runs this process executes at once (default: one per CPU); 0 serves without working runs, for -db postgres://… with scalein worker processes")
	queue := fs.Int("queue", 0, "runs waiting for a worker before submissions get 429 (default 64)")
	limits := addRunFlags(fs)
	runsPerMinute := fs.Int("runs-per-minute", 0, "runs (and sweeps, plans) one client IP may create per minute (default 30)")
	maxSweepPoints := fs.Int("max-sweep-points", 0, "points a sweep may have (default 256)")
	maxPlanRuns := fs.Int("max-plan-runs", 0, "runs a plan may simulate (default 64)")
	accessF := addAccessFlags(fs)
	maxCalibration := fs.String("max-calibration-bytes", "", "calibration inputs the server stores in all, uncompressed, like 500MB or 10GiB (default 2GiB); an admin deletes stored ones on their page")
	gpuHourPrice := fs.Float64("gpu-hour-price", web.DefaultGPUHourPrice, "price of one GPU-hour, for the cost figures of run, compare and plan pages (a page's price field overrides it)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalein serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := checkServeLimits(fs); err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	access, err := accessF.access(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	maxCalibrationBytes, err := calibrationCap(*maxCalibration)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := store.Open(ctx, *dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	defer st.Close()

	cfg := runs.Config{Store: st, Logger: logger, Workers: max(*workers, 0), NoWorkers: *workers == 0,
		QueueSize: *queue, RunTimeout: *limits.runTimeout, RescueAfter: *limits.rescueAfter,
		MaxSweepPoints: *maxSweepPoints, MaxPlanRuns: *maxPlanRuns, QuotaQueuedRuns: access.Quotas.QueuedRuns}
	if !(*gpuHourPrice > 0) || *gpuHourPrice > web.MaxGPUHourPrice {
		fmt.Fprintf(stderr, "scalein serve: -gpu-hour-price must be above 0 and at most %v (got %v)\n", web.MaxGPUHourPrice, *gpuHourPrice)
		return 2
	}
	if err := limits.memory(&cfg); err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	// store → runs → web: the run service works the queue, the web server serves over it.
	svc, err := runs.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	srv, err := web.New(web.Config{Runs: svc, Store: st, Logger: logger, RunsPerMinute: *runsPerMinute, Access: access, GPUHourPrice: *gpuHourPrice, MaxCalibrationBytes: maxCalibrationBytes})
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	return serveHTTP(ctx, svc, srv, *addr, store.RedactDSN(*dbPath), logger, stdout, stderr)
}

// serveHTTP starts the service's runs and answers HTTP on addr until ctx ends (SIGINT, SIGTERM),
// then shuts down within shutdownGrace. It returns the exit code.
func serveHTTP(ctx context.Context, svc *runs.Service, srv *web.Server, addr, dbName string, logger *slog.Logger, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: listen on %s: %v; choose another -addr\n", addr, err)
		return 1
	}
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	// Requests derive from streamsCtx, which is cancelled as shutdown begins, so open event
	// streams end at once instead of holding the shutdown for its whole grace.
	streamsCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	httpServer := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return streamsCtx },
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a 64 MiB upload on a slow link
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	httpServer.RegisterOnShutdown(endStreams)
	fmt.Fprintf(stdout, "Scale-in Planner listening on http://%s/ (database %s)\n", ln.Addr(), dbName)

	serveErr := make(chan error, 1)
	go func() { serveErr <- httpServer.Serve(ln) }()

	code := 0
	select {
	case err := <-serveErr:
		logger.Error("server stopped", "err", err)
		code = 1
	case <-ctx.Done():
		logger.Info("shutting down")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Event streams never end on their own; Shutdown waits for them only until the grace ends.
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		logger.Warn("closing open requests", "err", err)
		_ = httpServer.Close()
	}
	if err := svc.Shutdown(shutdownCtx); err != nil {
		logger.Warn("stopping runs", "err", err)
		code = 1
	}
	return code
}

// runFlags are the run limits that serve and worker share; every process on one database
// should use the same values.
type runFlags struct {
	runTimeout, rescueAfter      *time.Duration
	maxRunMemory, maxTotalMemory *string
	maxAttempts                  *int
}

func addRunFlags(fs *flag.FlagSet) runFlags {
	perRun, total := runs.DefaultMemoryBudgets()
	return runFlags{
		runTimeout: fs.Duration("run-timeout", 0, "a run's wall-time limit (default 10m)"),
		rescueAfter: fs.Duration("rescue-after", 0, "how long a run may stay running before its worker is presumed dead and the run goes to another worker; "+
			"must exceed -run-timeout by a few seconds (default -run-timeout + 5m)"),
		maxRunMemory:   fs.String("max-run-memory", "", fmt.Sprintf("refuse scenarios whose memory estimate exceeds this (like 6GB), and stop a run whose heap grows past it (default a quarter of this machine's memory: %s)", sim.FormatBytes(perRun))),
		maxTotalMemory: fs.String("max-total-memory", "", fmt.Sprintf("start queued runs only while the estimates of the running ones fit this (default half of this machine's memory: %s)", sim.FormatBytes(total))),
		maxAttempts:    fs.Int("max-attempts", runs.DefaultMaxAttempts, "start a run at most this many times; a run still unfinished after that many starts (its process died each time) is failed"),
	}
}

// memory reads the memory flags into cfg and sets the collector's soft limit to the runs'
// total budget plus room for requests, so garbage does not double the heap near the budget.
func (f runFlags) memory(cfg *runs.Config) error {
	perRun, total := runs.DefaultMemoryBudgets()
	var err error
	if cfg.MaxRunMemory, err = sizeFlag("max-run-memory", *f.maxRunMemory, perRun); err != nil {
		return err
	}
	if cfg.MaxTotalMemory, err = sizeFlag("max-total-memory", *f.maxTotalMemory, max(total, cfg.MaxRunMemory)); err != nil {
		return err
	}
	if *f.maxAttempts < 1 {
		return fmt.Errorf("-max-attempts must be at least 1 (got %d)", *f.maxAttempts)
	}
	cfg.MaxAttempts = *f.maxAttempts
	debug.SetMemoryLimit(cfg.MaxTotalMemory + 1<<30)
	return nil
}

// sizeFlag reads a size flag ("6GB", "2GiB"); empty means fallback.
func sizeFlag(name, value string, fallback int64) (int64, error) {
	if value == "" {
		return fallback, nil
	}
	n, err := sim.ParseBytes(value)
	if err != nil {
		return 0, fmt.Errorf("-%s: %w", name, err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("-%s must be above 0", name)
	}
	return n, nil
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
