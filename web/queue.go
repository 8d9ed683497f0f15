package web

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/scalein-planner/scalein/store"
)

// Causes a run's context can be cancelled with; the worker turns each into the run's final state.
var (
	errShuttingDown    = errors.New("the server is shutting down")
	errCancelledByUser = errors.New("cancelled by a user")
	errQueueFull       = errors.New("run queue is full")
)

// runQueue is the bounded FIFO of runs waiting for a worker, plus what the pages and the event
// streams need to follow runs live: each queued or running run has a runWatch.
//
// Submissions reserve a slot before the run is stored, so a full queue refuses them before
// anything is written. Runs recovered at start bypass the bound: they were accepted before.
type runQueue struct {
	mu       sync.Mutex
	wake     *sync.Cond
	capacity int
	pending  []string
	reserved int
	closed   bool
	watches  map[string]*runWatch
	cancels  map[string]context.CancelCauseFunc
}

// runWatch is the live state of one queued or running run. changed is closed (and replaced) on
// every change, which wakes every event stream waiting on it.
type runWatch struct {
	status   string
	progress float64
	changed  chan struct{}
}

// watchSnapshot is a copy of a runWatch that is safe to read without the lock.
type watchSnapshot struct {
	status   string
	progress float64
	changed  <-chan struct{}
}

func newRunQueue(capacity int) *runQueue {
	q := &runQueue{
		capacity: capacity,
		watches:  map[string]*runWatch{},
		cancels:  map[string]context.CancelCauseFunc{},
	}
	q.wake = sync.NewCond(&q.mu)
	return q
}

// reserve takes n slots for runs about to be stored, or fails with errQueueFull.
func (q *runQueue) reserve(n int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending)+q.reserved+n > q.capacity {
		return errQueueFull
	}
	q.reserved += n
	return nil
}

// release gives back slots reserved for runs that turned out not to need queueing.
func (q *runQueue) release(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved = max(q.reserved-n, 0)
}

// pushReserved queues a run into a slot reserved earlier.
func (q *runQueue) pushReserved(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.reserved = max(q.reserved-1, 0)
	q.pushLocked(id)
}

// pushRecovered queues a run found unfinished at start, beyond the bound if need be.
func (q *runQueue) pushRecovered(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pushLocked(id)
}

func (q *runQueue) pushLocked(id string) {
	if _, ok := q.watches[id]; ok {
		return // already queued or running
	}
	q.pending = append(q.pending, id)
	q.watches[id] = &runWatch{status: store.StatusQueued, changed: make(chan struct{})}
	q.wake.Signal()
}

// next blocks until a run is waiting and returns it, or returns false once the queue is closed.
func (q *runQueue) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) == 0 && !q.closed {
		q.wake.Wait()
	}
	if q.closed {
		return "", false
	}
	id := q.pending[0]
	q.pending = q.pending[1:]
	return id, true
}

// close wakes every worker and makes next return false; queued runs stay queued in the store.
func (q *runQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wake.Broadcast()
}

// dropQueued removes a run that has not started; it reports whether the run was waiting.
func (q *runQueue) dropQueued(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.pending, id)
	if i < 0 {
		return false
	}
	q.pending = slices.Delete(q.pending, i, i+1)
	q.finishLocked(id, store.StatusCancelled)
	return true
}

// setRunning records the cancel function of a run that a worker has started.
func (q *runQueue) setRunning(id string, cancel context.CancelCauseFunc) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancels[id] = cancel
	w, ok := q.watches[id]
	if !ok {
		w = &runWatch{changed: make(chan struct{})}
		q.watches[id] = w
	}
	w.status = store.StatusRunning
	q.notifyLocked(w)
}

// cancelRunning cancels a running run; it reports whether the run was running here.
func (q *runQueue) cancelRunning(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cancel, ok := q.cancels[id]
	if ok {
		cancel(errCancelledByUser)
	}
	return ok
}

// setProgress updates a running run's progress and wakes its followers.
func (q *runQueue) setProgress(id string, p float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w, ok := q.watches[id]; ok {
		w.progress = p
		q.notifyLocked(w)
	}
}

// finish forgets a run that ended (done, failed, cancelled or requeued at shutdown) and wakes
// its followers, who then read the final state from the store.
func (q *runQueue) finish(id, status string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.finishLocked(id, status)
}

func (q *runQueue) finishLocked(id, status string) {
	delete(q.cancels, id)
	if w, ok := q.watches[id]; ok {
		w.status = status
		close(w.changed)
		delete(q.watches, id)
	}
}

func (q *runQueue) notifyLocked(w *runWatch) {
	close(w.changed)
	w.changed = make(chan struct{})
}

// watch returns the live state of a queued or running run, or false when this process does
// not hold it (finished, or queued in the store by a process that is not running it).
func (q *runQueue) watch(id string) (watchSnapshot, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.watches[id]
	if !ok {
		return watchSnapshot{}, false
	}
	return watchSnapshot{status: w.status, progress: w.progress, changed: w.changed}, true
}
