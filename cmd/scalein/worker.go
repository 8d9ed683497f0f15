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
	"runtime"
	"syscall"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web"
)

// runWorker works runs from a PostgreSQL database shared with serve processes until ctx is
// cancelled or SIGINT/SIGTERM arrives; then the runs it holds go back to the queue. Like every
// process with a run service, it also feeds the sweeps and drives the plans it takes the lease
// of (runs/lease.go).
func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommandFlags("worker", "scalein worker -db postgres://… [-concurrency N] [flags]", stderr)
	dbURL := fs.String("db", os.Getenv("SCALEIN_DB"), "the PostgreSQL database shared with the serve processes, postgres://USER:PASSWORD@HOST/DB (env SCALEIN_DB)")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "runs this worker executes at once")
	quotaRuns := fs.Int("quota-queued-runs", 0, "runs one user may have queued or running, as the serve processes' flag: a plan this worker drives submits its runs within its owner's quota (0: no quota)")
	metricsAddr := fs.String("metrics-addr", os.Getenv("SCALEIN_METRICS_ADDR"), "serve GET /metrics (Prometheus: simulations, memory grants, the process) on this address, like :9090 (env SCALEIN_METRICS_ADDR); default off")
	limits := addRunFlags(fs.FlagSet)
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	if !store.IsPostgresDSN(*dbURL) {
		fmt.Fprintf(stderr, "scalein worker: -db must be a postgres:// URL (got %q): workers share a PostgreSQL database with the serve processes; with a SQLite file, scalein serve works the runs itself\n", *dbURL)
		return 2
	}
	if *quotaRuns < 0 {
		fmt.Fprintf(stderr, "scalein worker: -quota-queued-runs must be 0 (no quota) or more (got %d)\n", *quotaRuns)
		return 2
	}
	if *concurrency < 1 {
		fmt.Fprintf(stderr, "scalein worker: -concurrency must be at least 1 (got %d)\n", *concurrency)
		return 2
	}
	cfg, err := limits.config()
	if err != nil {
		fmt.Fprintf(stderr, "scalein worker: %v\n", err)
		return 2
	}
	cfg.Workers, cfg.QuotaQueuedRuns = *concurrency, *quotaRuns
	roomForSimulations(cfg)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, logger, err := openRunStore(ctx, *dbURL, &cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein worker: %v\n", err)
		return 1
	}
	defer st.Close()
	// store → runs: a worker works the queue, drives sweeps and plans, and serves nothing.
	svc, err := runs.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "scalein worker: %v\n", err)
		return 2
	}
	var metricsServer *http.Server
	if *metricsAddr != "" {
		ln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			fmt.Fprintf(stderr, "scalein worker: listen on %s: %v; choose another -metrics-addr\n", *metricsAddr, err)
			return 1
		}
		metricsServer = &http.Server{Handler: web.WorkerMetricsHandler(svc), ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
		fmt.Fprintf(stdout, "Metrics on http://%s/metrics\n", ln.Addr())
		go func() { _ = metricsServer.Serve(ln) }()
	}
	if err := svc.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "scalein worker: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Scale-in Planner worker %s working runs, and the sweeps and plans it takes up, from %s (concurrency %d)\n", svc.WorkerName(), store.RedactDSN(*dbURL), *concurrency)
	<-ctx.Done()
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if metricsServer != nil {
		_ = metricsServer.Shutdown(shutdownCtx)
	}
	if err := svc.Shutdown(shutdownCtx); err != nil {
		logger.Warn("stopping runs", "err", err)
		return 1
	}
	return 0
}
