package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web"
)

// shutdownGrace is how long a stop waits for open requests and for running runs to be put back
// in the queue.
const shutdownGrace = 15 * time.Second

// runServe starts the web app (README.md#headless-runs) and serves until ctx is cancelled or SIGINT/SIGTERM
// arrives; then it stops taking requests, requeues running runs and closes the store.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommandFlags("serve", "scalein serve [-addr HOST:PORT] [-db FILE|postgres://…] [-workers N] [flags]", stderr)
	addr := fs.String("addr", envOr("SCALEIN_ADDR", "127.0.0.1:8080"), "listen address (env SCALEIN_ADDR)")
	dbPath := fs.String("db", envOr("SCALEIN_DB", "./data/scalein.db"), "SQLite database file, created if missing, or a postgres://USER:PASSWORD@HOST/DB URL (env SCALEIN_DB)")
	workers := fs.Int("workers", -1, "runs this process executes at once (default: one per CPU); 0 serves without working runs, for -db postgres://… with scalein worker processes")
	queue := fs.Int("queue", 0, "runs waiting for a worker before submissions get 429 (default 64)")
	limits := addRunFlags(fs.FlagSet)
	runsPerMinute := fs.Int("runs-per-minute", 0, "runs, pairs, sweeps, plans and uploads one client (user, else address) may create per minute; refused requests do not count, and requests of any outcome are bounded at 4× (default 30)")
	maxSweepPoints := fs.Int("max-sweep-points", 0, "points a sweep may have (default 256)")
	maxPlanRuns := fs.Int("max-plan-runs", 0, "runs a plan may simulate (default 64)")
	accessF := addAccessFlags(fs.FlagSet)
	maxCalibration := fs.String("max-calibration-bytes", "", "calibration inputs the server stores in all, uncompressed, like 500MB or 10GiB (default 2GiB); an admin deletes stored ones on their page")
	gpuHourPrice := fs.Float64("gpu-hour-price", web.DefaultGPUHourPrice, "price of one GPU-hour, for the cost figures of run, compare and plan pages (a page's price field overrides it)")
	metricsAddr := fs.String("metrics-addr", envOr("SCALEIN_METRICS_ADDR", ""), "serve GET /metrics (Prometheus) on this address, a listener of its own off the public one, like :9090 (env SCALEIN_METRICS_ADDR); default off")
	currency := fs.String("currency", "", "currency of -gpu-hour-price, written with every cost: a symbol before the amount ($, €) or a code after it (EUR); default none")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	if err := checkServeLimits(fs.FlagSet); err != nil {
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
	if !(*gpuHourPrice > 0) || *gpuHourPrice > web.MaxGPUHourPrice {
		fmt.Fprintf(stderr, "scalein serve: -gpu-hour-price must be above 0 and at most %v (got %v)\n", web.MaxGPUHourPrice, *gpuHourPrice)
		return 2
	}
	cfg, err := limits.config()
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	cfg.Workers, cfg.NoWorkers = max(*workers, 0), *workers == 0
	cfg.QueueSize, cfg.MaxSweepPoints, cfg.MaxPlanRuns = *queue, *maxSweepPoints, *maxPlanRuns
	cfg.QuotaQueuedRuns = access.Quotas.QueuedRuns
	roomForSimulations(cfg)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, logger, err := openRunStore(ctx, *dbPath, &cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	defer st.Close()
	// store → runs → web: the run service works the queue, the web server serves over it.
	svc, err := runs.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	srv, err := web.New(web.Config{Runs: svc, Store: st, Logger: logger, RunsPerMinute: *runsPerMinute, Access: access, GPUHourPrice: *gpuHourPrice, Currency: strings.TrimSpace(*currency), MaxCalibrationBytes: maxCalibrationBytes})
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	return serveHTTP(ctx, svc, srv, listenAddrs{app: *addr, metrics: *metricsAddr}, store.RedactDSN(*dbPath), logger, stdout, stderr)
}

// listenAddrs are serve's listeners: the application's, and GET /metrics' ("" for none).
type listenAddrs struct{ app, metrics string }

// serveHTTP starts the service's runs and answers HTTP on addr until ctx ends (SIGINT, SIGTERM),
// then shuts down within shutdownGrace. It returns the exit code.
func serveHTTP(ctx context.Context, svc *runs.Service, srv *web.Server, addrs listenAddrs, dbName string, logger *slog.Logger, stdout, stderr io.Writer) int {
	addr := addrs.app
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: listen on %s: %v; choose another -addr\n", addr, err)
		return 1
	}
	var metricsLn net.Listener
	if addrs.metrics != "" {
		if metricsLn, err = net.Listen("tcp", addrs.metrics); err != nil {
			_ = ln.Close()
			fmt.Fprintf(stderr, "scalein serve: listen on %s: %v; choose another -metrics-addr\n", addrs.metrics, err)
			return 1
		}
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

	serveErr := make(chan error, 2)
	go func() { serveErr <- httpServer.Serve(ln) }()
	// GET /metrics on a listener of its own: off the public one and its gates (web/metrics.go).
	metricsServer := &http.Server{Handler: srv.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	if metricsLn != nil {
		fmt.Fprintf(stdout, "Metrics on http://%s/metrics\n", metricsLn.Addr())
		go func() { serveErr <- metricsServer.Serve(metricsLn) }()
	}

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
	if metricsLn != nil {
		_ = metricsServer.Shutdown(shutdownCtx)
	}
	if err := svc.Shutdown(shutdownCtx); err != nil {
		logger.Warn("stopping runs", "err", err)
		code = 1
	}
	return code
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
