package runs

import (
	"context"
	"sync"

	"github.com/scalein-planner/scalein/store"
)

// liveRuns is what the pages and event streams of this process need to follow the runs it is
// running itself: each has a runWatch, woken on every change. Runs queued or running in other
// processes are followed through the store (their workers save progress to the run's row).
// The queue itself is River's (queue.go).
type liveRuns struct {
	mu      sync.Mutex
	watches map[string]*runWatch
	cancels map[string]context.CancelCauseFunc
	// anyChange is closed (and replaced) when a run starts or ends here, so a stream following
	// a queued run learns at once that this process started or finished it.
	anyChange chan struct{}
}

// runWatch is the live state of one running run. changed is closed (and replaced) on every
// change, which wakes every event stream waiting on it.
type runWatch struct {
	status   string
	progress float64
	changed  chan struct{}
}

// Progress is the live state of a run this process is running, a copy safe to read without
// the lock: its status, how far it got (0 to 1), and a channel closed at its next change.
type Progress struct {
	Status   string
	Fraction float64
	Changed  <-chan struct{}
}

func newLiveRuns() *liveRuns {
	return &liveRuns{watches: map[string]*runWatch{}, cancels: map[string]context.CancelCauseFunc{}, anyChange: make(chan struct{})}
}

// setRunning records a run this process has started and its cancel function.
func (q *liveRuns) setRunning(id string, cancel context.CancelCauseFunc) {
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

// cancelRunning cancels a run running here; it reports whether it was.
func (q *liveRuns) cancelRunning(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cancel, ok := q.cancels[id]
	if ok {
		cancel(errCancelledByUser)
	}
	return ok
}

// setProgress updates a running run's progress and wakes its followers.
func (q *liveRuns) setProgress(id string, p float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w, ok := q.watches[id]; ok {
		w.progress = p
		q.notifyLocked(w)
	}
}

// finish forgets a run that ended here (done, failed, cancelled or requeued at shutdown) and
// wakes its followers, who then read the final state from the store.
func (q *liveRuns) finish(id, status string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.cancels, id)
	if w, ok := q.watches[id]; ok {
		w.status = status
		close(w.changed)
		delete(q.watches, id)
	}
	q.broadcastLocked()
}

func (q *liveRuns) broadcastLocked() {
	close(q.anyChange)
	q.anyChange = make(chan struct{})
}

// changes returns a channel closed at the next start or end of a run in this process.
func (q *liveRuns) changes() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.anyChange
}

func (q *liveRuns) notifyLocked(w *runWatch) {
	close(w.changed)
	w.changed = make(chan struct{})
}

// watch returns the live state of a run this process is running, or false.
func (q *liveRuns) watch(id string) (Progress, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.watches[id]
	if !ok {
		return Progress{}, false
	}
	return Progress{Status: w.status, Fraction: w.progress, Changed: w.changed}, true
}

// Progress returns the live state of a run this process is running, or false: runs queued or
// running elsewhere are followed through the store.
func (s *Service) Progress(id string) (Progress, bool) { return s.live.watch(id) }

// Changes returns a channel closed at the next start or end of a run in this process.
func (s *Service) Changes() <-chan struct{} { return s.live.changes() }
