package whatif

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

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
	// Reused is true when the run had been simulated before this request asked for it.
	Reused bool `json:"-"`
}

// Runner simulates scenarios and returns their outcomes in the same order. A run that fails is
// an Outcome with status "failed", not an error; the error is for the runner itself failing (or
// ctx ending). Implementations may run the scenarios in parallel and reuse identical runs.
type Runner interface {
	Run(ctx context.Context, scenarios []*sim.Scenario) ([]Outcome, error)
}

// LocalRunner simulates in this process, up to Parallel runs at once (0: one per CPU), and
// remembers every outcome by scenario id so an identical scenario is simulated once.
type LocalRunner struct {
	Parallel int
	Options  sim.RunOptions
	// Progress, if set, is called after each run with how many of this call's runs are done.
	Progress func(done, total int)

	mu   sync.Mutex
	memo map[string]Outcome
}

// Run implements Runner.
func (l *LocalRunner) Run(ctx context.Context, scenarios []*sim.Scenario) ([]Outcome, error) {
	l.mu.Lock()
	if l.memo == nil {
		l.memo = map[string]Outcome{}
	}
	l.mu.Unlock()
	out := make([]Outcome, len(scenarios))
	// First occurrence of each new id runs; later ones and remembered ones copy.
	first := map[string]int{}
	var todo []int
	for i, sc := range scenarios {
		id := sc.ID()
		l.mu.Lock()
		o, ok := l.memo[id]
		l.mu.Unlock()
		if ok {
			o.Reused = true
			out[i] = o
			continue
		}
		if _, ok := first[id]; !ok {
			first[id] = i
			todo = append(todo, i)
		}
	}
	parallel := l.Parallel
	if parallel <= 0 {
		parallel = runtime.NumCPU()
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	done := 0
	for range min(parallel, len(todo)) {
		wg.Go(func() {
			for i := range jobs {
				out[i] = runOne(ctx, scenarios[i], l.Options)
				doneMu.Lock()
				done++
				if l.Progress != nil {
					l.Progress(done, len(todo))
				}
				doneMu.Unlock()
			}
		})
	}
	for _, i := range todo {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, sc := range scenarios {
		j := first[sc.ID()]
		if j != i && out[i].ScenarioID == "" {
			out[i] = out[j]
			out[i].Reused = true
		}
	}
	l.mu.Lock()
	for _, i := range todo {
		if out[i].Status == StatusDone {
			l.memo[out[i].ScenarioID] = out[i]
		}
	}
	l.mu.Unlock()
	return out, nil
}

func runOne(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) Outcome {
	o := Outcome{ScenarioID: sc.ID(), RunID: sc.ID()}
	rep, err := sim.Run(ctx, sc, opt)
	switch {
	case errors.Is(err, context.Canceled):
		o.Status, o.Error = StatusCancelled, "cancelled"
	case err != nil:
		o.Status, o.Error = StatusFailed, fmt.Sprintf("the run failed: %v", err)
	default:
		o.Status, o.Digest, o.Headline, o.Workers = StatusDone, rep.Digest, sim.Headline(rep), rep.Workers
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
