package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// The flags and the start that serve and worker share, written once: both build a run service
// over one database, and every process on that database should set its run limits alike.

// runFlags are the run limits that serve and worker share.
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

// config is the run service's configuration the flags give (the store and logger come with
// openRunStore). It sets the collector's soft limit to the runs' total memory budget plus room
// for requests, so garbage does not double the heap near the budget.
func (f runFlags) config() (runs.Config, error) {
	cfg := runs.Config{RunTimeout: *f.runTimeout, RescueAfter: *f.rescueAfter}
	perRun, total := runs.DefaultMemoryBudgets()
	var err error
	if cfg.MaxRunMemory, err = sizeFlag("max-run-memory", *f.maxRunMemory, perRun); err != nil {
		return cfg, err
	}
	if cfg.MaxTotalMemory, err = sizeFlag("max-total-memory", *f.maxTotalMemory, max(total, cfg.MaxRunMemory)); err != nil {
		return cfg, err
	}
	if *f.maxAttempts < 1 {
		return cfg, fmt.Errorf("-max-attempts must be at least 1 (got %d)", *f.maxAttempts)
	}
	cfg.MaxAttempts = *f.maxAttempts
	debug.SetMemoryLimit(cfg.MaxTotalMemory + 1<<30)
	return cfg, nil
}

// openRunStore opens the database of a process with a run service and puts it, with a logger on
// stderr, into cfg. The caller closes the store.
func openRunStore(ctx context.Context, dsn string, cfg *runs.Config, stderr io.Writer) (*store.Store, *slog.Logger, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	cfg.Store, cfg.Logger = st, logger
	return st, logger, nil
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
