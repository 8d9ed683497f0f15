package runs

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalein-planner/scalein/store"
)

// The runs that this process's plans wait for are followed together: one read of their
// statuses per runPollInterval, however many plans wait (awaitedRuns), where each waiting plan
// used to read its own run every 200 ms. With a plan or two per user that was most of what
// the servers asked the database (the soak test of issue 29: a few hundred reads a second on
// PostgreSQL, three round trips each, against about a hundred requests a second), and page
// views waited for a connection behind them.

// awaitChunk bounds the ids one status read names.
const awaitChunk = 500

// awaitedRuns is the set of runs the process waits for, each with the channels to close once it
// has ended, and whether the loop that reads their statuses is running.
type awaitedRuns struct {
	mu      sync.Mutex
	waiters map[string][]chan struct{}
	running bool
	// reads counts the status reads (for tests).
	reads atomic.Int64
}

// waitForEnd registers a waiter for run id; ended is closed once the run has ended. cancel forgets
// the waiter (the run's end is then not waited for).
func (s *Service) waitForEnd(id string) (ended chan struct{}, cancel func()) {
	w := &s.awaiting
	ended = make(chan struct{})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waiters == nil {
		w.waiters = map[string][]chan struct{}{}
	}
	w.waiters[id] = append(w.waiters[id], ended)
	if !w.running {
		w.running = true
		go s.watchAwaited()
	}
	return ended, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		left := slices.DeleteFunc(w.waiters[id], func(c chan struct{}) bool { return c == ended })
		if len(left) == 0 {
			delete(w.waiters, id)
		} else {
			w.waiters[id] = left
		}
	}
}

// watchAwaited reads the statuses of the awaited runs every runPollInterval and wakes the
// waiters of those that have ended. It stops when nothing is awaited (waitForEnd starts it
// again) or the service stops. A read that fails (the database is away) is tried at the next
// interval: the waits go on through an outage, as the runs do.
func (s *Service) watchAwaited() {
	w := &s.awaiting
	t := time.NewTicker(runPollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.runsCtx.Done():
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
			return
		case <-t.C:
		}
		w.mu.Lock()
		ids := slices.Sorted(maps.Keys(w.waiters))
		if len(ids) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		ended := map[string]bool{}
		for chunk := range slices.Chunk(ids, awaitChunk) {
			w.reads.Add(1)
			ctx, cancel := storeCtx()
			runs, err := s.store.RunsByID(ctx, chunk...)
			cancel()
			if err != nil {
				continue
			}
			for _, r := range runs {
				if IsFinal(r.Status) {
					ended[r.ID] = true
				}
			}
		}
		if len(ended) == 0 {
			continue
		}
		w.mu.Lock()
		for id := range ended {
			for _, c := range w.waiters[id] {
				close(c)
			}
			delete(w.waiters, id)
		}
		w.mu.Unlock()
	}
}

// awaitRun waits until the run has ended and returns it with its report.
func (s *Service) awaitRun(ctx context.Context, id string) (store.Run, error) {
	for {
		run, err := s.store.GetRunStatus(ctx, id)
		switch {
		case err == nil && IsFinal(run.Status):
			return readEndedRun(ctx, s.store, id)
		case err != nil && !store.IsUnavailable(err):
			return store.Run{}, err
		}
		// Not ended yet (or the database is away): wait with the process's other waiters.
		ended, cancel := s.waitForEnd(id)
		select {
		case <-ended:
		case <-ctx.Done():
			cancel()
			return store.Run{}, context.Cause(ctx)
		}
	}
}

// awaitByPolling is the wait of a plan runner over another submit than the service's
// (NewPlanRunner, a fake's): it reads the run's status every runPollInterval, through an outage.
func awaitByPolling(st *store.Store) func(ctx context.Context, id string) (store.Run, error) {
	return func(ctx context.Context, id string) (store.Run, error) {
		ended := pollStore(ctx, runPollInterval, func() bool {
			run, err := st.GetRunStatus(ctx, id)
			return (err == nil && IsFinal(run.Status)) || (err != nil && !store.IsUnavailable(err))
		})
		if !ended {
			return store.Run{}, context.Cause(ctx)
		}
		return readEndedRun(ctx, st, id)
	}
}

// readEndedRun reads an ended run whole, riding out an outage.
func readEndedRun(ctx context.Context, st *store.Store, id string) (run store.Run, err error) {
	ok := pollStore(ctx, runPollInterval, func() bool {
		run, err = st.GetRun(ctx, id)
		if err == nil && run.Status == store.StatusDone && len(run.SummaryJSON) == 0 {
			// Finished before summaries were stored: the report has what outcomeOf reads.
			run.ReportJSON, err = st.GetReportJSON(ctx, id)
		}
		return !store.IsUnavailable(err)
	})
	if !ok {
		return store.Run{}, context.Cause(ctx)
	}
	if err != nil {
		return store.Run{}, err
	}
	return run, nil
}
