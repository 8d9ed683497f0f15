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
	workers := fs.Int("workers", 0, "runs executed at once (default: one per CPU)")
	queue := fs.Int("queue", 0, "runs waiting for a worker before submissions get 429 (default 64)")
	perRun, total := web.DefaultMemoryBudgets()
	maxRunMemory := fs.String("max-run-memory", "", fmt.Sprintf("refuse scenarios whose memory estimate exceeds this, and stop a run whose heap grows past it (default a quarter of the machine's memory: %s)", sim.FormatBytes(perRun)))
	maxTotalMemory := fs.String("max-total-memory", "", fmt.Sprintf("start queued runs only while the estimates of the running ones fit this (default half the machine's memory: %s)", sim.FormatBytes(total)))
	maxAttempts := fs.Int("max-attempts", web.DefaultMaxAttempts, "start a run at most this many times; a run interrupted by the process dying after that many starts is failed")
	maxSweepPoints := fs.Int("max-sweep-points", 0, "points a sweep may have (default 256)")
	maxPlanRuns := fs.Int("max-plan-runs", 0, "runs a plan may simulate (default 64)")
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
	runBudget, err := sizeFlag("max-run-memory", *maxRunMemory, perRun)
	if err == nil {
		total, err = sizeFlag("max-total-memory", *maxTotalMemory, max(total, runBudget))
	}
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 2
	}
	// The collector works harder as the heap nears the runs' budget plus room for requests,
	// instead of letting garbage double it.
	debug.SetMemoryLimit(total + 1<<30)
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := store.Open(ctx, *dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	defer st.Close()

	srv, err := web.New(web.Config{Store: st, Logger: logger, Workers: *workers, QueueSize: *queue,
		MaxRunMemory: runBudget, MaxTotalMemory: total, MaxAttempts: *maxAttempts,
		MaxSweepPoints: *maxSweepPoints, MaxPlanRuns: *maxPlanRuns})
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "scalein serve: listen on %s: %v; choose another -addr\n", *addr, err)
		return 1
	}
	if err := srv.Start(ctx); err != nil {
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
	fmt.Fprintf(stdout, "Scale-in Planner listening on http://%s/ (database %s)\n", ln.Addr(), store.RedactDSN(*dbPath))

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
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("stopping runs", "err", err)
		code = 1
	}
	return code
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
