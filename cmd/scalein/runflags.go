package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
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
	simNice                      *int
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
		simNice:        fs.Int("sim-nice", runs.DefaultSimNice, "run simulations (and the encoding of their reports) this many nice levels below the process (Linux, 0-19), so pages and the database get the CPU first; 0: at the process's priority"),
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
	if *f.simNice < 0 || *f.simNice > 19 {
		return cfg, fmt.Errorf("-sim-nice must be 0 to 19 nice levels (got %d)", *f.simNice)
	}
	cfg.SimNice = *f.simNice
	debug.SetMemoryLimit(cfg.MaxTotalMemory + 1<<30)
	return cfg, nil
}

// roomForSimulations gives the Go runtime one more processor for each run the process
// simulates at once, when simulations run at a lowered priority (runs/nice.go): a run holds a
// processor for as long as it runs, on a thread the kernel may keep waiting while others want
// the CPU, and the goroutines of requests, of the queue and of the collector must not wait
// behind it for a processor. The kernel, not the Go runtime, then decides who gets the cores.
func roomForSimulations(cfg runs.Config) {
	if cfg.SimNice <= 0 || cfg.NoWorkers || runtime.GOOS != "linux" {
		return
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU() // the run service's default
	}
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + workers)
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
